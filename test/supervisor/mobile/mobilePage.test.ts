/**
 * /mobile in a real headless Chromium (Debian's, driven by playwright-core) at a phone's viewport,
 * over the password-protected TCP listener: log in, see the scripted fake agent's question at the
 * top of the list, answer it with its option button, cut the terminal's WebSocket mid-flood and find
 * the terminal's bytes equal to the session's raw output, answer a `ui confirm` from the page.
 * Screenshots of the list and the session view are kept in a temp dir named in the test output.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import type { Browser, BrowserContext, Page } from 'playwright-core';

import { fakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { removeDir } from '../../helpers/removeDir.js';
import { CHROMIUM, launchPhoneBrowser } from '../../helpers/phoneBrowser.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const TOKEN = 'mobile-test-token-2b7f1c0d9e';
const PASSWORD = 'correct horse battery staple';
const ESC = '\x1b';

describe('/mobile in headless Chromium', {
  skip: CHROMIUM ? false : 'chromium not installed (apt-get install -y chromium; .ci/run does)',
  timeout: 120_000,
}, () => {
  let t: Tuicd;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const scratch = mkdtempSync(join(tmpdir(), 'tuicd-mob-'));
  const shots = mkdtempSync(join(tmpdir(), 'tuicd-mobile-screens-'));
  const work = join(scratch, 'work');
  mkdirSync(work);

  before(async () => {
    // Cost 4: the test checks the login path, not bcrypt's strength.
    const password_hash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      env: { SHELL: '/bin/sh' },
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: 'phone', password_hash, session_token: TOKEN } } },
    });
    base = `http://127.0.0.1:${t.tcpPort}`;
    ({ browser, context } = await launchPhoneBrowser(scratch));
    page = await context.newPage();
  });

  after(async () => {
    await browser?.close();
    await t?.stop();
    removeDir(scratch);
  });

  const sessions = async (): Promise<Array<Record<string, any>>> => (await t.socket('GET', '/sessions')).json();
  async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const create = async (body: object = {}) => {
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', ...body }));
    assert.equal(r.status, 201, r.text);
    return r.json().session_id as string;
  };

  /** Every visible button and input is at least 44×44 CSS px. */
  async function assertTouchTargets(): Promise<void> {
    const small = await page.$$eval('button, input', (els) =>
      els
        .filter((e) => (e as any).offsetParent !== null)
        .map((e) => ({ what: e.outerHTML.slice(0, 80), r: e.getBoundingClientRect() }))
        .filter((x) => x.r.height < 44 || x.r.width < 44)
        .map((x) => `${x.what} ${x.r.width}x${x.r.height}`),
    );
    assert.deepEqual(small, [], 'touch targets under 44 px');
  }

  it('sends a stranger to the login page, refuses a wrong password, then logs in', async () => {
    const res = await page.goto(`${base}/mobile`);
    assert.ok(res);
    assert.match(page.url(), /\/mobile\/login\?next=%2Fmobile$/);
    await page.fill('input[name=username]', 'phone');
    await page.fill('input[name=password]', 'wrong');
    await page.click('button[type=submit]');
    await page.waitForSelector('#error:text("Invalid credentials")');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/mobile`);
    await page.waitForSelector('body[data-ready="1"]');
    const cookie = (await context.cookies()).find((c) => c.name === 'tui-session');
    assert.ok(cookie, 'tui-session cookie set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(await page.evaluate(() => (globalThis as any).document.cookie), '', 'the page script cannot read the cookie');
    // Installable: the service worker controls /mobile (it lives at /mobile/sw.js, allowed up by its header).
    const scope = await page.evaluate(() => (globalThis as any).navigator.serviceWorker.ready.then((r: { scope: string }) => r.scope));
    assert.equal(scope, `${base}/mobile`);
  });

  it("puts the agent's question at the top, answers it with the option button, and the agent goes on", async () => {
    // The list follows the SSE stream (the 3 s poll is only its fallback): it must be open.
    await page.waitForFunction(() => (globalThis as any).tuicdMobile.feed.live === true);
    await create(); // a plain shell, listed below the agent once it asks
    const agent = fakeAgent(
      'claude',
      [
        {
          out: `${ESC}[2J${ESC}[H⏺ Removing it.\r\n\r\n⏺ Bash(rm -r old-runner)\r\n\r\nDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No, and tell Claude what to do differently (esc)\r\n\r\nEsc to cancel · Tab to amend\r\n`,
        },
        { read: '1' },
        { out: `${ESC}[2J${ESC}[H⏺ Done: the old runner is gone.\r\n` },
        { read: 'q' },
        { exit: 0 },
      ],
      join(scratch, 'agent'),
    );
    const id = await create();
    await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: `${agent.command}\n` }));
    // The list follows /events: the agent's row rises to the top with the "needs you" badge.
    const top = page.locator('ul.sessions li').first().locator('button.session');
    await top.and(page.locator(`[data-session="${id}"][data-attention="awaiting"]`)).waitFor({ timeout: 30_000 });
    assert.match((await top.textContent()) ?? '', /needs you/);
    assert.match((await top.textContent()) ?? '', /claude/);
    await assertTouchTargets();
    await page.screenshot({ path: join(shots, 'list.png') });
    await top.tap();
    await page.waitForURL(`${base}/mobile/session/${id}`);
    const option = page.locator('.options button', { hasText: '1. Yes' });
    await option.waitFor();
    await assertTouchTargets();
    await page.screenshot({ path: join(shots, 'session.png') });
    await option.tap();
    await until(
      'the agent to read the answer',
      async () => existsSync(`${agent.scriptPath}.typed`) && readFileSync(`${agent.scriptPath}.typed`, 'utf8').includes('1'),
    );
    await until('the question to clear', async () => (await sessions()).find((s) => s.session_id === id)?.state.awaiting_input === false);
    await page.locator('.log-lines, .log-screen', { hasText: 'the old runner is gone' }).first().waitFor();
    await page.locator('.badge', { hasText: 'needs you' }).waitFor({ state: 'detached' });
    await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: 'q' }));
    process.stdout.write(`# screenshots: ${shots}\n`);
  });

  it('resumes a cut WebSocket from its offset: the terminal got every byte of the flood once', async () => {
    const id = await create();
    await page.goto(`${base}/mobile/session/${id}?view=terminal&record=1`);
    await page.waitForSelector('.xterm');
    await page.waitForFunction(() => (globalThis as any).tuicdMobile.view?.el.dataset.link === 'live');
    // The flood waits at `read` half-way until the link was cut: on a fast machine all of it would
    // otherwise arrive before the cut, and the resume would have nothing to fetch.
    await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: 'seq 1 60000; read -r _; seq 60001 150000; echo flood-done\n' }));
    // Mid-flood: once some of it arrived, the link drops; the page reconnects with ?offset= by itself.
    await page.waitForFunction(() => ((globalThis as any).tuicdMobile.view?.offset ?? 0) > 100_000);
    const cutAt = await page.evaluate(() => {
      const v = (globalThis as any).tuicdMobile.view;
      v.dropLink();
      return v.offset as number;
    });
    await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: '\n' }));
    await page.waitForFunction(() => (globalThis as any).tuicdMobile.view?.el.dataset.link === 'reconnecting');
    await page.waitForFunction(() => (globalThis as any).tuicdMobile.view?.el.dataset.link === 'live');
    const total = await until(
      'the flood to end',
      async () => {
        const row = (await sessions()).find((s) => s.session_id === id);
        const raw = (await t.socket('GET', `/sessions/${id}/output?format=raw&offset=0&limit=4000000`)).json();
        return raw.data.includes('flood-done\r\n') && row?.state.shell_state === 'idle' ? (row.total_written as number) : undefined;
      },
      60_000,
    );
    assert.ok(cutAt < total, `the cut (${cutAt}) came before the end (${total})`);
    await page.waitForFunction((n) => (globalThis as any).tuicdMobile.view?.offset === n, total, { timeout: 30_000 });
    const shown = Buffer.from(
      await page.evaluate(() => {
        const parts = (globalThis as any).tuicdMobile.view.recorded as Uint8Array[];
        let s = '';
        for (const p of parts) for (const b of p) s += String.fromCharCode(b);
        return btoa(s);
      }),
      'base64',
    );
    const raw = (await t.socket('GET', `/sessions/${id}/output?format=raw&offset=0&limit=4000000`)).json();
    assert.equal(raw.offset, 0, 'the ring still holds the whole flood');
    const expected = Buffer.from(raw.data, 'utf8');
    assert.equal(shown.length, expected.length, 'as many bytes as the session wrote');
    assert.equal(createHash('sha256').update(shown).digest('hex'), createHash('sha256').update(expected).digest('hex'), 'the same bytes, in order');
  });

  it('answers a pending ui confirm from the page', async () => {
    await page.goto(`${base}/mobile`);
    await page.waitForSelector('body[data-ready="1"]');
    const call = t.socket(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'ui', arguments: { action: 'confirm', title: 'Deploy to staging?', message: 'from the test' } },
      }),
      {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
    );
    const card = page.locator('.confirm', { hasText: 'Deploy to staging?' });
    await card.waitFor();
    await card.locator('button', { hasText: 'Allow' }).tap();
    const answer = await call;
    assert.deepEqual(JSON.parse(answer.json().result.content[0].text), { confirmed: true });
    await card.waitFor({ state: 'detached' });
  });
});
