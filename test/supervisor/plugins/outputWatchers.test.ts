/**
 * Output watchers end to end on a real tuicd: a real shell prints matching and non-matching lines,
 * matches reach the viewers of the client that set them (`watcher-lines`) and /events
 * (`plugin-watcher-lines`); stale seqs, the 8-client LRU, flags and refused patterns.
 *
 * Lines are printed with printf so the echoed command line never contains the text a watcher looks
 * for: only the program's output can match. Absence is asserted after a later line's match arrived:
 * frames come in output order, so a frame for an earlier line would have come first.
 */
import assert from 'node:assert/strict';
import { after, describe, before, test } from 'node:test';

import { sessionSuite } from '../../helpers/sessionSuite.js';
import type { Frame } from '../../helpers/wsViewer.js';
import { WsViewer } from '../../helpers/wsViewer.js';

describe('output watchers', () => {
  const s = sessionSuite('tuicd-watchers-');
  let sessionId = '';
  const viewers: WsViewer[] = [];
  before(async () => {
    sessionId = (await s.create()).session_id;
  });
  after(() => {
    for (const v of viewers) v.close();
  });

  async function viewer(clientId?: string): Promise<WsViewer> {
    const q = clientId === undefined ? '' : `?client_id=${encodeURIComponent(clientId)}`;
    const v = await WsViewer.open(WsViewer.socketUrl(s.t.socketPath, `/sessions/${sessionId}/stream${q}`));
    viewers.push(v);
    return v;
  }

  async function setWatchers(client_id: string, seq: number, watchers: Array<{ id: string; pattern: string; flags?: string }>) {
    const r = await s.t.socket('POST', '/api/plugins/output-watchers', JSON.stringify({ client_id, seq, watchers }), { 'content-type': 'application/json' });
    return { status: r.status, body: r.json() };
  }

  /** Prints each line as the program's output: `printf '%s%s\n' 'hi' 't-1'` prints `hit-1`, the command line never holds it. */
  async function print(...lines: string[]): Promise<void> {
    const cmd = lines.map((l) => `printf '%s%s\\n' '${l.slice(0, 1)}' '${l.slice(1)}'`).join('; ');
    const r = await s.write(sessionId, `${cmd}\n`);
    assert.equal(r.status, 200, r.text);
  }

  const watcherFrames = (v: WsViewer): Frame[] => v.frames.filter((f) => f.type === 'watcher-lines');
  const texts = (frames: Frame[]): string[] => frames.flatMap((f) => (f['lines'] as Array<{ text: string }>).map((l) => l.text));
  const sseLines = (): Array<{ text: string; matched_ids: string[] }> =>
    s.sse.events.filter((e) => e.event === 'plugin-watcher-lines').flatMap((e) => JSON.parse(e.data).lines);

  // Generous: on a loaded machine (or with a pty host starting) a frame may take seconds; it comes or the test fails.
  async function frameWith(v: WsViewer, text: string): Promise<void> {
    await v.waitFor(() => texts(watcherFrames(v)).includes(text), 20_000, `watcher-lines frame with '${text}'`);
  }

  test("matches go to the setting client's viewers and /events; a non-matching line makes no frame; other clients get nothing", async () => {
    const a = await viewer('alpha');
    const b = await viewer('beta');
    const plain = await viewer();
    assert.deepEqual(await setWatchers('alpha', 1, [{ id: 'hits', pattern: '^hit-\\d+$' }]), {
      status: 200,
      body: { applied: true, rejected: [], reasons: {} },
    });
    assert.deepEqual((await setWatchers('beta', 1, [{ id: 'other', pattern: '^other-\\d+$' }])).body.applied, true);
    await print('miss-1', 'hit-1', 'miss-2', 'other-1');
    await frameWith(a, 'hit-1');
    await frameWith(b, 'other-1');
    assert.deepEqual(watcherFrames(a), [{ type: 'watcher-lines', session_id: sessionId, lines: [{ text: 'hit-1', matched_ids: ['alpha/hits'] }] }]);
    assert.deepEqual(texts(watcherFrames(b)), ['other-1']);
    assert.deepEqual((watcherFrames(b)[0]!['lines'] as any)[0].matched_ids, ['beta/other']);
    await s.sse.until(() => sseLines().some((l) => l.text === 'other-1'), 'plugin-watcher-lines for other-1');
    const seen = sseLines();
    assert.deepEqual(
      seen.map((l) => l.text),
      ['hit-1', 'other-1'],
    );
    assert.deepEqual(seen[0]!.matched_ids, ['alpha/hits']);
    assert.ok(!texts(watcherFrames(a)).some((t) => t.startsWith('miss')));
    assert.equal(watcherFrames(plain).length, 0, 'a viewer without client_id gets no watcher frames');
  });

  test('a stale seq is not applied; a greater one replaces the set; flags i/m/s are honoured', async () => {
    const a = await viewer('gamma');
    assert.equal((await setWatchers('gamma', 5, [{ id: 'old', pattern: '^old-\\d$' }])).body.applied, true);
    assert.deepEqual((await setWatchers('gamma', 5, [{ id: 'new', pattern: '^new-\\d$' }])).body, { applied: false, rejected: [], reasons: {} });
    assert.equal((await setWatchers('gamma', 4, [{ id: 'new', pattern: '^new-\\d$' }])).body.applied, false);
    await print('new-1', 'old-1');
    await frameWith(a, 'old-1');
    assert.deepEqual(texts(watcherFrames(a)), ['old-1'], 'the stale set was not applied');
    assert.equal((await setWatchers('gamma', 6, [{ id: 'case', pattern: '^mixed-case-X$', flags: 'i' }])).body.applied, true);
    await print('old-2', 'MIXED-Case-x');
    await frameWith(a, 'MIXED-Case-x');
    assert.deepEqual(texts(watcherFrames(a)), ['old-1', 'MIXED-Case-x']);
    assert.deepEqual((watcherFrames(a).at(-1)!['lines'] as any)[0].matched_ids, ['gamma/case']);
  });

  test('eight client sets at most: a ninth evicts the least recently posted', async () => {
    const first = await viewer('lru-0');
    const last = await viewer('lru-8');
    // Clients of the earlier tests count too: post lru-0 .. lru-8 so lru-0 is the oldest of nine.
    for (let i = 0; i <= 8; i++) assert.equal((await setWatchers(`lru-${i}`, 1, [{ id: 'w', pattern: `^lru-line-${i}$` }])).body.applied, true);
    await print('lru-line-0', 'lru-line-8');
    await frameWith(last, 'lru-line-8');
    assert.equal(watcherFrames(first).length, 0, 'lru-0 was evicted: its watcher no longer runs');
    assert.ok(!sseLines().some((l) => l.matched_ids.includes('lru-0/w')));
    // Evicted, it starts afresh (its seq is forgotten) and evicts the next oldest.
    assert.equal((await setWatchers('lru-0', 1, [{ id: 'w', pattern: '^lru-line-0$' }])).body.applied, true);
    await print('lru-line-0');
    await frameWith(first, 'lru-line-0');
  });

  test('refused patterns come back in rejected with a reason; bad requests are 400', async () => {
    const r = await setWatchers('delta', 1, [
      { id: 'ok', pattern: 'fine' },
      { id: 'backref', pattern: '(a)\\1' },
      { id: 'look', pattern: '(?=x)y' },
      { id: 'syntax', pattern: '(unclosed' },
      { id: 'flag', pattern: 'x', flags: 'g' },
    ]);
    assert.equal(r.status, 200);
    assert.equal(r.body.applied, true);
    assert.deepEqual(r.body.rejected, ['backref', 'look', 'syntax', 'flag']);
    assert.match(r.body.reasons.backref, /linear time/);
    assert.match(r.body.reasons.syntax, /Invalid regular expression/);
    assert.match(r.body.reasons.flag, /flags must combine i, m and s/);
    assert.equal((await setWatchers('a/b', 1, [])).status, 400);
    const dup = await setWatchers('delta', 2, [
      { id: 'x', pattern: 'a' },
      { id: 'x', pattern: 'b' },
    ]);
    assert.equal(dup.status, 400);
    assert.match(dup.body.error, /duplicate watcher id 'x'/);
    const many = await setWatchers(
      'delta',
      3,
      Array.from({ length: 33 }, (_, i) => ({ id: `w${i}`, pattern: 'a' })),
    );
    assert.equal(many.status, 400);
    assert.equal((await setWatchers('delta', 4, [{ id: 'long', pattern: 'a'.repeat(1025) }])).status, 400);
    const bad = await s.t.socket('POST', '/api/plugins/output-watchers', JSON.stringify({ client_id: 'x', seq: -1, watchers: [] }), {
      'content-type': 'application/json',
    });
    assert.equal(bad.status, 400);
  });

  test('a pattern with catastrophic backtracking does not hang the pty host', async () => {
    const a = await viewer('epsilon');
    assert.equal(
      (
        await setWatchers('epsilon', 1, [
          { id: 'evil', pattern: '^(a+)+$' },
          { id: 'mark', pattern: '^redos-done$' },
        ])
      ).body.applied,
      true,
    );
    // 40 a's and a '!': ~2^40 steps for a backtracking engine without its safety net.
    await print(`${'a'.repeat(40)}!`, 'redos-done');
    await frameWith(a, 'redos-done');
    assert.ok(!texts(watcherFrames(a)).some((t) => t.startsWith('aaa')));
    // The host still answers.
    assert.equal((await s.t.socket('GET', `/sessions/${sessionId}/output?format=log&limit=5`)).status, 200);
  });

  test('a replacement pty host gets the watchers before its first session', async () => {
    const rows = (await s.t.socket('GET', '/process/stats')).json() as Array<{ kind: string; pid: number }>;
    const hostPid = rows.find((r) => r.kind === 'pty-host')!.pid;
    process.kill(hostPid, 'SIGKILL');
    await s.sse.until(
      () => s.sse.events.some((e) => e.event === 'session-closed' && JSON.parse(e.data).session_id === sessionId),
      'the session closed with its host',
      20_000,
    );
    sessionId = (await s.create()).session_id;
    const v = await viewer('epsilon');
    await print('redos-done');
    await frameWith(v, 'redos-done');
  });
});
