// Review findings for sessions, output reads, log-mode streaming and process stats: a real tuicd, real shells.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { before, describe, it } from 'node:test';

import { until } from '../helpers/poll.js';
import { sessionSuite } from '../helpers/sessionSuite.js';
import type { SseClient } from '../helpers/sseClient.js';
import type { Tuicd } from '../helpers/tuicdProcess.js';
import { WsViewer } from '../helpers/wsViewer.js';

/** Every process in the tree under `root` (root included), read from /proc. */
function processTree(root: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const ppid = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
    let list = children.get(ppid);
    if (!list) children.set(ppid, (list = []));
    list.push(Number(entry));
  }
  const tree = new Set<number>();
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    tree.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return tree;
}

describe('review: sessions, output reads and log streaming', () => {
  const suite = sessionSuite('tuicd-review-');
  const { create, write, raw, work } = suite;
  let t: Tuicd;
  let sse: SseClient;
  before(() => ({ t, sse } = suite));

  const exitAndWait = async (id: string, code: number) => {
    await write(id, `exit ${code}\n`);
    await sse.waitFor((e) => e.event === 'session-closed' && JSON.parse(e.data).session_id === id);
  };

  it('a tuic_session or alias reused after its session exited addresses the live session, not the tombstone', async () => {
    const first = await create({ tuic_session: 'restarted-tab' });
    await exitAndWait(first.session_id, 3);
    // The tab restarts its shell under the same identity, and asks for the alias it had.
    const second = await create({ tuic_session: 'restarted-tab', alias: first.alias });
    assert.equal(second.alias, first.alias, 'a released alias can be handed out again');
    for (const ref of ['restarted-tab', first.alias]) {
      const w = await write(ref, `echo via-${ref}-$((2*3))\n`);
      assert.equal(w.status, 200, `${ref}: ${w.text}`);
      await until(
        () => raw(second.session_id),
        (o) => String(o.data).includes(`via-${ref}-6`),
        `write via ${ref}`,
      );
    }
    const out = (await t.socket('GET', '/sessions/restarted-tab/output')).json();
    assert.equal(out.exit_code, undefined, 'the output read is the live session, which has no exit code');
    // The tombstone still answers to its own id.
    assert.equal((await raw(first.session_id)).exit_code, 3);
  });

  it('write and resize refuse a JSON null body with 400, not a handler crash', async () => {
    const s = await create();
    for (const path of ['write', 'resize']) {
      const r = await t.socket('POST', `/sessions/${s.session_id}/${path}`, 'null');
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.deepEqual(r.json(), { error: 'body must be a JSON object', code: 'invalid_input', field: '', in: 'body' });
    }
  });

  it('a delta log read capped by limit returns a cursor that resumes right after its last line', async () => {
    const s = await create();
    await write(s.session_id, 'stty -echo; awk \'BEGIN{for(i=0;i<30;i++) print "row-" i}\'; echo ROWS-$((5+5))-DONE\n');
    await until(
      () => raw(s.session_id),
      (o) => String(o.data).includes('ROWS-10-DONE'),
      'rows printed',
    );
    const seen: string[] = [];
    let cursor = 0;
    for (let reads = 0; reads < 50 && !seen.includes('ROWS-10-DONE'); reads++) {
      const r = (await t.socket('GET', `/sessions/${s.session_id}/output?format=log&since_cursor=${cursor}&limit=7`)).json();
      assert.equal(r.screen, undefined, 'delta reads carry no screen');
      assert.ok(r.lines.length <= 7);
      seen.push(...r.lines.map((l: { text: string }) => l.text));
      assert.ok(r.cursor >= cursor, 'the cursor never goes back');
      cursor = r.cursor;
    }
    // The shell's first prompt may land in front of row-0 when it starts while the command is typed.
    const rows = seen.flatMap((x) => /(?:^|[#$] )(row-\d+)$/.exec(x)?.[1] ?? []);
    assert.deepEqual(
      rows,
      Array.from({ length: 30 }, (_, i) => `row-${i}`),
      'chained delta reads see every line once',
    );
  });

  it('a log-mode viewer gets every line of an exited session, then closed', async () => {
    const s = await create();
    // More lines than one log frame carries (500), so the viewer needs several polls to drain them,
    // and fewer than an exited session's tombstone keeps (PtyConstants.TOMBSTONE_LOG_LINES, 1,000).
    await write(s.session_id, 'stty -echo; awk \'BEGIN{for(i=0;i<900;i++) print "line-" i}\'; exit 4\n');
    await sse.waitFor((e) => e.event === 'session-closed' && JSON.parse(e.data).session_id === s.session_id, 15_000);
    const v = await WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${s.session_id}/stream?format=log&offset=0`));
    try {
      await v.waitFor(() => v.frames.some((f) => f.type === 'closed'), 10_000, 'closed frame');
      const closedAt = v.frames.findIndex((f) => f.type === 'closed');
      assert.deepEqual(v.frames[closedAt], { type: 'closed', session_id: s.session_id, reason: 'exit' });
      const lines = v.frames
        .slice(0, closedAt)
        .filter((f) => f.type === 'log')
        .flatMap((f) => (f['lines'] as Array<{ text: string }>).map((l) => l.text))
        .flatMap((x) => /(?:^|[#$] )(line-\d+)$/.exec(x)?.[1] ?? []);
      assert.deepEqual(
        lines,
        Array.from({ length: 900 }, (_, i) => `line-${i}`),
        'every line arrives before closed',
      );
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(v.frames.length, closedAt + 1, 'nothing follows closed: the viewer stopped polling');
    } finally {
      v.close();
    }
  });

  it('concurrent creates that name the same session id: one spawns, the rest get 409', async () => {
    const body = JSON.stringify({ cwd: work, shell: '/bin/sh', session_id: 'contested-id' });
    const answers = await Promise.all(Array.from({ length: 6 }, () => t.socket('POST', '/sessions', body)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409, 409, 409, 409, 409], answers.map((a) => a.text).join('\n'));
    const w = await write('contested-id', 'echo contested-$((7*6))\n');
    assert.equal(w.status, 200, w.text);
    await until(
      () => raw('contested-id'),
      (o) => String(o.data).includes('contested-42'),
      'the one session runs',
    );
  });

  it('concurrent creates never exceed max_sessions', async () => {
    const live = ((await t.socket('GET', '/stats')).json() as { active_sessions: number }).active_sessions;
    const put = (max: number) => t.socket('PUT', '/config', JSON.stringify({ services: { server: { max_sessions: max } } }));
    assert.equal((await put(live + 2)).status, 200);
    try {
      const body = JSON.stringify({ cwd: work, shell: '/bin/sh' });
      const answers = await Promise.all(Array.from({ length: 6 }, () => t.socket('POST', '/sessions', body)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [201, 201, 429, 429, 429, 429], answers.map((a) => a.text).join('\n'));
      const stats = (await t.socket('GET', '/stats')).json() as { active_sessions: number; available_slots: number };
      assert.equal(stats.active_sessions, live + 2);
      for (const a of answers.filter((x) => x.status === 201)) await t.socket('DELETE', `/sessions/${a.json().session_id}`);
    } finally {
      assert.equal((await put(500)).status, 200);
    }
  });

  it('process stats count every process in one row only', async () => {
    await create();
    await create();
    type Row = { kind: string; pid: number; processes: number };
    // Live sessions are idle shells; closed ones may take a moment to leave the tree, hence the retry.
    const { rows, tree } = await until(
      async () => ({ rows: (await t.socket('GET', '/process/stats')).json() as Row[], tree: processTree(t.child.pid!).size }),
      ({ rows, tree }) => rows.reduce((n, r) => n + r.processes, 0) === tree,
      "the rows partition tuicd's process tree",
      5_000,
    );
    assert.ok(rows.some((r) => r.kind === 'tuicd') && rows.some((r) => r.kind === 'pty-host') && tree > 2);
  });
});
