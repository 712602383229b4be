/**
 * /docs works offline: the page loads, every script and stylesheet it references is served by the
 * app itself, and no external URL appears in the page or its start-up script. Only the allowlisted
 * swagger-ui-dist files are served; nothing else under /docs/assets reaches the filesystem.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { depsPerBlock } from '../support/fixture.ts';
import { appOver } from '../support/server.ts';

const externalUrl = /\b(?:https?:)?\/\/[A-Za-z0-9.-]+/;

describe('/docs: Swagger UI served offline', () => {
  const t = depsPerBlock();
  const app = appOver(t);

  it('loads a page whose every asset is served locally, with no external URL', async () => {
    const res = await app.request('/docs');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.match(html, /<div id="swagger-ui"><\/div>/);
    assert.doesNotMatch(html, externalUrl, 'the page references an external URL');

    const refs = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    assert.ok(refs.length >= 3, `expected the stylesheet and two scripts, got ${refs.join(', ')}`);
    for (const ref of refs) {
      assert.match(ref, /^\/docs\/assets\//, `asset outside /docs/assets: ${ref}`);
      const asset = await app.request(ref);
      assert.equal(asset.status, 200, ref);
      const type = asset.headers.get('content-type') ?? '';
      if (ref.endsWith('.css')) assert.match(type, /^text\/css/, ref);
      else assert.match(type, /^text\/javascript/, ref);
      assert.ok((await asset.arrayBuffer()).byteLength > 0, `${ref} is empty`);
    }
    assert.ok(refs.some((r) => r.endsWith('/swagger-ui-bundle.js')));
    assert.ok(refs.some((r) => r.endsWith('/swagger-ui.css')));
  });

  it('starts Swagger UI on /openapi.json without the online validator', async () => {
    const init = await (await app.request('/docs/assets/init.js')).text();
    assert.match(init, /url: '\/openapi\.json'/);
    assert.match(init, /validatorUrl: null/);
    assert.doesNotMatch(init, externalUrl);
    assert.equal((await app.request('/openapi.json')).status, 200);
  });

  it('serves only the allowlisted files', async () => {
    for (const path of [
      '/docs/assets/swagger-ui-dist/package.json',
      '/docs/assets/swagger-ui-dist/index.html',
      '/docs/assets/swagger-ui-dist/swagger-ui-bundle.js.map',
      '/docs/assets/swagger-ui-dist/..%2fpackage.json',
      '/docs/assets/swagger-ui-dist/%2e%2e%2f%2e%2e%2fpackage.json',
      '/docs/assets/swagger-ui-dist/../../../package.json',
      '/docs/assets/swagger-ui-dist/constructor',
      '/docs/assets/swagger-ui-dist/__proto__',
      '/docs/assets/other.js',
    ]) {
      const res = await app.request(path);
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/, path);
    }
  });
});
