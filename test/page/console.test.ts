/**
 * The status page and /docs load cleanly in headless Chromium, with and without a fleet: no console
 * error, no failed request and no answer of 400 or more (a newcomer's first look at the browser's
 * console), and both name an icon the service serves (no browser asks for a missing /favicon.ico).
 * Without a fleet the page asks no fleet route at all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { type FleetRig, fleetRig } from '../fleet/rig.ts';
import { servedInProcess } from '../support/server.ts';
import { openedBrowser, ready, skip } from './browser.ts';

/** Everything that went wrong while the page loaded: console errors, failed requests, 4xx/5xx. */
const watch = (page: Page): string[] => {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`);
  });
  page.on('requestfailed', (r) =>
    problems.push(`failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`),
  );
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return problems;
};

/** Loads `path` until the network is idle; resolves with the URLs it asked for. */
const load = async (page: Page, url: string, settled: (page: Page) => Promise<unknown>) => {
  const asked: string[] = [];
  const onRequest = (r: { url: () => string }) => asked.push(new URL(r.url()).pathname);
  page.on('request', onRequest);
  await page.goto(url);
  await settled(page);
  await page.waitForLoadState('networkidle');
  page.off('request', onRequest);
  return asked;
};

/** The page's icon: the one it names, or the /favicon.ico a browser asks otherwise; an image. */
const assertIcon = async (page: Page, base: string, named: boolean) => {
  const href = (named ? await page.getAttribute('link[rel="icon"]', 'href') : '/favicon.ico') ?? '';
  assert.ok(href?.startsWith('/'), `an icon is named: ${href}`);
  const res = await fetch(new URL(href, base));
  assert.equal(res.status, 200, href);
  assert.match(res.headers.get('content-type') ?? '', /^image\/svg\+xml/);
  assert.match(await res.text(), /^<svg /);
};

const docsReady = (page: Page) =>
  page.waitForSelector('#operations-plans-get_active_power_plan', { timeout: 30_000 });

const cases = (served: { server: { url: string } }, fleet: boolean) => {
  const b = openedBrowser();
  let problems: string[] = [];
  before(() => {
    problems = watch(b.page);
  });

  it(`the page: no console error, no failed request${fleet ? ', the fleet shown' : ', no fleet route asked'}`, async () => {
    const asked = await load(b.page, `${served.server.url}/`, ready);
    assert.ok(asked.includes('/v1/system'), asked.join(' '));
    assert.equal(
      asked.some((p) => p.startsWith('/v1/fleet/')),
      fleet,
      asked.join(' '),
    );
    assert.equal(await b.page.isVisible('#fleet-section'), fleet);
    if (fleet) await b.page.waitForSelector('#fleet-table');
    await assertIcon(b.page, served.server.url, true);
    assert.deepEqual(problems, []);
  });

  it('/docs: no console error, no failed request, an icon', async () => {
    await load(b.page, `${served.server.url}/docs`, docsReady);
    await assertIcon(b.page, served.server.url, false);
    assert.deepEqual(problems, []);
  });
};

describe('status page and /docs load cleanly', { skip }, () => {
  describe('without a fleet', () => {
    const served = servedInProcess();
    cases(served, false);
  });

  describe('with a fleet', () => {
    let rig: FleetRig;
    before(async () => {
      rig = await fleetRig(2);
    });
    after(async () => {
      await rig?.cleanup();
    });
    const served = servedInProcess({ env: () => ({ POWERPLAN_FLEET_FILE: rig.fleetFile }) });
    cases(served, true);
  });

  describe('the watch itself', () => {
    const served = servedInProcess();
    const b = openedBrowser();
    it('sees an answer of 400 or more and a console error (it is not a no-op)', async () => {
      const problems = watch(b.page);
      // No fleet here: the fleet route answers 422, as the page used to ask it on every load.
      await b.page.goto(`${served.server.url}/v1/fleet/hosts`);
      await b.page.evaluate(() => console.error('seen'));
      await b.page.waitForFunction(() => true);
      assert.ok(
        problems.some((p) => /^HTTP 422: GET .*\/v1\/fleet\/hosts$/.test(p)),
        problems.join('\n'),
      );
      assert.ok(
        problems.some((p) => p.startsWith('console error: seen')),
        problems.join('\n'),
      );
    });
  });
});
