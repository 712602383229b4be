// Shared by the tuned-adm and powerprofilesctl stand-ins. With EMU_TIMING_LOG set, each run appends
// a JSON line { tool, args, start, end } (ms since the epoch) when it exits, so a test can count how
// many runs a caller started and how many overlapped. A state's `delayMs` makes the daemon slow.
import { appendFileSync } from 'node:fs';

export const logRun = (tool) => {
  const start = Date.now();
  const log = process.env.EMU_TIMING_LOG;
  if (!log) return;
  process.on('exit', () =>
    appendFileSync(log, `${JSON.stringify({ tool, args: process.argv.slice(2), start, end: Date.now() })}\n`),
  );
};

export const answerSlowly = (state) => {
  if (state.delayMs) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, state.delayMs);
};
