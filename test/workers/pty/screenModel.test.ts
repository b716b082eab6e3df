/** The current screen: ScreenModel over an output ring, and readScreen through the pty host with real shells. */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { OutputRing } from '../../../workers/pty/outputRing.js';
import { ScreenConstants, ScreenModel } from '../../../workers/pty/screenModel.js';
import { type PtyHostHandle, sleep, startPtyHost, waitFor } from './ptyHostHarness.js';

/** Built at run time so the source holds no token-shaped literal. */
const FAKE_GITHUB_TOKEN = `ghp_${'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5'}`;
const FAKE_OPENAI_KEY = ['sk', 'proj', 'Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3'].join('-');

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('ScreenModel over an output ring', () => {
  test('feeds only new bytes; replays from scratch once the ring overwrote bytes it never saw', () => {
    const ring = new OutputRing(256);
    const model = new ScreenModel(ring, 3, 20);
    ring.append(enc('a\r\nb\r\n'));
    assert.deepEqual(model.snapshot().rows, ['a', 'b', '']);
    ring.append(enc('c'));
    assert.deepEqual(model.snapshot().rows, ['a', 'b', 'c']);
    assert.equal(model.replayCount, 1, 'the second read only fed the new byte');
    for (let i = 0; i < 60; i++) ring.append(enc(`\r\nline-${i}`));
    assert.ok(ring.oldestOffset > 7, 'the ring dropped what the grid had seen');
    const s = model.snapshot();
    assert.equal(model.replayCount, 2, 'rebuilt from what the ring still holds');
    assert.deepEqual(s.rows, ['line-57', 'line-58', 'line-59']);
    assert.deepEqual([s.cursor_row, s.cursor_col, s.alt_screen, s.rows_count, s.cols], [2, 7, false, 3, 20]);
    model.dispose();
  });

  test('a glance far behind the output draws the screen from the last GLANCE_BYTES alone and leaves the held grid as it was', () => {
    const ring = new OutputRing(PtyConstants.OUTPUT_RING_BYTES);
    let bytesRead = 0;
    const source = {
      get totalWritten() {
        return ring.totalWritten;
      },
      get oldestOffset() {
        return ring.oldestOffset;
      },
      read: (o: Parameters<OutputRing['read']>[0]) => {
        const r = ring.read(o);
        bytesRead += r.bytes.length;
        return r;
      },
    };
    const model = new ScreenModel(source, 3, 20);
    ring.append(enc('\x1b[1;1Hstart'));
    assert.deepEqual(model.snapshot({ glance: true }).rows, ['start', '', ''], 'a little unseen output: the held grid takes it');
    assert.equal(model.replayCount, 1);
    let i = 0;
    while (ring.totalWritten < 3 * ScreenConstants.GLANCE_BYTES) ring.append(enc(`\r\nline-${i++}`));
    bytesRead = 0;
    const glance = model.snapshot({ glance: true });
    assert.ok(bytesRead <= ScreenConstants.GLANCE_BYTES, `the glance read ${bytesRead} bytes`);
    assert.deepEqual(glance.rows, [`line-${i - 3}`, `line-${i - 2}`, `line-${i - 1}`]);
    assert.equal(model.replayCount, 1, 'the held grid was neither fed nor rebuilt');
    bytesRead = 0;
    const full = model.snapshot();
    assert.equal(bytesRead, ring.totalWritten - 'start'.length - 6, 'a full read still feeds the held grid every byte it has not seen');
    assert.deepEqual(full.rows, glance.rows);
    assert.deepEqual([full.cursor_row, full.cursor_col], [glance.cursor_row, glance.cursor_col]);
    model.dispose();
  });

  test('an unchanged screen is rendered once: repeated reads share it until output or a resize', () => {
    const ring = new OutputRing(1024);
    const model = new ScreenModel(ring, 2, 10);
    ring.append(enc('one'));
    const first = model.snapshot();
    assert.equal(model.snapshot(), first, 'no new bytes: the same render');
    ring.append(enc('!'));
    const second = model.snapshot();
    assert.notEqual(second, first);
    assert.deepEqual(second.rows, ['one!', '']);
    model.resize(2, 6);
    const resized = model.snapshot();
    assert.notEqual(resized, second, 'a resize renders again');
    assert.equal(resized.cols, 6);
    model.dispose();
  });

  test('a grid unread for the idle time is dropped; the next read rebuilds the same screen', async () => {
    const ring = new OutputRing(1024);
    const model = new ScreenModel(ring, 2, 10, { idleDropMs: 30 });
    assert.equal(model.active, false, 'nothing is parsed before the first read');
    ring.append(enc('\x1b[2;4Hhere'));
    const first = model.snapshot();
    assert.equal(model.active, true);
    await waitFor(
      () => !model.active,
      5_000,
      () => 'the idle grid was never dropped',
    );
    assert.deepEqual(model.snapshot(), first);
    assert.equal(model.replayCount, 2);
    model.dispose();
  });

  test('a resize reaches a held grid after the output drawn at the old size', () => {
    const ring = new OutputRing(1024);
    const model = new ScreenModel(ring, 3, 10);
    ring.append(enc('x'.repeat(15)));
    assert.deepEqual(model.snapshot().rows, ['x'.repeat(10), 'x'.repeat(5), '']);
    model.resize(3, 30);
    ring.append(enc(`\r\n${'y'.repeat(25)}`));
    const s = model.snapshot();
    assert.deepEqual([s.cols, s.rows_count], [30, 3]);
    assert.deepEqual(s.rows, ['x'.repeat(10), 'x'.repeat(5), 'y'.repeat(25)]);
    model.dispose();
  });

  test('rows are redacted, a token the terminal wrapped at the margin included', () => {
    const ring = new OutputRing(1024);
    const model = new ScreenModel(ring, 4, 30);
    ring.append(enc(`token is ${FAKE_GITHUB_TOKEN} ok\r\nplain row\r\n`));
    const { rows } = model.snapshot();
    assert.match(rows[0]!, /^token is \[REDACTED:github_\w+\]$/, 'the marker is not cut across rows');
    assert.equal(rows[1], ' ok', 'the rest of the wrapped line stays on its row');
    assert.equal(rows.includes('plain row'), true);
    for (let i = 0; i + 8 <= FAKE_GITHUB_TOKEN.length; i++) {
      assert.equal(rows.join('\n').includes(FAKE_GITHUB_TOKEN.slice(i, i + 8)), false, `a piece of the token leaked: ${JSON.stringify(rows)}`);
    }
    model.dispose();
  });
});

