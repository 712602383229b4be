import { mkdtemp } from 'node:fs/promises';
import { Hono } from 'hono';
import { loadConfig } from '/work/wt/i28/src/config.ts';
import { buildDeps } from '/work/wt/i28/src/deps.ts';
import { createApp } from '/work/wt/i28/src/surfaces/http/app.ts';
import { loadHttpSecurity } from '/work/wt/i28/src/surfaces/http/security.ts';
const dir = await mkdtemp('/tmp/i28-micro-');
const config = loadConfig({ POWERPLAN_STATE_DIR: dir, POWERPLAN_BACKEND: 'simulated', POWERPLAN_LOG_LEVEL: 'warn', POWERPLAN_PORT: '0' });
const deps = buildDeps(config);
const app = createApp(deps, await loadHttpSecurity(config, deps.log));
const body = await deps.backend.getActive();
const bare = new Hono(); bare.get('/bare', (c) => c.json(body));
const h = { host: '127.0.0.1' };
const r0 = await app.request('/v1/plans/active', { headers: h }); console.log(r0.status, (await r0.text()).slice(0, 80));
const time = async (name: string, f: () => Promise<Response>, n = 20000) => {
  for (let i = 0; i < 2000; i++) await (await f()).text();
  const t0 = process.cpuUsage(); const w0 = performance.now();
  for (let i = 0; i < n; i++) await (await f()).text();
  const c = process.cpuUsage(t0); console.log(name, ((performance.now() - w0) * 1000 / n).toFixed(1), 'us wall', ((c.user + c.system) / n).toFixed(1), 'us cpu');
};
for (let k = 0; k < 2; k++) {
  await time('bare', () => bare.request('/bare', { headers: h }));
  await time('healthz', () => app.request('/healthz', { headers: h }));
  await time('active', () => app.request('/v1/plans/active', { headers: h }));
}
deps.shutdown.abort();
