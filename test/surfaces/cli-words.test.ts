/**
 * What the CLI prints speaks of commands: an answer's text that names an operation (the workload
 * estimate's "run run_cpu_benchmark, then ask again") names the command that runs it; the fields
 * an answer shows keep their names there (only errors and help speak of flags).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cliCommandWords, cliWords } from '../../src/surfaces/cli/words.ts';

describe('CLI words', () => {
  it('an answer names commands, not operations, and keeps its field names', () => {
    assert.equal(
      cliCommandWords('no benchmark under the plan in force: run run_cpu_benchmark, then ask again'),
      'no benchmark under the plan in force: run powerplan bench, then ask again',
    );
    assert.equal(cliCommandWords('dryRun: true; see list_holds'), 'dryRun: true; see powerplan holds');
    assert.equal(cliCommandWords('run_cpu_benchmarks is no operation'), 'run_cpu_benchmarks is no operation');
  });

  it('an error speaks of commands and flags', () => {
    assert.equal(
      cliWords('run run_cpu_benchmark (POST /v1/benchmarks) with force: true'),
      'run powerplan bench with --force',
    );
  });
});
