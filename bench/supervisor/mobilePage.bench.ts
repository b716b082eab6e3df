/**
 * The /mobile page in headless Chromium (issue 18), against a real tuicd over TCP:
 * - question → list row: a scripted fake agent asks (a choice prompt) on cue; the time from the cue
 *   to the page's list showing the row as "needs you" (SSE path), against the same
 *   `session-state-changed` read by a bare SSE client in this process in the same iterations;
 * - first load: bytes on the wire (encoded) and time to interactive (the list rendered from its
 *   first fetch) in a fresh browser context, against loading /process/monitor the same way.
 * Both clocks are the machine's wall clock (performance.timeOrigin + now()), shared by browser and Node.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';

import { failedRow, median, row, type BenchContext, type BenchRow } from '../harness.js';
import { fakeAgent } from '../../test/fixtures/fakeAgent/fakeAgentLauncher.js';
import { browserEnv } from '../../test/helpers/testHome.js';
import { Tuicd } from '../../test/helpers/tuicdProcess.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const TOKEN = 'bench-mobile-token-1f2e3d4c';
const ESC = '\x1b';
const QUESTIONS = 30;
const QUESTIONS_QUICK = 8;
const GROUP_LATENCY = 'question → list row (SSE)';
const GROUP_LOAD = 'first load (fresh context)';
/** Each question differs (the parser reports a prompt it already reported only once). */
const prompt = (i: number) =>
  `${ESC}[2J${ESC}[H⏺ Bash(rm -r old-runner-${i})\r\n\r\nDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No, and tell Claude what to do differently (esc)\r\n\r\nEsc to cancel · Tab to amend\r\n`;
const DONE = `${ESC}[2J${ESC}[H⏺ Done.\r\n\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n`;

const now = () => performance.timeOrigin + performance.now();

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** A bare SSE reader of /events over TCP: the wall-clock time each awaiting-input edge arrived, per session. */
class BareSse {
  readonly arrivals: number[] = [];
  awaiting = false;
  /** `choice-cleared` parser events seen: the agent's screen without the prompt was parsed. */
  cleared = 0;
  private buf = '';
  private constructor(private readonly sessionId: string) {}

  static open(port: number, sessionId: string): Promise<BareSse> {
    const s = new BareSse(sessionId);
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: `/events?types=session-state-changed,pty-parsed&token=${TOKEN}`, agent: false }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (d: string) => s.feed(d));
        resolve(s);
      });
      req.on('error', reject);
      req.end();
    });
  }

  private feed(d: string): void {
    this.buf += d;
    let end: number;
    while ((end = this.buf.indexOf('\n\n')) >= 0) {
      const block = this.buf.slice(0, end);
      this.buf = this.buf.slice(end + 2);
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (!data) continue;
      const ev = JSON.parse(data) as { session_id: string; state?: { awaiting_input?: boolean; choice_prompt?: unknown }; parsed?: { type: string } };
      if (ev.session_id !== this.sessionId) continue;
      if (ev.parsed) {
        if (ev.parsed.type === 'choice-cleared') this.cleared++;
        continue;
      }
      if (!ev.state) continue;
      const awaiting = ev.state.awaiting_input === true || ev.state.choice_prompt !== undefined;
      if (awaiting && !this.awaiting) this.arrivals.push(now());
      this.awaiting = awaiting;
    }
  }
}

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function latencyRun(t: Tuicd, browser: Browser, scratch: string, questions: number): Promise<{ page: number[]; sse: number[] }> {
  const steps: unknown[] = [{ out: DONE }];
  for (let i = 0; i < questions + 1; i++) steps.push({ read: '2' }, { out: prompt(i) }, { read: '1' }, { out: DONE });
  const agent = fakeAgent('claude', steps, mkdtempSync(join(scratch, 'agent-')));
  const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: scratch, shell: '/bin/sh' }));
  const id = created.json().session_id as string;
  const write = (data: string) => t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data }));
  await write(`${agent.command}\n`);
  const sse = await BareSse.open(t.tcpPort!, id);
  const context = await browser.newContext({ viewport: { width: 360, height: 640 }, isMobile: true });
  const page = await context.newPage();
  try {
    await page.goto(`http://127.0.0.1:${t.tcpPort}/mobile?token=${TOKEN}`);
    await page.waitForSelector('body[data-ready="1"]');
    // The page notes when the row turns "needs you", on its own (shared) wall clock.
    await page.evaluate((sid) => {
      const g = globalThis as any;
      g.benchSeen = [] as number[];
      let was = false;
      new g.MutationObserver(() => {
        const on = g.document.querySelector(`button.session[data-session="${sid}"][data-attention="awaiting"]`) !== null;
        if (on && !was) g.benchSeen.push(g.performance.timeOrigin + g.performance.now());
        was = on;
      }).observe(g.document.body, { subtree: true, childList: true, attributes: true });
    }, id);
    // The agent takes its terminal into raw mode before its first output: keys typed earlier could sit in the line buffer.
    await until('the agent to start', async () =>
      ((await t.socket('GET', '/sessions')).json() as Array<{ session_id: string; state: { agent_type?: string } }>).some(
        (s) => s.session_id === id && s.state.agent_type === 'claude',
      ),
    );
    await until('its first screen', async () => (await t.socket('GET', `/sessions/${id}/output?format=raw&limit=100000`)).json().data.includes('Done.'));
    const pageLat: number[] = [];
    const sseLat: number[] = [];
    // One warm-up question, then the measured ones.
    for (let i = 0; i <= questions; i++) {
      const seenBefore = (await page.evaluate(() => (globalThis as any).benchSeen.length)) as number;
      const sseBefore = sse.arrivals.length;
      const cue = now();
      await write('2');
      await until('the SSE client to see the question', () => sse.arrivals.length > sseBefore);
      await page.waitForFunction((n) => (globalThis as any).benchSeen.length > n, seenBefore);
      const seen = (await page.evaluate((n) => (globalThis as any).benchSeen[n], seenBefore)) as number;
      if (i > 0) {
        pageLat.push(seen - cue);
        sseLat.push(sse.arrivals[sseBefore]! - cue);
      }
      const clearedBefore = sse.cleared;
      await write('1');
      // The next question only counts as new once the parser saw a screen without this one.
      await until('the question to clear', () => !sse.awaiting && sse.cleared > clearedBefore);
    }
    return { page: pageLat, sse: sseLat };
  } finally {
    await context.close();
    await t.socket('DELETE', `/sessions/${id}`);
  }
}

