// Every place the service is started from, with the V8 flags each gives node (the single source
// of truth is deploy/v8-flags.json) and, where it can run on this machine, the node arguments that
// start it the same way: read by test/structure/v8-flags.test.ts and perf/memory.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './serve.mjs';

const read = (rel) => readFileSync(join(repoRoot, rel), 'utf8');
const dashed = (words) => words.filter((w) => w.startsWith('--'));

const flagFile = () => JSON.parse(read('deploy/v8-flags.json'));
/** The flags every start point must carry. */
export const v8Flags = () => flagFile().flags;
/** Those of them Node.js accepts in NODE_OPTIONS (it refuses some, e.g. --no-memory-reducer). */
export const nodeOptionsFlags = () => {
  const refused = new Set(flagFile().notInNodeOptions ?? []);
  return v8Flags().filter((f) => !refused.has(f));
};

/** The Node.js options the service's executables start with: deploy/sea/sea-config.json's execArgv. */
export const serviceExecArgv = () => JSON.parse(read('deploy/sea/sea-config.json')).execArgv ?? [];

/**
 * [{ name, file, flags, expected, run }]: `expected` the flags it must carry; `run` is { command, args, env? } to start it here (from the
 * repository), or null where it needs another system (the Windows executable).
 */
export const startPoints = () => {
  const bin = join(repoRoot, 'bin', 'powerplan.js');
  const shebang = read('bin/powerplan.js').split('\n')[0];
  const start = JSON.parse(read('package.json')).scripts.start;
  const execStart = /^ExecStart=(.*)$/m.exec(read('deploy/powerplan.service'))?.[1] ?? '';
  const docker = read('Dockerfile');
  const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(docker)?.[1] ?? '[]');
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(docker)?.[1] ?? '[]');
  const winsw = read('deploy/windows/powerplan-service.xml');
  const nodeOptions = /<env name="NODE_OPTIONS" value="([^"]*)"/.exec(winsw)?.[1] ?? '';
  const sea = serviceExecArgv();
  const nodeArgs = (words) => {
    const i = words.findIndex((w) => /(^|\/)node$/.test(w));
    return words.slice(i + 1).map((w) => (w.endsWith('bin/powerplan.js') ? bin : w));
  };
  return [
    {
      name: '`powerplan serve` (the bin, its #! line)',
      file: 'bin/powerplan.js',
      flags: shebang.startsWith('#!') ? dashed(shebang.split(/\s+/)) : [],
      expected: v8Flags(),
      run: { command: bin, args: ['serve'] },
    },
    {
      name: '`npm start`',
      file: 'package.json',
      flags: dashed(start.split(/\s+/)),
      expected: v8Flags(),
      run: { command: process.execPath, args: nodeArgs(start.split(/\s+/)) },
    },
    {
      name: 'systemd unit (ExecStart)',
      file: 'deploy/powerplan.service',
      flags: dashed(execStart.split(/\s+/)),
      expected: v8Flags(),
      run: { command: process.execPath, args: nodeArgs(execStart.split(/\s+/)) },
    },
    {
      name: 'container (ENTRYPOINT + CMD)',
      file: 'Dockerfile',
      flags: dashed(entrypoint),
      expected: v8Flags(),
      run: { command: process.execPath, args: nodeArgs([...entrypoint, ...cmd]) },
    },
    {
      name: 'Windows service (WinSW NODE_OPTIONS)',
      file: 'deploy/windows/powerplan-service.xml',
      flags: nodeOptions.split(/\s+/).filter(Boolean),
      expected: nodeOptionsFlags(),
      run: { command: process.execPath, args: [bin, 'serve'], env: { NODE_OPTIONS: nodeOptions } },
    },
    {
      name: 'single executable (sea-config.json execArgv)',
      file: 'deploy/sea/sea-config.json',
      flags: sea,
      expected: v8Flags(),
      run: null,
    },
  ];
};
