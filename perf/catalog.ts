/**
 * The size of the MCP catalog (`tools/list`), with a fleet (every tool) and without one, and the
 * part a model is shown (name, description, input schema) per tool; with --before DIR, the same
 * for an earlier checkout in the same run. Sizes, not timings: they do not drift with the load.
 *
 *   npm run perf:catalog -- [--before DIR]
 *
 * Goals: tools/list <= 64 KB in all; the part shown <= 1.5 KB per tool on average.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { perfArgs } from './lib/args.ts';
import { footer, header, verdict } from './lib/machine.ts';
import { repoRoot } from './lib/processes.ts';

const { values } = perfArgs(import.meta.filename, { options: { before: { type: 'string' } } });
const trees = [
  { label: 'after', root: repoRoot },
  ...(values.before ? [{ label: 'before', root: values.before }] : []),
];

header('MCP catalog size (tools/list), with and without a fleet');
const dir = await mkdtemp(join(tmpdir(), 'powerplan-bench-catalog-'));
const fleetFile = join(dir, 'fleet.json');
await writeFile(fleetFile, JSON.stringify({ hosts: [{ name: 'db1', url: 'http://127.0.0.1:9' }] }));
await chmod(fleetFile, 0o600);

interface ToolEntry {
  name: string;
  description: string;
  inputSchema: unknown;
  outputSchema?: unknown;
}
const measure = async (root: string, fleet: boolean) => {
  const src = (p: string) => import(join(root, 'src', p));
  const [{ loadConfig }, { buildDeps }, { mcpFactory }] = await Promise.all([
    src('config.ts'),
    src('deps.ts'),
    src('surfaces/mcp/server.ts'),
  ]);
  const deps = buildDeps(
    loadConfig({
      POWERPLAN_BACKEND: 'simulated',
      POWERPLAN_LOG_LEVEL: 'silent',
      POWERPLAN_STATE_DIR: join(dir, 'state'),
      ...(fleet ? { POWERPLAN_FLEET_FILE: fleetFile } : {}),
    }),
  );
  const json: string = mcpFactory(deps).toolListJson();
  await deps.stop();
  const tools = (JSON.parse(json) as { tools: ToolEntry[] }).tools;
  const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v ?? {}));
  const shown = tools.map((t) =>
    size({ name: t.name, description: t.description, inputSchema: t.inputSchema }),
  );
  const largest = tools
    .map((t) => ({ name: t.name, out: size(t.outputSchema) }))
    .sort((a, b) => b.out - a.out)[0]!;
  return {
    bytes: Buffer.byteLength(json),
    tools: tools.length,
    output: tools.reduce((a, t) => a + size(t.outputSchema), 0),
    shownAverage: shown.reduce((a, b) => a + b, 0) / tools.length,
    largest,
  };
};

console.log(
  '| version | fleet | tools | tools/list KB | output schemas KB | largest output schema | shown per tool KB (avg) | goal (<= 64 KB, <= 1.5 KB) |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const fleet of [true, false])
  for (const t of trees) {
    const m = await measure(t.root, fleet);
    const kb = (n: number) => (n / 1024).toFixed(1);
    console.log(
      `| ${t.label} | ${fleet ? 'yes' : 'no'} | ${m.tools} | ${kb(m.bytes)} | ${kb(m.output)} | ${m.largest.name} ${kb(m.largest.out)} KB | ${kb(m.shownAverage)} | ${verdict(m.bytes / 1024, 64, ' KB')}; ${verdict(m.shownAverage / 1024, 1.5, ' KB')} |`,
    );
  }
await rm(dir, { recursive: true, force: true });
footer();
process.exit(0);
