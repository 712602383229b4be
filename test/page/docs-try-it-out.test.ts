/**
 * /docs "Try it out" in headless Chromium against `powerplan serve` on a random port: the served
 * document's server is relative, so Swagger UI calls the service that served the page (not a fixed
 * 127.0.0.1:8750), and a GET and a dry-run PUT both come back 200 through the front-door guard.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { servedProcess } from '../support/server.ts';
import { assertOnlyLoopback, openedBrowser, skip } from './browser.ts';

/** Opens one operation, presses "Try it out" (filling the body when given), executes it, returns the status shown. */
const tryItOut = async (page: Page, tag: string, operationId: string, body?: string): Promise<string> => {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  await block.locator('.opblock-summary').first().click();
  await block.locator('button.try-out__btn').click();
  if (body !== undefined) await block.locator('textarea.body-param__text').fill(body);
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout: 20_000 });
  return ((await status.textContent()) ?? '').trim();
};

describe('/docs: Try it out on a random port', { skip }, () => {
  const s = servedProcess();
  const b = openedBrowser();

  it('the document names a relative server, and Swagger UI calls the serving address: GET and dry-run PUT answer 200', async () => {
    const url = new URL(s.server.url);
    assert.notEqual(url.port, '8750');
    const doc = (await (await fetch(`${s.server.url}/openapi.json`)).json()) as {
      servers: { url: string }[];
    };
    assert.deepEqual(
      doc.servers.map((x) => x.url),
      ['/'],
    );

    const calls: { url: string; method: string; status: number }[] = [];
    b.page.on('response', (r) => {
      if (new URL(r.url()).pathname.startsWith('/v1/'))
        calls.push({ url: r.url(), method: r.request().method(), status: r.status() });
    });
    await b.page.goto(`${s.server.url}/docs`);
    await b.page.waitForSelector('#operations-plans-get_active_power_plan', { timeout: 30_000 });

    assert.equal(await tryItOut(b.page, 'plans', 'get_active_power_plan'), '200');
    assert.equal(
      await tryItOut(
        b.page,
        'plans',
        'set_power_plan',
        JSON.stringify({ plan: 'power-saver', dryRun: true }),
      ),
      '200',
    );
    const shown = await b.page
      .locator('#operations-plans-set_power_plan .live-responses-table .response .response-col_description')
      .first()
      .textContent();
    assert.match(shown ?? '', /"dryRun": true/);

    assert.deepEqual(
      calls.map((c) => [c.method, c.url, c.status]),
      [
        ['GET', `${s.server.url}/v1/plans/active`, 200],
        ['PUT', `${s.server.url}/v1/plans/active`, 200],
      ],
    );
    // The dry run changed nothing.
    const active = (await (await fetch(`${s.server.url}/v1/plans/active`)).json()) as {
      plan: { kind: string };
    };
    assert.notEqual(active.plan.kind, 'power-saver');
    assertOnlyLoopback(b.requests);
  });
});
