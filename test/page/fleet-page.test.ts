/**
 * The status page's fleet view in headless Chromium, against a service whose fleet file names live
 * agents on loopback (and a dead URL, a wrong token and a silent host): the table, the tag filter,
 * the dry-run preview that changes nothing, and the confirmed switch of exactly the hosts shown.
 * The same view with the fleet from a real Prometheus scraping live agents. Also: a service without
 * a fleet shows no fleet section.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { type PrometheusRig, prometheusRig } from '../fleet/prometheus-rig.ts';
import { type FleetRig, fleetRig } from '../fleet/rig.ts';
import { readAdminToken } from '../support/processes.ts';
import { hasPrometheus } from '../support/prometheus.ts';
import { servedInProcess } from '../support/server.ts';
import { assertOnlyLoopback, openedBrowser, ready, signIn, skip } from './browser.ts';

/**
 * Opens the page signed in with the local administrator credential (switching the fleet takes
 * control) and reads the fleet table, a list of cells per host.
 */
const fleetTable = async (page: Page, served: { server: { url: string }; t: { dir: string } }) => {
  await page.goto(served.server.url);
  await ready(page);
  await signIn(page, readAdminToken(served.t.dir));
  await page.waitForSelector('#fleet-table');
  return page.$$eval('#fleet-table tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent?.trim() ?? '')),
  );
};