async function loadRun(browser: Browser, url: string, ready: string): Promise<{ bytes: number; ms: number }> {
  const context = await browser.newContext({ viewport: { width: 360, height: 640 }, isMobile: true, serviceWorkers: 'block' });
  const page: Page = await context.newPage();
  const sizes: Array<Promise<number>> = [];
  page.on('requestfinished', (req) => sizes.push(req.sizes().then((s) => s.responseBodySize + s.responseHeadersSize)));
  try {
    const start = Date.now();
    await page.goto(url);
    await page.waitForSelector(ready);
    const ms = Date.now() - start;
    // Everything fetched until interactive: HTML, JS, CSS, manifest, icon and its first API answers (the SSE stream, still open, is not counted).
    const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
    return { bytes, ms };
  } finally {
    await context.close();
  }
}

export async function run(ctx: BenchContext): Promise<BenchRow[]> {
  if (!CHROMIUM) return [failedRow(GROUP_LATENCY, '/mobile page', ctx, 'ms', 'chromium not installed (apt-get install -y chromium)')];
  const scratch = mkdtempSync(join(tmpdir(), 'tuicd-bench-mob-'));
  mkdirSync(join(scratch, 'b'));
  const t = await Tuicd.start({
    env: { SHELL: '/bin/sh' },
    config: { services: { server: { enabled: true, port: 0 }, auth: { username: 'u', session_token: TOKEN } } },
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    env: browserEnv(join(scratch, 'b')),
  });
  try {
    const questions = ctx.quick ? QUESTIONS_QUICK : QUESTIONS;
    const p50 = { page: [] as number[], sse: [] as number[] };
    const p99 = { page: [] as number[], sse: [] as number[] };
    const loads = { mobile: [] as Array<{ bytes: number; ms: number }>, monitor: [] as Array<{ bytes: number; ms: number }> };
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      const r = await latencyRun(t, browser, scratch, questions);
      p50.page.push(percentile(r.page, 50));
      p50.sse.push(percentile(r.sse, 50));
      p99.page.push(percentile(r.page, 99));
      p99.sse.push(percentile(r.sse, 99));
      loads.monitor.push(await loadRun(browser, `http://127.0.0.1:${t.tcpPort}/process/monitor?token=${TOKEN}`, 'tr.tuicd'));
      loads.mobile.push(await loadRun(browser, `http://127.0.0.1:${t.tcpPort}/mobile?token=${TOKEN}`, 'body[data-ready="1"]'));
    }
    const sse50 = { name: 'bare SSE client', median: median(p50.sse) };
    const sse99 = { name: 'bare SSE client', median: median(p99.sse) };
    const monitorMs = { name: '/process/monitor', median: median(loads.monitor.map((l) => l.ms)) };
    const monitorBytes = { name: '/process/monitor', median: median(loads.monitor.map((l) => l.bytes)) };
    return [
      row(`${GROUP_LATENCY} p50`, 'bare SSE client', ctx, 'ms', p50.sse),
      row(`${GROUP_LATENCY} p50`, '/mobile page', ctx, 'ms', p50.page, sse50),
      row(`${GROUP_LATENCY} p99`, 'bare SSE client', ctx, 'ms', p99.sse),
      row(`${GROUP_LATENCY} p99`, '/mobile page', ctx, 'ms', p99.page, sse99),
      row(
        `${GROUP_LOAD} time to interactive`,
        '/process/monitor',
        ctx,
        'ms',
        loads.monitor.map((l) => l.ms),
      ),
      row(
        `${GROUP_LOAD} time to interactive`,
        '/mobile',
        ctx,
        'ms',
        loads.mobile.map((l) => l.ms),
        monitorMs,
      ),
      row(
        `${GROUP_LOAD} bytes on the wire`,
        '/process/monitor',
        ctx,
        'bytes',
        loads.monitor.map((l) => l.bytes),
      ),
      row(
        `${GROUP_LOAD} bytes on the wire`,
        '/mobile',
        ctx,
        'bytes',
        loads.mobile.map((l) => l.bytes),
        monitorBytes,
      ),
    ];
  } finally {
    await browser.close();
    await t.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}
