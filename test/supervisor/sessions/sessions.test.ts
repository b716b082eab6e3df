// Terminal sessions end to end: a real tuicd, its real pty host, real shells, REST and WebSocket viewers.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

import { sessionSuite } from '../../helpers/sessionSuite.js';
import type { SseClient } from '../../helpers/sseClient.js';
import type { Tuicd } from '../../helpers/tuicdProcess.js';
import { WsViewer } from '../../helpers/wsViewer.js';

async function waitUntil<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('terminal sessions', () => {
  const ctx = sessionSuite('tuicd-sessions-');
  const { create, write, raw } = ctx;
  let t: Tuicd;
  let sse: SseClient;
  let work: string;
  before(() => ({ t, sse, work } = ctx));

  it('creates a session, runs a command and reads the output back raw and as log lines', async () => {
    const repo = join(work, 'tuicommander');
    mkdirSync(repo);
    const s = await create({ cwd: repo });
    assert.match(s.session_id, /^[0-9a-f-]{36}$/);
    assert.match(s.alias, /^tu-\d+$/, 'a session in tuicommander gets the tu- prefix');
    assert.equal((await write(s.session_id, 'echo "hel""lo-$((6*7))"\n')).status, 200);
    const out = await waitUntil(
      () => raw(s.session_id),
      (o) => String(o.data).includes('hello-42'),
      10_000,
      'echo output',
    );
    assert.ok(out.total_written >= out.data_length);
    const log = await waitUntil(
      async () => (await t.socket('GET', `/sessions/${s.session_id}/output?format=log`)).json(),
      (l) => l.lines.some((x: { text: string }) => x.text.includes('hello-42')),
      10_000,
      'log line',
    );
    assert.equal(typeof log.total_lines, 'number');
    assert.ok(
      log.lines.every((x: { text: string }) => !x.text.includes('\x1b')),
      'log lines carry no escape sequences',
    );
    await sse.waitFor((e) => e.event === 'session-created' && JSON.parse(e.data).session_id === s.session_id);
    await sse.waitFor((e) => e.event === 'term-alias-assigned' && JSON.parse(e.data).alias === s.alias);
  });

  it('resolves all three address forms: id, alias and tuic_session', async () => {
    const s = await create({ tuic_session: 'agent-identity-7' });
    for (const ref of [s.session_id, s.alias, 'agent-identity-7']) {
      const r = await t.socket('GET', `/sessions/${encodeURIComponent(ref)}/shell-state`);
      assert.equal(r.status, 200, `${ref}: ${r.text}`);
    }
    const fam = await t.socket('GET', `/sessions/${s.alias}/shell-family`);
    assert.equal(fam.text, '"posix"');
    assert.equal((await t.socket('GET', '/sessions/no-such-session/shell-family')).text, 'null');
    await write('agent-identity-7', 'echo "id=$TUIC_SESSION term=$TERM"\n');
    await waitUntil(
      () => raw(s.session_id),
      (o) => String(o.data).includes('id=agent-identity-7 term=xterm-256color'),
      10_000,
      'env',
    );
  });

  it('runs sessions at nice +10 so busy agents never starve the server', async () => {
    const s = await create();
    const info = ((await t.socket('GET', '/sessions')).json() as Array<{ session_id: string; pid: number }>).find((x) => x.session_id === s.session_id)!;
    const stat = readFileSync(`/proc/${info.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    assert.equal(Number(fields[16]), 10, 'field 19 of /proc/<pid>/stat is the nice value');
  });

  it('resizes the terminal so stty sees it', async () => {
    const s = await create();
    assert.equal((await t.socket('POST', `/sessions/${s.session_id}/resize`, JSON.stringify({ rows: 33, cols: 101 }))).status, 200);
    await write(s.session_id, 'stty size\n');
    await waitUntil(
      () => raw(s.session_id),
      (o) => String(o.data).includes('33 101'),
      10_000,
      'stty size',
    );
  });

  it('refuses bad input with a 400 that says what is wrong', async () => {
    const bad = await t.socket('POST', '/sessions', JSON.stringify({ rows: 0, cwd: work }));
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json(), { error: 'rows must be between 1 and 500, got 0', code: 'invalid_input', field: 'rows', in: 'body' });
    const big = await t.socket('POST', '/sessions', JSON.stringify({ cols: 501, cwd: work }));
    assert.equal(big.json().error, 'cols must be between 1 and 500, got 501');
    const missing = await t.socket('POST', '/sessions', JSON.stringify({ cwd: join(work, 'nope') }));
    assert.equal(missing.status, 400);
    assert.match(missing.json().error, /^Working directory does not exist/);
    assert.equal(missing.json().code, 'invalid_input');
    const file = join(work, 'a-file');
    writeFileSync(file, 'x');
    assert.match((await t.socket('POST', '/sessions', JSON.stringify({ cwd: file }))).json().error, /not a directory/);
    const live = await create();
    const noRows = await t.socket('POST', `/sessions/${live.session_id}/resize`, JSON.stringify({ cols: 80 }));
    assert.equal(noRows.status, 400);
    assert.deepEqual(noRows.json(), { error: 'rows is required', code: 'invalid_input', field: 'rows', in: 'body' });
    const unknown = await t.socket('POST', '/sessions/does-not-exist/write', JSON.stringify({ data: 'x' }));
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json(), { error: 'Session not found', code: 'not_found' });
  });

  it('keeps an exited session readable with its exit code (tombstone), and says so on /events', async () => {
    const s = await create();
    await write(s.session_id, 'echo bye-now; exit 7\n');
    const closed = await sse.waitFor((e) => e.event === 'session-closed' && JSON.parse(e.data).session_id === s.session_id);
    assert.equal(JSON.parse(closed.data).reason, 'exit');
    const out = await raw(s.session_id);
    assert.match(String(out.data), /bye-now/);
    assert.equal(out.exit_code, 7);
    const list = (await t.socket('GET', '/sessions')).json() as Array<{ session_id: string }>;
    assert.ok(!list.some((x) => x.session_id === s.session_id), 'exited sessions leave the list');
    await sse.waitFor((e) => e.event === 'pty-exit' && JSON.parse(e.data).session_id === s.session_id);
  });

  it('pause holds output back and resume lets it through', async () => {
    const s = await create();
    await write(s.session_id, 'echo ready-1\n');
    await waitUntil(
      () => raw(s.session_id),
      (o) => String(o.data).includes('ready-1'),
      10_000,
      'ready',
    );
    assert.equal((await t.socket('POST', `/sessions/${s.session_id}/pause`)).status, 200);
    await write(s.session_id, 'echo after-$((1+1))-pause\n');
    await new Promise((r) => setTimeout(r, 400));
    assert.ok(!String((await raw(s.session_id)).data).includes('after-2-pause'), 'paused output is held');
    assert.equal((await t.socket('POST', `/sessions/${s.session_id}/resume`)).status, 200);
    await waitUntil(
      () => raw(s.session_id),
      (o) => String(o.data).includes('after-2-pause'),
      10_000,
      'resumed output',
    );
  });

  it('streams to WebSocket viewers: catch-up then live, and typing through the socket reaches the shell', async () => {
    const s = await create();
    await write(s.session_id, 'echo before-viewer\n');
    await waitUntil(
      () => raw(s.session_id),
      (o) => String(o.data).includes('before-viewer'),
      10_000,
      'first output',
    );
    const v = await WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${s.session_id}/stream`));
    try {
      await v.waitFor(() => v.text().includes('before-viewer'), 10_000, 'catch-up');
      v.ws.send('echo typed-$((40+2))\n');
      await v.waitFor(() => v.text().includes('typed-42'), 10_000, 'live echo');
      assert.ok(
        v.frames.some((f) => f.type === 'output' && typeof f['total_written'] === 'number'),
        'catch-up frames carry total_written',
      );
    } finally {
      v.close();
    }
    // The viewer is gone; the shell is not.
    await write(s.session_id, 'echo still-alive\n');
    await waitUntil(
      () => raw(s.session_id),
      (o) => String(o.data).includes('still-alive'),
      10_000,
      'shell outlives its viewer',
    );
  });

  it('refuses a stream for an unknown session with 404 before upgrading', async () => {
    await assert.rejects(WsViewer.open(WsViewer.socketUrl(t.socketPath, '/sessions/nope/stream')), /404/);
  });

  it('delivers a 1 MB burst byte-exact to three viewers, and ?offset= resumes without gap or duplicate', async () => {
    const s = await create();
    const viewers = await Promise.all([0, 1, 2].map(() => WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${s.session_id}/stream?encoding=binary`))));
    try {
      // 1,000,000 bytes of a known pattern, then a marker; `stty -onlcr` keeps the bytes as written.
      await write(s.session_id, 'stty -echo -onlcr; awk \'BEGIN{for(i=0;i<20000;i++) printf "%049d\\n", i}\'; echo END-OF-$((1+1))-BURST\n');
      const expected = Array.from({ length: 20000 }, (_, i) => String(i).padStart(49, '0') + '\n').join('');
      for (const v of viewers) await v.waitFor(() => v.text().includes('END-OF-2-BURST'), 30_000, 'burst');
      for (const v of viewers) {
        const text = v.text();
        const start = text.indexOf('0'.repeat(49) + '\n');
        assert.ok(start >= 0, 'burst start found');
        assert.equal(text.slice(start, start + expected.length), expected, 'byte-exact');
      }
      const total = Buffer.concat(viewers[0]!.bytes).length;
      const resumeAt = Math.floor(total / 2);
      const late = await WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${s.session_id}/stream?encoding=binary&offset=${resumeAt}`));
      try {
        await late.waitFor(() => late.text().includes('END-OF-2-BURST'), 30_000, 'resume');
        const got = Buffer.concat(late.bytes);
        const reference = Buffer.concat(viewers[0]!.bytes).subarray(resumeAt);
        const n = Math.min(got.length, reference.length);
        assert.ok(n > 400_000, `resumed stream is long enough (${n})`);
        assert.ok(got.subarray(0, n).equals(reference.subarray(0, n)), 'the resumed stream starts exactly at the offset');
      } finally {
        late.close();
      }
    } finally {
      for (const v of viewers) v.close();
    }
  });
  it('a viewer that stops reading never stalls the shell or the others, and gets every byte once it reads again', async () => {
    const s = await create();
    const viewers = await Promise.all([0, 1].map(() => WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${s.session_id}/stream?encoding=binary`))));
    const [stalled, reading] = viewers as [WsViewer, WsViewer];
    try {
      stalled.ws.pause();
      await write(s.session_id, 'stty -echo -onlcr; awk \'BEGIN{for(i=0;i<30000;i++) printf "%049d\\n", i}\'; echo STALL-$((3*3))-DONE\n');
      await reading.waitFor(() => reading.text().includes('STALL-9-DONE'), 30_000, 'the reading viewer gets everything while the other is stalled');
      // The shell is alive and answering while the stalled viewer still holds back.
      await write(s.session_id, 'echo alive-$((5*5))\n');
      await reading.waitFor(() => reading.text().includes('alive-25'), 10_000, 'shell alive');
      stalled.ws.resume();
      await stalled.waitFor(() => stalled.text().includes('alive-25'), 30_000, 'stalled viewer catches up');
      const a = Buffer.concat(stalled.bytes);
      const b = Buffer.concat(reading.bytes);
      const n = Math.min(a.length, b.length);
      assert.ok(n > 1_400_000, `long enough (${n})`);
      assert.ok(a.subarray(0, n).equals(b.subarray(0, n)), 'the stalled viewer got the same bytes, no gap, no duplicate');
    } finally {
      for (const v of viewers) v.close();
    }
  });

  it('a viewer stalled past the ring gets a resync naming exactly what it missed, then the ring from there', async () => {
    const s = await create();
    const stalled = await WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${s.session_id}/stream?encoding=binary`));
    const LINES = 120_000;
    const LINE = 50; // "%049d\n": ~6 MB, three times the 2 MiB ring
    try {
      stalled.ws.pause();
      await write(s.session_id, `stty -echo -onlcr; awk 'BEGIN{for(i=0;i<${LINES};i++) printf "%049d\\n", i}'; echo RING-$((4*4))-DONE\n`);
      // The raw tail, not the screen: the flood has no carriage returns, so where the marker lands on
      // the grid depends on the column, and a grid that fell more than a ring behind between two polls
      // replays from a line start, which shifts that column (the marker can wrap across two rows).
      await waitUntil(
        async () => (await t.socket('GET', `/sessions/${s.session_id}/output?format=raw&limit=4096`)).json(),
        (o) => String(o.data).includes('RING-16-DONE'),
        60_000,
        'the flood ran to its end',
      );
      stalled.ws.resume();
      await stalled.waitFor(() => stalled.text().includes('RING-16-DONE'), 60_000, 'the stalled viewer reaches the end');
      const got = Buffer.concat(stalled.bytes);
      // The lines are known, so every byte can be checked against its session offset. `base` is the
      // offset of line 0, which the viewer saw before it stalled.
      const base = got.indexOf('0'.repeat(LINE - 1) + '\n');
      assert.ok(base >= 0, 'line 0 arrived before the stall');
      const expected = (offset: number): number | undefined => {
        const k = offset - base;
        if (k < 0 || k >= LINES * LINE) return undefined; // prompt, echo, marker: not checked
        const col = k % LINE;
        return col === LINE - 1
          ? 0x0a
          : String(Math.floor(k / LINE))
              .padStart(LINE - 1, '0')
              .charCodeAt(col);
      };
      const checkStretch = (from: number, to: number, offset: number): void => {
        for (let i = from; i < to; i++) {
          const want = expected(offset + (i - from));
          if (want !== undefined && got[i] !== want) assert.fail(`byte ${i} (session offset ${offset + (i - from)}) is ${got[i]}, expected ${want}`);
        }
      };
      const resyncs = stalled.frames.map((f, i) => ({ f, at: stalled.frameAt[i]! })).filter(({ f }) => f.type === 'resync');
      assert.ok(resyncs.length >= 1, 'a resync frame came');
      let pos = 0;
      let offset = 0;
      for (const { f, at } of resyncs) {
        const from = f['from'] as number;
        const to = f['to'] as number;
        assert.equal(f['missed'], to - from);
        assert.ok(to > from);
        assert.equal(offset + (at - pos), from, 'the resync starts exactly where the bytes sent stopped');
        checkStretch(pos, at, offset);
        pos = at;
        offset = to;
      }
      assert.ok(offset < base + LINES * LINE, 'the resync lands inside the flood');
      checkStretch(pos, got.length, offset);
      assert.ok(got.length - pos >= 2 * 1024 * 1024 - LINE, 'after the resync: the ring from `to`');
    } finally {
      stalled.close();
    }
  });
});