describe('status page: fleet view', { skip }, () => {
  let rig: FleetRig;
  before(async () => {
    rig = await fleetRig(5);
  });
  after(async () => {
    await rig?.cleanup();
  });
  const served = servedInProcess({
    env: () => ({ POWERPLAN_FLEET_FILE: rig.fleetFile, POWERPLAN_FLEET_TIMEOUT_MS: '5000' }),
  });
  const b = openedBrowser();

  const kinds = () => Promise.all(rig.agents.map(async (a) => (await a.deps.backend.getActive()).plan?.kind));

  it('shows every host with plan, kind, advice, burst penalty and drift, and the failures', async () => {
    const rows = await fleetTable(b.page, served);
    assert.equal(rows.length, 9);
    const agent1 = rows.find((r) => r[0] === 'agent1')!;
    assert.deepEqual(agent1.slice(0, 4), ['agent1', 'ok', 'Balanced', 'balanced']);
    assert.match(agent1[4]!, /^(Keep|Switch to .+)$/);
    assert.equal(agent1[5], '–', 'no benchmark yet');
    assert.equal(agent1[6], '–', 'no desired plan');
    assert.match(rows.find((r) => r[0] === 'wrongtoken')!.join(' '), /unauthorized/);
    assert.match(rows.find((r) => r[0] === 'slow')!.join(' '), /unreachable Timed out/);
    assert.match(
      (await b.page.textContent('#fleet-table caption')) ?? '',
      /9 hosts: 6 ok, 2 unreachable, 1 unauthorized/,
    );
  });

  it("marks an agent's own words (its plan name) as quoted text, and leaves ours unmarked", async () => {
    const marks = await b.page.$$eval('#fleet-table tbody tr', (trs) =>
      trs.map((tr) => ({
        host: tr.getAttribute('data-host'),
        marked: [...tr.querySelectorAll('td')].map((td) => td.classList.contains('agent-text')),
        title: tr.querySelector('td.agent-text')?.getAttribute('title') ?? '',
        quote: (() => {
          const td = tr.querySelector('td.agent-text');
          return td ? getComputedStyle(td, '::before').content : '';
        })(),
      })),
    );
    const agent1 = marks.find((m) => m.host === 'agent1')!;
    // Status, plan name, kind, advice, burst penalty, drift, checks: only the name is the agent's.
    assert.deepEqual(agent1.marked, [false, true, false, false, false, false, false]);
    assert.match(agent1.title, /agent's own words/);
    assert.equal(agent1.quote, '"\u201C"');
    // A host that timed out has no words of its own: our message, unmarked.
    assert.deepEqual(marks.find((m) => m.host === 'slow')!.marked, [false, false]);
  });

  it('filters by tag', async () => {
    await b.page.selectOption('#fleet-tag', 'web');
    await b.page.waitForFunction(() => document.querySelectorAll('#fleet-table tbody tr').length === 2);
    const names = await b.page.$$eval('#fleet-table tbody th', (ths) => ths.map((th) => th.textContent));
    assert.deepEqual(names, ['agent2', 'agent4']);
  });

  it('previews the switch of the hosts shown (changing nothing), then switches exactly those on confirmation', async () => {
    await b.page.selectOption('#fleet-plan', 'high-performance');
    await b.page.click('#fleet-preview');
    await b.page.waitForSelector('#confirm[open] #fleet-preview-table');
    const preview = await b.page.$$eval('#fleet-preview-table tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent?.trim())),
    );
    assert.deepEqual(preview, [
      ['agent2', 'would change', 'Balanced (balanced)', 'High performance (high-performance)'],
      ['agent4', 'would change', 'Balanced (balanced)', 'High performance (high-performance)'],
    ]);
    // From and To are what each agent reported: marked as its words.
    assert.deepEqual(
      await b.page.$$eval('#fleet-preview-table tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.classList.contains('agent-text'))),
      ),
      [
        [false, true, true],
        [false, true, true],
      ],
    );
    assert.deepEqual(await kinds(), ['balanced', 'balanced', 'balanced', 'balanced', 'balanced']);
    // Cancel first: still nothing changed.
    await b.page.click('#confirm-cancel');
    assert.deepEqual(await kinds(), ['balanced', 'balanced', 'balanced', 'balanced', 'balanced']);
    await b.page.click('#fleet-preview');
    await b.page.waitForSelector('#confirm[open] #fleet-preview-table');
    await b.page.click('#confirm-ok');
    await b.page.waitForSelector('#fleet-result-table');
    assert.match((await b.page.textContent('#fleet-result')) ?? '', /2 changed, 0 unchanged, 0 failed/);
    assert.deepEqual(await kinds(), [
      'balanced',
      'high-performance',
      'balanced',
      'high-performance',
      'balanced',
    ]);
    await b.page.waitForFunction(() =>
      [...document.querySelectorAll('#fleet-table tbody tr')].every((tr) =>
        tr.textContent?.includes('high-performance'),
      ),
    );
  });

  it('sent no request beyond localhost', () => assertOnlyLoopback(b.requests));
});

describe('status page: fleet view from Prometheus', {
  skip: skip || (hasPrometheus ? false : 'no prometheus'),
}, () => {
  let rig: PrometheusRig;
  before(async () => {
    rig = await prometheusRig(3);
  });
  after(async () => {
    await rig?.cleanup();
  });
  const served = servedInProcess({ env: () => ({ POWERPLAN_FLEET_FILE: rig.promFleet }) });
  const b = openedBrowser();

  it("shows the hosts Prometheus scrapes, says where the answer comes from, filters by tag and switches through Prometheus' targets", async () => {
    const rows = await fleetTable(b.page, served);
    assert.deepEqual(
      rows.map((r) => r.slice(0, 4)),
      [
        ['agent1', 'ok', 'Balanced', 'balanced'],
        ['agent2', 'ok', 'Balanced', 'balanced'],
        ['agent3', 'ok', 'Balanced', 'balanced'],
      ],
    );
    assert.match(
      (await b.page.textContent('#fleet-source')) ?? '',
      /^From Prometheus \(http:\/\/127\.0\.0\.1:\d+\), as last scraped/,
    );
    await b.page.selectOption('#fleet-tag', 'web');
    await b.page.waitForFunction(() => document.querySelectorAll('#fleet-table tbody tr').length === 1);
    await b.page.selectOption('#fleet-plan', 'high-performance');
    await b.page.click('#fleet-preview');
    await b.page.waitForSelector('#confirm[open] #fleet-preview-table');
    assert.equal(
      (await rig.agents[1]!.t.deps.backend.getActive()).plan?.kind,
      'balanced',
      'the preview changed nothing',
    );
    await b.page.click('#confirm-ok');
    await b.page.waitForSelector('#fleet-result-table');
    assert.match((await b.page.textContent('#fleet-result')) ?? '', /1 changed, 0 unchanged, 0 failed/);
    assert.equal((await rig.agents[1]!.t.deps.backend.getActive()).plan?.kind, 'high-performance');
    assert.equal((await rig.agents[0]!.t.deps.backend.getActive()).plan?.kind, 'balanced');
  });

  it('sent no request beyond localhost', () => assertOnlyLoopback(b.requests));
});

describe('status page without a fleet', { skip }, () => {
  const served = servedInProcess();
  const b = openedBrowser();

  it('shows no fleet section', async () => {
    await b.page.goto(served.server.url);
    await ready(b.page);
    assert.equal(await b.page.isHidden('#fleet-section'), true);
    assert.equal(await b.page.textContent('#errors'), '');
  });
});
