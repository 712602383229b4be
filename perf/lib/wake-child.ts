/**
 * Runs the product's wake-up probe in this process and prints its raw samples as JSON: started by
 * perf/wakeup.ts under `taskset`, so the probe runs on the same CPU as the reference it is checked
 * against. Argument: {"gapsUs": [...], "rounds": n}.
 */
import { runWakeProbe } from '../../src/bench/runner.ts';

const { gapsUs, rounds } = JSON.parse(process.argv[2] ?? '{}') as { gapsUs: number[]; rounds: number };
process.stdout.write(`${JSON.stringify(await runWakeProbe({ gapsUs, rounds }))}\n`);