describe('process stats and a dying pty host', () => {
  const ctx = sessionSuite('tuicd-host-');
  let t: Tuicd;
  let sse: SseClient;
  let work: string;
  before(() => ({ t, sse, work } = ctx));

  it('reports tuicd, the pty host and each session tree, and serves a self-contained monitor page', async () => {
    const s = (await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh' }))).json();
    const rows = (await t.socket('GET', '/process/stats')).json() as Array<{ kind: string; pid: number; rss_kb: number; cpu_pct: number; session_id?: string }>;
    assert.ok(rows.some((r) => r.kind === 'tuicd' && r.pid === t.child.pid && r.rss_kb > 0));
    assert.ok(rows.some((r) => r.kind === 'pty-host' && r.rss_kb > 0));
    assert.ok(rows.some((r) => r.kind === 'session' && r.session_id === s.session_id));
    const page = await t.socket('GET', '/process/monitor');
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    assert.doesNotMatch(page.text, /(src|href)=["']?https?:/, 'no external assets');
    assert.match(page.text, /fetch\('stats'/);
  });

  it('survives kill -9 of the pty host: its sessions close with pty_host_exited, new sessions work', async () => {
    const before = (await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh' }))).json();
    await t.socket('POST', `/sessions/${before.session_id}/write`, JSON.stringify({ data: 'while :; do echo flood; done\n' }));
    await new Promise((r) => setTimeout(r, 300));
    const host = ((await t.socket('GET', '/process/stats')).json() as Array<{ kind: string; pid: number }>).find((r) => r.kind === 'pty-host')!;
    process.kill(host.pid, 'SIGKILL');
    const closed = await sse.waitFor((e) => e.event === 'session-closed' && JSON.parse(e.data).session_id === before.session_id);
    assert.equal(JSON.parse(closed.data).reason, 'pty_host_exited');
    assert.equal((await t.socket('GET', '/health')).status, 200, 'the supervisor keeps serving');
    const after = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh' }));
    assert.equal(after.status, 201, after.text);
    const id = after.json().session_id as string;
    await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: 'echo reborn-$((2*21))\n' }));
    await waitUntil(
      async () => (await t.socket('GET', `/sessions/${id}/output`)).json(),
      (o) => String(o.data).includes('reborn-42'),
      15_000,
      'new session output',
    );
    const newHost = ((await t.socket('GET', '/process/stats')).json() as Array<{ kind: string; pid: number }>).find((r) => r.kind === 'pty-host')!;
    assert.notEqual(newHost.pid, host.pid);
  });
});
