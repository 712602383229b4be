#!/usr/bin/env node
// A stand-in for powerprofilesctl in tests, driven by a JSON state file (PPD_EMU_STATE) and printing
// what the real tool prints (test/fixtures/linux-ppd, old format before 0.20 and new format). Every
// argv is appended as a JSON line to PPD_EMU_LOG (default: <state file>.argv.jsonl).
// State: { daemon: "running" | "stopped", format: "old" | "new", authorized: true, active: "name",
//          profiles: [{ name, cpuDriver, platformDriver, degraded }], busy: false,
//          action: "org.freedesktop.UPower.PowerProfiles.switch-profile" }
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { answerSlowly, logRun } from './run-log.mjs';

logRun('powerprofilesctl');

const statePath = process.env.PPD_EMU_STATE;
if (!statePath) {
  process.stderr.write('powerprofilesctl emulator: PPD_EMU_STATE is not set\n');
  process.exit(2);
}
const args = process.argv.slice(2);
appendFileSync(process.env.PPD_EMU_LOG ?? `${statePath}.argv.jsonl`, `${JSON.stringify(args)}\n`);
const state = JSON.parse(readFileSync(statePath, 'utf8'));
answerSlowly(state);
const out = (s) => process.stdout.write(s);
const fail = (detail) => {
  // The prefix and the GError text are as captured in canonical/checkbox#1656 and
  // Rongronggg9/power-profiles-daemon#4; the ServiceUnknown text (daemon not running) is the
  // standard D-Bus error, not a capture.
  process.stderr.write(`Failed to communicate with power-profiles-daemon: ${detail}\n`);
  process.exit(1);
};
if (state.daemon === 'stopped') {
  fail(
    'g-dbus-error-quark: GDBus.Error:org.freedesktop.DBus.Error.ServiceUnknown: The name net.hadess.PowerProfiles was not provided by any .service files (2)',
  );
}

// Profiles are printed performance first; "Degraded:" only under performance.
const list = () => {
  const blocks = state.profiles.map((p) => {
    const lines = [`${p.name === state.active ? '*' : ' '} ${p.name}:`];
    if (state.format === 'old') {
      lines.push(`    Driver:     ${p.cpuDriver ?? p.platformDriver}`);
    } else {
      if (p.cpuDriver) lines.push(`    CpuDriver:\t${p.cpuDriver}`);
      if (p.platformDriver) lines.push(`    PlatformDriver:\t${p.platformDriver}`);
    }
    if (p.name === 'performance') lines.push(`    Degraded:   ${p.degraded ? `yes (${p.degraded})` : 'no'}`);
    return lines.join('\n');
  });
  out(`${blocks.join('\n\n')}\n`);
};

const command = args[0] ?? 'list';
if (command === 'list') list();
else if (command === 'get') out(`${state.active}\n`);
else if (command === 'set') {
  const name = args[1];
  if (state.authorized === false) {
    fail(
      `g-dbus-error-quark: GDBus.Error:org.freedesktop.DBus.Error.AccessDenied: Not Authorized: ${state.action ?? 'org.freedesktop.UPower.PowerProfiles.switch-profile'} (9)`,
    );
  }
  if (!state.profiles.some((p) => p.name === name)) {
    // Not captured: the wording of the daemon's answer to an unknown profile is a stand-in.
    fail(
      `g-dbus-error-quark: GDBus.Error:org.freedesktop.DBus.Error.InvalidArgs: Invalid profile name '${name}' (16)`,
    );
  }
  if (state.busy) {
    fail(
      "g-io-error-quark: GDBus.Error:org.gtk.GDBus.UnmappedGError.Quark._g_2dio_2derror_2dquark.Code26: Failed to activate CPU driver 'intel_pstate': Error writing '/sys/devices/system/cpu/cpufreq/policy1/energy_performance_preference': Device or resource busy (26)",
    );
  }
  writeFileSync(statePath, JSON.stringify({ ...state, active: name }, null, 2));
} else {
  process.stderr.write(
    `usage: powerprofilesctl [-h] [--version] {get,set,list,list-holds,launch,list-actions,configure-action} ...\n`,
  );
  process.exit(2);
}
