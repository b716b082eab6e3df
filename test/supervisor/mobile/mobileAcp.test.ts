/**
 * /mobile's ACP view in a real headless Chromium at a phone's viewport, over the password-protected
 * TCP listener, driving the scripted ACP agent (written with the SDK's agent side; a real ACP agent
 * needs a paid model): start it from the page, prompt, answer its permission question with a tap,
 * cancel a slow turn, find the conversation again after a reload, and resume a cut stream with
 * every frame once.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';

import { scriptedAgentExecutable } from '../../fixtures/acp/scriptedAgentLauncher.js';
import { CHROMIUM, launchPhoneBrowser } from '../../helpers/phoneBrowser.js';
import { removeDir } from '../../helpers/removeDir.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const PASSWORD = 'correct horse battery staple';

describe('/mobile ACP view in headless Chromium', {
  skip: CHROMIUM ? false : 'chromium not installed (apt-get install -y chromium; .ci/run does)',
  timeout: 120_000,
}, () => {
  let t: Tuicd;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let connectionId = '';
  const scratch = mkdtempSync(join(tmpdir(), 'tuicd-mobacp-'));
  const shots = mkdtempSync(join(tmpdir(), 'tuicd-mobile-acp-screens-'));
  const work = join(scratch, 'work');
  mkdirSync(work);
  const agent = scriptedAgentExecutable();

  before(async () => {
    const password_hash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      config: {
        ego_executable: agent.path,
        services: { server: { enabled: true, port: 0 }, auth: { username: 'phone', password_hash, session_token: 'mobile-acp-test-token-5d1e' } },
      },
    });
    base = `http://127.0.0.1:${t.tcpPort}`;
    ({ browser, context } = await launchPhoneBrowser(scratch));
    page = await context.newPage();
    await page.goto(`${base}/mobile`);
    await page.fill('input[name=username]', 'phone');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/mobile`);
    try {
      await page.waitForSelector('body[data-ready="1"]');
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${page.url()}\n${(await page.content()).slice(0, 3000)}`);
    }
  });

  after(async () => {
    await browser?.close();
    await t?.stop();
    removeDir(scratch);
    removeDir(agent.dir);
  });

  /** Every visible button, input and text area is at least 44×44 CSS px. */
  async function assertTouchTargets(): Promise<void> {
    const small = await page.$$eval('button, input, textarea, select', (els) =>
      els
        .filter((e) => (e as any).offsetParent !== null)
        .map((e) => ({ what: e.outerHTML.slice(0, 80), r: e.getBoundingClientRect() }))
        .filter((x) => x.r.height < 44 || x.r.width < 44)
        .map((x) => `${x.what} ${x.r.width}x${x.r.height}`),
    );
    assert.deepEqual(small, [], 'touch targets under 44 px');
  }

  const texts = (selector: string): Promise<string[]> => page.$$eval(selector, (els) => els.map((e) => (e.textContent ?? '').trim()));

  async function prompt(text: string): Promise<void> {
    await page.fill('textarea.acp-input', text);
    await page.locator('form.acp-composer button[type=submit]').tap();
  }

  it('starts the agent from the page and shows a turn as one merged message', async () => {
    await page.locator('header button', { hasText: 'Agents' }).tap();
    await page.waitForURL(`${base}/mobile/acp`);
    await page.fill('input[name=root]', work);
    await page.locator('button', { hasText: 'Start agent' }).tap();
    await page.waitForURL(/\/mobile\/acp\/[^/?]+$/);
    connectionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await page.waitForSelector('main.acp[data-ready="1"][data-connection="ready"]');
    assert.equal(await page.locator('main.acp h1').textContent(), 'scripted-agent');

    await prompt('chunks 3');
    await page.locator('.turn-end', { hasText: 'Done' }).waitFor();
    assert.deepEqual(await texts('.msg.user'), ['chunks 3'], 'the prompt once, though the agent echoes it');
    assert.deepEqual(await texts('.msg.agent'), ['chunk 1chunk 2chunk 3']);
    assert.match(page.url(), /\?session=s-/, 'the session is in the address, for a reload');
    await assertTouchTargets();
  });

  it("answers the agent's permission question with a tap, and the turn goes on", async () => {
    await prompt('permission');
    const allow = page.locator('.acp-question button[data-option="allow"]');
    await allow.waitFor();
    assert.match((await page.locator('.acp-question').textContent()) ?? '', /Delete build\//);
    await assertTouchTargets();
    await page.screenshot({ path: join(shots, 'acp-permission.png') });
    await allow.tap();
    await page.locator('.msg.agent', { hasText: 'selected:allow' }).waitFor();
    await page.locator('.acp-question').waitFor({ state: 'detached' });
    const pending = (await t.socket('GET', `/acp/connections/${connectionId}/interactions`)).json() as { interactions: unknown[] };
    assert.deepEqual(pending.interactions, [], 'answered on the server, not just hidden');
  });

  it('cancels a slow turn from the page', async () => {
    await prompt('slow');
    await page.waitForSelector('main.acp[data-turn="running"]');
    await page.locator('form.acp-composer button', { hasText: 'Cancel' }).tap();
    await page.locator('.turn-end', { hasText: 'Stopped: cancelled' }).waitFor();
    await page.waitForSelector('main.acp[data-turn="idle"]');
  });

  it('shows the same conversation after a reload', async () => {
    const before = { user: await texts('.msg.user'), agent: await texts('.msg.agent'), ends: await texts('.turn-end') };
    await page.reload();
    await page.waitForSelector('main.acp[data-ready="1"]');
    await page.locator('.turn-end', { hasText: 'Stopped: cancelled' }).waitFor();
    assert.deepEqual({ user: await texts('.msg.user'), agent: await texts('.msg.agent'), ends: await texts('.turn-end') }, before);
    assert.deepEqual(before.user, ['chunks 3', 'permission', 'slow']);
    await page.screenshot({ path: join(shots, 'acp-after-reload.png') });
  });

  it('resumes a cut stream after its last seq: what came meanwhile shows once', async () => {
    const cutAt = await page.evaluate(() => {
      const v = (globalThis as any).tuicdMobile.acp;
      v.dropLink();
      return v.lastSeq as number;
    });
    const sessionId = new URL(page.url()).searchParams.get('session');
    assert.ok(sessionId);
    // A turn while the phone is away, prompted from elsewhere.
    const started = await t.socket(
      'POST',
      `/acp/connections/${connectionId}/sessions/${sessionId}/prompt`,
      JSON.stringify({ prompt: [{ type: 'text', text: 'chunks 4' }] }),
    );
    assert.equal(started.status, 202, started.text);
    await page.locator('.msg.agent', { hasText: 'chunk 1chunk 2chunk 3chunk 4' }).waitFor();
    await page.waitForSelector('main.acp[data-link="live"]');
    const snapshot = (await t.socket('GET', `/acp/connections/${connectionId}`)).json() as { lastSeq: number };
    await page.waitForFunction((n) => (globalThis as any).tuicdMobile.acp.lastSeq === n, snapshot.lastSeq);
    assert.ok(snapshot.lastSeq > cutAt);
    assert.deepEqual(await texts('.msg.user'), ['chunks 3', 'permission', 'slow', 'chunks 4'], 'no turn shown twice or missing');
  });

  it('opens a connection whose journal has dropped its oldest frames: live, with the dropped part marked', async () => {
    const sessionId = new URL(page.url()).searchParams.get('session');
    // More frames than the journal keeps (10,000).
    const started = await t.socket(
      'POST',
      `/acp/connections/${connectionId}/sessions/${sessionId}/prompt`,
      JSON.stringify({ prompt: [{ type: 'text', text: 'chunks 10200' }] }),
    );
    assert.equal(started.status, 202, started.text);
    for (const end = Date.now() + 60_000; ; ) {
      const snap = (await t.socket('GET', `/acp/connections/${connectionId}`)).json() as { firstSeq: number; sessions: Array<{ turnId: string | null }> };
      if (snap.firstSeq > 1 && snap.sessions.every((x) => x.turnId === null)) break;
      if (Date.now() > end) throw new Error('the long turn did not end');
      await new Promise((r) => setTimeout(r, 200));
    }
    await page.reload();
    await page.waitForSelector('main.acp[data-ready="1"][data-link="live"]');
    await page.locator('.notice', { hasText: 'Earlier updates are no longer kept' }).waitFor();
    await page.locator('.msg.agent', { hasText: 'chunk 10200' }).waitFor();
    process.stdout.write(`# screenshots: ${shots}\n`);
  });

  it('keeps a remembered agent through a network failure or a 5xx, and forgets it on a 404', async () => {
    const snapshotPath = `/acp/connections/${connectionId}`;
    const isSnapshot = (url: URL) => url.pathname === snapshotPath;
    const remembered = () =>
      page.evaluate(() => (JSON.parse((globalThis as any).localStorage.getItem('tuicd.acp.connections') ?? '[]') as Array<{ id: string }>).map((r) => r.id));
    const openList = async () => {
      await page.goto(`${base}/mobile/acp`);
      await page.waitForSelector('ul[aria-label="Agents started earlier"][data-loaded="1"]', { state: 'attached' });
    };
    assert.deepEqual(await remembered(), [connectionId], 'started from this phone');
    const failures: Array<[string, (route: Route) => Promise<void>]> = [
      ['no network', (route) => route.abort('internetdisconnected')],
      ['a 503', (route) => route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":"restarting","code":"unavailable"}' })],
    ];
    for (const [what, fail] of failures) {
      await page.route(isSnapshot, fail);
      await openList();
      await page.unroute(isSnapshot);
      assert.deepEqual(await remembered(), [connectionId], `kept through ${what}`);
      assert.deepEqual(await texts('ul[aria-label="Agents started earlier"] .badge'), ['unreachable'], what);
    }
    await openList();
    assert.deepEqual(await texts('ul[aria-label="Agents started earlier"] .badge'), ['ready'], 'listed again once tuicd answers');
    assert.equal((await t.socket('DELETE', snapshotPath)).status, 200);
    await openList();
    assert.deepEqual(await remembered(), [], 'a 404: forgotten');
    assert.deepEqual(await texts('ul[aria-label="Agents started earlier"] li'), []);
  });
});
