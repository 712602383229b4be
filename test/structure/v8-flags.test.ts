/**
 * Every place the service is started gives node the same V8 flags (docs/PERFORMANCE.md, "V8
 * flags"): `npm start`, the systemd unit, the container, the Windows service and the single
 * executable. A start that loses them runs with V8's defaults (110-140 MiB under load).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/deps.ts';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
const v8Flags = (words: readonly string[]) => words.filter((w) => /^--max-(semi|old)-space-size=/.test(w));

test('npm start, the systemd unit, the container, the Windows service and the executable agree on the V8 flags', () => {
  const npmStart = v8Flags(JSON.parse(read('package.json')).scripts.start.split(/\s+/));
  assert.ok(
    npmStart.some((f) => f.startsWith('--max-semi-space-size=')),
    `npm start: ${npmStart}`,
  );
  assert.ok(
    npmStart.some((f) => f.startsWith('--max-old-space-size=')),
    `npm start: ${npmStart}`,
  );

  const unit = /^ExecStart=(.*)$/m.exec(read('deploy/powerplan.service'))?.[1] ?? '';
  const docker = /^ENTRYPOINT (\[.*\])$/m.exec(read('Dockerfile'))?.[1] ?? '[]';
  const winsw =
    /<env name="NODE_OPTIONS" value="([^"]*)"/.exec(read('deploy/windows/powerplan-service.xml'))?.[1] ?? '';
  const sea = JSON.parse(read('deploy/sea/sea-config.json')).execArgv ?? [];
  const places: Record<string, string[]> = {
    'deploy/powerplan.service ExecStart': v8Flags(unit.split(/\s+/)),
    'Dockerfile ENTRYPOINT': v8Flags(JSON.parse(docker)),
    'deploy/windows/powerplan-service.xml NODE_OPTIONS': v8Flags(winsw.split(/\s+/)),
    'deploy/sea/sea-config.json execArgv': v8Flags(sea),
  };
  for (const [where, flags] of Object.entries(places)) assert.deepEqual(flags, npmStart, where);
});
