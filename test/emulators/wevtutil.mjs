#!/usr/bin/env node
// A wevtutil.exe emulator for tests, usable as POWERPLAN_WEVTUTIL: answers
// `wevtutil qe System /q:<query> /c:<n> /rd:true /f:xml` with the Kernel-Processor-Power events of
// the state file shared with powercfg.mjs (`events`, or the file named by `eventsFile`), and
// "Access is denied." with exit code 5 when `wevtutilFails` is set. Every argv is logged.
import { readFileSync } from 'node:fs';
import { answer, loadState, logArgv } from './win-emu-state.mjs';

logArgv('wevtutil');
const state = loadState();
const [command, log] = process.argv.slice(2);
if (state.wevtutilFails) {
  await answer(state, { stderr: ['Failed to read events. Access is denied.'], code: 5 });
} else if (command?.toLowerCase() !== 'qe' || log?.toLowerCase() !== 'system') {
  await answer(state, { stderr: ['The parameter is incorrect.'], code: 87 });
} else {
  const text = state.eventsFile ? readFileSync(state.eventsFile, 'utf8') : (state.events ?? '');
  await answer(state, { stdout: text ? text.split(/\r?\n/) : [] });
}
