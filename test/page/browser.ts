/**
 * Headless Chromium for the page tests (Debian's chromium driven by playwright-core): a fresh
 * profile per browser, every request recorded, page errors failing the test.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { perBlock } from '../support/fixture.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const present = existsSync(CHROMIUM);
export const inCi = process.env.CI === 'true';
export const skip =
  !present && !inCi ? `${CHROMIUM} is missing (apt-get install chromium); the page tests are skipped` : false;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for, whether or not it was answered. */
  requests: string[];
  close: () => Promise<void>;
}

export const openBrowser = async (viewport = { width: 1100, height: 900 }): Promise<Browser> => {
  const profile = await mkdtemp(join(tmpdir(), 'powerplan-chromium-'));
  // launchPersistentContext gives Chromium this fresh profile as its --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const requests: string[] = [];
  context.on('request', (r) => requests.push(r.url()));
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return {
    context,
    page,
    requests,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
      assert.deepEqual(errors, [], 'the page threw');
    },
  };
};

export const assertOnlyLoopback = (requests: string[]) => {
  assert.ok(requests.length > 5, `the page made its API calls (${requests.length})`);
  for (const url of requests) {
    const u = new URL(url);
    if (u.protocol === 'data:') continue;
    assert.ok(['http:', 'https:', 'ws:'].includes(u.protocol), `unexpected request ${url}`);
    assert.ok(LOOPBACK.has(u.hostname), `a request left localhost: ${url}`);
  }
};

export const ready = (page: Page) => page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });

/**
 * A browser for the tests of one describe block: opened before them, closed after them. Its `page`
 * and `requests` are there once the `before` hook has run.
 */
export const openedBrowser = (viewport?: { width: number; height: number }): Browser =>
  perBlock(
    () => openBrowser(viewport),
    (b) => b.close(),
  );

/**
 * Signs the page in with a token through "Sign in with a token" (offered to a caller without a
 * token, who may only read), e.g. the local administrator credential; waits for the reloaded page.
 */
export const signIn = async (page: Page, token: string): Promise<void> => {
  await page.click('#sign-in');
  await page.locator('dialog#token[open]').waitFor();
  await page.fill('#token-input', token);
  await page.click('#token-ok');
  await page.waitForFunction(() => document.querySelector('#whoami')?.textContent?.includes('Signed in'));
  await ready(page);
};
