// The current screen as agents read it: GET /sessions/:id/output?format=text|log on a real tuicd, and
// the session tool's output (tail = scrollback + screen rows, delta = scrollback only) on a real pty host.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';
import { WsViewer } from '../../helpers/wsViewer.js';
import { call, idleShell, outputUntil, startHarness } from '../mcp/tools/sessionHarness.js';
import type { Harness } from '../mcp/tools/sessionHarness.js';
import { until } from '../../helpers/poll.js';

/** Built at run time so the source holds no token-shaped literal. */
const FAKE_OPENAI_KEY = ['sk', 'proj', 'Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3'].join('-');

describe('GET /sessions/:id/output, format=text and format=log (real tuicd)', () => {
  let t: Tuicd;
  let work: string;
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'tuicd-screen-'));
    t = await Tuicd.start({ env: { SHELL: '/bin/sh' } });
  });
  after(async () => {
    await t.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const get = async (id: string, query: string) => {
    const r = await t.socket('GET', `/sessions/${id}/output?${query}`);
    assert.equal(r.status, 200, r.text);
    return r.json();
  };

  it('text is one grid snapshot: rows are the unit of total_written, limit and offset; log carries the screen', async () => {
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', rows: 24, cols: 80 }));
    assert.equal(created.status, 201, created.text);
    const id = created.json().session_id as string;
    // Split literals, so the echo of the typed command never looks like the drawn screen.
    const script = `echo scrolled-''away; printf '\\033[2J\\033[H\\033[3;5Hgrid-''row-3\\033[12;1Hexport OPENAI_API_KEY=%s\\033[10;1Hrow-''ten' '${FAKE_OPENAI_KEY}'; sleep 60\n`;
    assert.equal((await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: script }))).status, 200);
    const text = await until(
      () => get(id, 'format=text'),
      (o) => String(o.data).includes('row-ten'),
      'the drawn screen',
      15_000,
    );

    const rows = String(text.data).split('\n');
    assert.equal(text.total_written, 24, 'total_written counts grid rows');
    assert.equal(rows.length, 24);
    assert.equal(text.data_length, text.data.length);
    assert.equal(rows[2], '    grid-row-3');
    assert.equal(rows[9], 'row-ten');
    assert.match(rows[11]!, /^export OPENAI_API_KEY=\[REDACTED:\w+\]$/);
    assert.equal(String(text.data).includes(FAKE_OPENAI_KEY.slice(8, 20)), false, 'the screen is redacted');
    assert.equal(rows.filter((r) => r !== '').length, 3, 'the clear wiped the echoed command and the earlier output');
    assert.deepEqual([text.cursor_row, text.cursor_col, text.alt_screen, text.offset], [9, 7, false, 0]);

    const tail = await get(id, 'format=text&limit=3');
    assert.deepEqual([tail.offset, tail.total_written, tail.data], [21, 24, '\n\n'], 'no offset: the last limit rows');
    const one = await get(id, 'format=text&offset=2&limit=1');
    assert.equal(one.data, '    grid-row-3');

    const log = await get(id, 'format=log');
    // endsWith: typed before the shell's first prompt, the output shares a line with that prompt ("$ scrolled-away").
    assert.ok(
      log.lines.some((l: { text: string }) => l.text.endsWith('scrolled-away')),
      `scrollback keeps what the clear wiped: ${JSON.stringify(log.lines)}`,
    );
    assert.equal(log.screen.length, 12, 'the screen, trimmed of its trailing empty rows');
    assert.deepEqual([log.screen[2].text, log.screen[9].text], ['    grid-row-3', 'row-ten']);
    assert.match(log.screen[11].text, /\[REDACTED:/);
    const delta = await get(id, `format=log&since_cursor=${log.total_lines}`);
    assert.equal('screen' in delta, false, 'a delta read carries no screen rows');
    assert.deepEqual(delta.lines, []);
    assert.equal((await t.socket('DELETE', `/sessions/${id}`)).status, 200);
  });

  it('a log-mode WebSocket viewer gets the screen in its log frames, again only when it changes', async () => {
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', rows: 24, cols: 80 }));
    const id = created.json().session_id as string;
    const viewer = await WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${id}/stream?format=log`));
    try {
      const screenFrames = () =>
        viewer.frames.filter((f) => f.type === 'log' && Array.isArray(f['screen'])) as unknown as Array<{ screen: Array<{ text: string }> }>;
      const showing = (needle: string) => screenFrames().some((f) => f.screen.some((r) => r.text === needle));
      await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: `printf '\\033[2J\\033[H\\033[5;3Hws-''screen-one'; sleep 60\n` }));
      await viewer.waitFor(() => showing('  ws-screen-one'), 10_000, 'the drawn screen in a log frame');
      // Unchanged screen: 200 ms polls send nothing new.
      const count = screenFrames().length;
      await new Promise((r) => setTimeout(r, 700));
      assert.equal(screenFrames().length, count, 'an unchanged screen is not re-sent');
      await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: '\u0003' }));
      await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: `printf '\\033[2J\\033[H\\033[2;1Hws-''screen-two'; sleep 60\n` }));
      await viewer.waitFor(() => showing('ws-screen-two'), 10_000, 'the redrawn screen');
    } finally {
      viewer.ws.close();
      await t.socket('DELETE', `/sessions/${id}`);
    }
  });
});

describe('session tool output: tail appends the screen, delta does not', () => {
  let h: Harness;
  before(() => {
    h = startHarness();
  });
  after(() => h.stop());

  it('tail: scrollback then the non-empty screen rows, each line once; delta: new scrollback only; a full-screen TUI shows in the tail', async () => {
    const id = await idleShell(h);
    await call(h.session, { action: 'input', session_id: id, input: `printf 'tail-%s\\n' one two three`, special_key: 'enter' });
    // Wait for the prompt after the output too: otherwise the screen read below can see a prompt the tail did not.
    const first = await outputUntil(h, id, (d) => d.includes('tail-three') && !d.trimEnd().endsWith('tail-three'), 'the printed lines and the next prompt');
    const screen = (await h.sessions.readScreen(id)).rows.filter((r) => r !== '');
    const rows = first.data.split('\n');
    assert.deepEqual(rows.slice(-screen.length), screen, 'the tail ends with the screen rows');
    for (const word of ['one', 'two', 'three']) assert.equal(rows.filter((r: string) => r === `tail-${word}`).length, 1, `tail-${word} once: ${first.data}`);

    // A full-screen program on the alternate screen: its text is only on the screen, never in the log.
    await call(h.session, {
      action: 'input',
      session_id: id,
      input: `printf '\\033[?1049h\\033[H\\033[2J\\033[5;3Hfull-''screen-tui'; read x`,
      special_key: 'enter',
    });
    const tui = await outputUntil(h, id, (d) => d.includes('full-screen-tui'), 'the TUI screen');
    assert.equal(tui.data.split('\n').at(-1), '  full-screen-tui', 'the alternate screen is the last thing a tail shows');
    assert.equal((await h.sessions.readScreen(id)).alt_screen, true);
    const delta = await call(h.session, { action: 'output', session_id: id, since_cursor: first.cursor });
    assert.equal(delta.data.includes('full-screen-tui'), false, 'delta reads exclude screen rows');
    assert.ok(delta.cursor >= first.cursor);

    await call(h.session, { action: 'input', session_id: id, special_key: 'enter' });
    await call(h.session, { action: 'input', session_id: id, input: `printf '\\033[?1049l'`, special_key: 'enter' });
    const back = await outputUntil(h, id, (d) => !d.includes('full-screen-tui'), 'the primary screen back');
    assert.ok(back.data.includes('tail-three'));
    assert.equal((await h.sessions.readScreen(id)).alt_screen, false);
  });
});
