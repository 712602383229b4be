#!/usr/bin/env node
// A reg.exe emulator for tests, usable as POWERPLAN_REG: answers `reg query <key> [/v <name>]` for
// the keys the Windows backend reads (group policy ActivePowerScheme, OEMCP, firmware vendor) from
// the same state file as powercfg.mjs, in reg's layout (4-space columns, CRLF). A missing key or
// value exits with 1, as reg does.
import { answer, loadState, logArgv } from './win-emu-state.mjs';

logArgv('reg');
const state = loadState();
const [command, key = '', flag, name] = process.argv.slice(2);

const dword = (n) => ['REG_DWORD', `0x${(n >>> 0).toString(16)}`];
const keys = {
  ...Object.fromEntries(
    Object.entries(state.policySettings ?? {}).map(([guid, [ac, dc]]) => [
      `HKLM\\SOFTWARE\\Policies\\Microsoft\\Power\\PowerSettings\\${guid}`,
      { ACSettingIndex: dword(ac), DCSettingIndex: dword(dc) },
    ]),
  ),
  'HKLM\\SOFTWARE\\Policies\\Microsoft\\Power\\PowerSettings': state.policy
    ? { ActivePowerScheme: ['REG_SZ', state.policy] }
    : null,
  'HKLM\\SYSTEM\\CurrentControlSet\\Control\\Nls\\CodePage': {
    ACP: ['REG_SZ', '1252'],
    OEMCP: ['REG_SZ', String(state.oemcp ?? state.codepage)],
  },
  'HKLM\\HARDWARE\\DESCRIPTION\\System\\BIOS': Object.fromEntries(
    Object.entries(state.firmware ?? {}).map(([k, v]) => [k, ['REG_SZ', v]]),
  ),
};

const values = command?.toLowerCase() === 'query' ? keys[key] : undefined;
const selected =
  values && flag?.toLowerCase() === '/v' ? (values[name] ? { [name]: values[name] } : null) : values;
if (!selected) {
  await answer(
    { codepage: 437 },
    { stderr: ['ERROR: The system was unable to find the specified registry key or value.'], code: 1 },
  );
} else {
  const long = key.replace(/^HKLM\\/, 'HKEY_LOCAL_MACHINE\\');
  await answer(
    { codepage: 437 },
    {
      stdout: [
        '',
        long,
        ...Object.entries(selected).map(([n, [type, data]]) => `    ${n}    ${type}    ${data}`),
        '',
      ],
    },
  );
}