describe('pty host: readScreen with real shells', () => {
  let host: PtyHostHandle;
  before(async () => {
    host = await startPtyHost();
  });
  after(() => host.stop());

  const screen = (id: string) => host.client.request('readScreen', { session_id: id });
  const type = (id: string, text: string) => host.client.request('write', { session_id: id }, { payload: enc(text) });

  test('a full-screen redraw: clear, then text placed by CUP', async () => {
    const script = `printf 'old text\\nmore\\n'; printf '\\033[2J\\033[H'; printf '\\033[3;5Htop-left\\033[10;20Hmiddle\\033[24;70Hbottom'`;
    const { id } = await host.spawnSession({ args: ['-c', script] });
    await host.waitForExit(id);
    const s = await screen(id);
    const expected = Array.from({ length: 24 }, () => '');
    expected[2] = '    top-left';
    expected[9] = `${' '.repeat(19)}middle`;
    expected[23] = `${' '.repeat(69)}bottom`;
    assert.deepEqual(s.rows, expected);
    assert.deepEqual([s.cursor_row, s.cursor_col, s.alt_screen, s.rows_count, s.cols], [23, 75, false, 24, 80]);
  });

  test('a progress line overwritten with CR shows its final text', async () => {
    const script = `printf 'step 1/3 [#   ]\\rstep 2/3 [##  ]\\rstep 3/3 [###]\\033[K done\\n'; printf 'loading.....\\rok\\n'`;
    const { id } = await host.spawnSession({ args: ['-c', script] });
    await host.waitForExit(id);
    const { rows } = await screen(id);
    assert.deepEqual(rows.slice(0, 3), ['step 3/3 [###] done', 'okading.....', '']);
  });

  test('the alternate screen is reported while active; the primary screen comes back after rmcup', async () => {
    const { id } = await host.spawnSession();
    await host.waitForText(id, '$ ');
    // Split literals: the echo of the typed command must not look like the output.
    await type(id, `printf 'primary-''line\\n'; printf '\\033[?1049h\\033[2;3Halt-''content'; read x; printf '\\033[?1049l'\r`);
    await host.waitForText(id, 'alt-content');
    const alt = await screen(id);
    assert.equal(alt.alt_screen, true);
    assert.equal(alt.rows[1], '  alt-content');
    assert.equal(
      alt.rows.some((r) => r.includes('primary-line')),
      false,
      'the primary screen is hidden',
    );
    assert.deepEqual([alt.cursor_row, alt.cursor_col], [1, 13]);
    await type(id, '\r');
    let back = await screen(id);
    const deadline = Date.now() + 10_000;
    while ((back.alt_screen || !back.rows.some((r) => r === '$')) && Date.now() < deadline) {
      await sleep(20);
      back = await screen(id);
    }
    assert.equal(back.alt_screen, false);
    assert.ok(back.rows.includes('primary-line'), JSON.stringify(back.rows));
    assert.equal(
      back.rows.some((r) => r.includes('alt-content')),
      false,
    );
    await host.client.request('kill', { session_id: id });
    await host.waitForExit(id);
  });

  test('a resize changes the row width, with and without a grid held', async () => {
    const { id } = await host.spawnSession({ cols: 40 });
    await host.waitForText(id, '$ ');
    await type(id, `printf '%060d\\n' 7\r`);
    await host.waitForText(id, `${'0'.repeat(59)}7`);
    const narrow = await screen(id);
    assert.ok(narrow.rows.includes(`${'0'.repeat(40)}`) && narrow.rows.includes(`${'0'.repeat(19)}7`), JSON.stringify(narrow.rows));
    await host.client.request('resize', { session_id: id, rows: 24, cols: 100 });
    await type(id, `printf '%090d\\n' 8\r`);
    await host.waitForText(id, `${'0'.repeat(89)}8`);
    const wide = await screen(id);
    assert.equal(wide.cols, 100);
    assert.ok(wide.rows.includes(`${'0'.repeat(89)}8`), `90 columns fit in one row: ${JSON.stringify(wide.rows)}`);

    const fresh = await host.spawnSession({ cols: 40 });
    await host.waitForText(fresh.id, '$ ');
    await host.client.request('resize', { session_id: fresh.id, rows: 10, cols: 120 });
    const unread = await screen(fresh.id);
    assert.deepEqual([unread.cols, unread.rows_count], [120, 10], 'a grid built after the resize has the new size');
    for (const s of [id, fresh.id]) await host.client.request('kill', { session_id: s });
  });

  test('a secret printed on screen is redacted in the rows, wrapped or not', async () => {
    const script = `printf 'export OPENAI_API_KEY=%s\\n' '${FAKE_OPENAI_KEY}'; printf 'xxxxxxxxxxxxxxxxxxxxxxxxx token ${FAKE_GITHUB_TOKEN}\\n'`;
    const { id } = await host.spawnSession({ args: ['-c', script], cols: 40 });
    const out = await host.waitForExit(id);
    assert.equal(out.exit_code, 0);
    const { rows } = await screen(id);
    const all = rows.join('\n');
    assert.match(all, /OPENAI_API_KEY=\[REDACTED:/);
    assert.match(all, /token \[REDACTED:github_\w+\]/);
    for (const secret of [FAKE_OPENAI_KEY, FAKE_GITHUB_TOKEN]) {
      for (let i = 0; i + 8 <= secret.length; i++) assert.equal(all.includes(secret.slice(i, i + 8)), false, `leaked ${secret.slice(i, i + 8)}: ${all}`);
    }
    // The raw ring is the terminal itself: not redacted (it never goes to agents as text).
    const raw = await host.client.requestWithPayload('readRaw', { session_id: id });
    assert.ok(Buffer.from(raw.payload!).toString().includes(FAKE_GITHUB_TOKEN));
  });

  test('a session printing more than the ring holds still yields the right final screen', async () => {
    const { id } = await host.spawnSession();
    await host.waitForText(id, '$ ');
    const early = await screen(id); // builds the grid while the ring is nearly empty
    assert.equal(early.rows[0], '$');
    await type(id, 'seq 1 400000\r');
    await host.waitForText(id, '400000\r\n$ ', 60_000);
    const raw = await host.client.requestWithPayload('readRaw', { session_id: id, limit: 1 });
    assert.ok(raw.result.total_written > PtyConstants.OUTPUT_RING_BYTES, 'more output than the ring holds');
    const s = await screen(id);
    const expected = Array.from({ length: 22 }, (_, i) => String(399_979 + i));
    assert.deepEqual(s.rows, ['399978', ...expected, '$']);
    assert.deepEqual([s.cursor_row, s.cursor_col], [23, 2]);
    await host.client.request('kill', { session_id: id });
    await host.waitForExit(id);
  });
});
