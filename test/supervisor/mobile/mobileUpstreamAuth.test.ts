/**
 * /mobile lists upstream MCP servers waiting for an OAuth authorization and authorizes them, in a
 * real headless Chromium at a phone's viewport over the password-protected TCP listener, against
 * real authorization servers (test/fixtures/upstreams/oauthUpstream.ts):
 * - Authorize opens the authorization page in a new tab; the authorization server sends that tab
 *   back to tuicd's own GET /oauth/callback, and the card goes away when the upstream is ready;
 * - a flow whose browser cannot come back by itself (the loopback callback) is finished by pasting
 *   the address the browser ended on into the card.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import type { Browser, BrowserContext, Page } from 'playwright-core';

import { OAuthUpstream } from '../../fixtures/upstreams/oauthUpstream.js';
import { waitFor } from '../../helpers/poll.js';
import { removeDir } from '../../helpers/removeDir.js';
import { CHROMIUM, launchPhoneBrowser } from '../../helpers/phoneBrowser.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { httpServer, writeUpstreams } from '../../helpers/upstreamServers.js';

const PASSWORD = 'phone oauth password';

describe('/mobile authorizes OAuth upstreams', {
  skip: CHROMIUM ? false : 'chromium not installed (apt-get install -y chromium; .ci/run does)',
  timeout: 120_000,
}, () => {
  let t: Tuicd;
  let byButton: OAuthUpstream;
  let byPaste: OAuthUpstream;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const scratch = mkdtempSync(join(tmpdir(), 'tuicd-mob-oauth-'));

  const statusOf = async (name: string) =>
    ((await t.socket('GET', '/mcp/upstream-status')).json().upstreams as Array<{ name: string; status: string }>).find((r) => r.name === name)!.status;

  before(async () => {
    byButton = await OAuthUpstream.start();
    byPaste = await OAuthUpstream.start();
    writeUpstreams(scratch, [httpServer('button', byButton.mcpUrl), httpServer('paste', byPaste.mcpUrl)]);
    const password_hash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      configDir: scratch,
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: 'phone', password_hash, session_token: 'mobile-oauth-token-5d1e9a7c3b' } } },
    });
    base = `http://127.0.0.1:${t.tcpPort}`;
    ({ browser, context } = await launchPhoneBrowser(scratch));
    page = await context.newPage();
    await page.goto(`${base}/mobile`);
    await page.fill('input[name=username]', 'phone');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/mobile`);
    await page.waitForSelector('body[data-ready="1"]');
  });

  after(async () => {
    await browser?.close();
    await t?.stop();
    await byButton?.stop();
    await byPaste?.stop();
    removeDir(scratch);
  });

  it('lists both upstreams as waiting; Authorize opens the authorization page, which comes back to tuicd, and the card goes', async () => {
    await waitFor(async () => (await statusOf('button')) === 'needs_auth' && (await statusOf('paste')) === 'needs_auth', 'both needs_auth', 15_000);
    const card = page.locator('[data-upstream="button"]');
    await card.waitFor({ timeout: 15_000 });
    assert.match((await card.textContent()) ?? '', /button needs authorization/);
    const [popup] = await Promise.all([context.waitForEvent('page'), card.locator('button', { hasText: 'Authorize' }).click()]);
    await popup.waitForLoadState('load');
    await waitFor(async () => /Authorized/.test(await popup.content()), 'the callback page in the new tab', 15_000);
    assert.ok(popup.url().startsWith(`${base}/oauth/callback?`), popup.url());
    await waitFor(async () => (await statusOf('button')) === 'ready', 'button ready', 15_000);
    await card.waitFor({ state: 'detached', timeout: 15_000 });
    await popup.close();
  });

  it('a flow that cannot come back by itself is finished by pasting the address into the card', async () => {
    // Started elsewhere (the loopback callback on tuicd's machine): the card shows the paste box.
    const started = await t.socket('POST', '/mcp/upstreams/oauth/start', JSON.stringify({ name: 'paste' }), { 'content-type': 'application/json' });
    assert.equal(started.status, 200, started.text);
    const card = page.locator('[data-upstream="paste"]');
    const input = card.locator('input[type=url]');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    // The phone's browser followed the authorization server to an address on 127.0.0.1 it cannot open.
    const res = await fetch(started.json().authorization_url, { redirect: 'manual' });
    await input.fill(res.headers.get('location')!);
    await card.locator('button', { hasText: 'Finish' }).click();
    await waitFor(async () => (await statusOf('paste')) === 'ready', 'paste ready', 15_000);
    await card.waitFor({ state: 'detached', timeout: 15_000 });
  });
});
