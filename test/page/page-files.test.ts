/**
 * The status page's files without a browser: the page and its modules served from a fixed list
 * under a strict content security policy, and every module type-checked against API types
 * generated from the committed OpenAPI document.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot } from '../support/deps.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { appOver } from '../support/server.ts';

const run = promisify(execFile);
const pageDir = join(repoRoot, 'src', 'surfaces', 'http', 'page');

describe('status page files', () => {
  const app = appOver(depsPerBlock());

  it('serves the page and its assets from a fixed list, with a strict content security policy', async () => {
    const res = await app.request('/');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'self'/);
    assert.doesNotMatch(await res.text(), /class="embed"/);
    assert.match(await (await app.request('/?embed=1')).text(), /<html lang="en" class="embed">/);
    // Every module and the style sheet in the page folder: a module missing from the served list
    // would break the page only in a browser.
    const files = (await readdir(pageDir)).filter((f) => /\.(js|css)$/.test(f));
    assert.ok(files.length >= 10, files.join(', '));
    for (const name of files) {
      const res = await app.request(`/page/${name}`);
      assert.equal(res.status, 200, name);
      assert.match(res.headers.get('content-type') ?? '', name.endsWith('.js') ? /javascript/ : /text\/css/);
    }
    for (const path of [
      '/page/index.html',
      '/page/..%2Fpage.ts',
      '/page/../page.ts',
      '/page/nothing.js',
      '/page/',
    ])
      assert.equal((await app.request(path)).status, 404, path);
  });

  it('every module opts into type checking, with API types generated from the committed OpenAPI document', async () => {
    for (const name of (await readdir(pageDir)).filter((f) => f.endsWith('.js')))
      assert.match(
        await readFile(join(pageDir, name), 'utf8'),
        /^\/\/ @ts-check\n/,
        `${name} starts with // @ts-check`,
      );
    const cli = join(repoRoot, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
    const { stdout } = await run(process.execPath, [cli, join(repoRoot, 'openapi', 'openapi.json')], {
      maxBuffer: 16 * 1024 * 1024,
    });
    assert.ok(stdout.includes('ActivePlan: {'), 'the generator wrote the schemas');
    assert.equal(
      await readFile(join(repoRoot, 'openapi', 'api-types.d.ts'), 'utf8'),
      stdout,
      'openapi/api-types.d.ts is older than openapi/openapi.json (run `npm run openapi:write`)',
    );
  });
});
