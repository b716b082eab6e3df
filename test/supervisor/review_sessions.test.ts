// Review findings for sessions, output reads, log-mode streaming and process stats: a real tuicd, real shells.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { SseClient } from '../helpers/sseClient.js';
import { Tuicd } from '../helpers/tuicdProcess.js';
import { WsViewer } from '../helpers/wsViewer.js';

async function waitUntil<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
  let t: Tuicd;
  let sse: SseClient;
  const work = mkdtempSync(join(tmpdir(), 'tuicd-review-'));
  before(async () => {
    t = await Tuicd.start({ env: { SHELL: '/bin/sh' } });
    sse = await SseClient.open({ socketPath: t.socketPath, path: '/events' });
  });
  after(async () => {
    sse.close();
    await t.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const create = async (body: object = {}) => {
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', ...body }));
    assert.equal(r.status, 201, r.text);
    return r.json() as { session_id: string; alias: string; tuic_session: string };
  };
  const write = (id: string, data: string) => t.socket('POST', `/sessions/${encodeURIComponent(id)}/write`, JSON.stringify({ data }));
  const raw = async (id: string) => (await t.socket('GET', `/sessions/${encodeURIComponent(id)}/output?limit=65536`)).json();
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
      await waitUntil(() => raw(second.session_id), (o) => String(o.data).includes(`via-${ref}-6`), 10_000, `write via ${ref}`);
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
      assert.deepEqual(r.json(), { error: 'body must be a JSON object' });
    }
  });

  it('a delta log read capped by limit returns a cursor that resumes right after its last line', async () => {
    const s = await create();
    await write(s.session_id, "stty -echo; awk 'BEGIN{for(i=0;i<30;i++) print \"row-\" i}'; echo ROWS-$((5+5))-DONE\n");
    await waitUntil(() => raw(s.session_id), (o) => String(o.data).includes('ROWS-10-DONE'), 10_000, 'rows printed');
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
    assert.deepEqual(rows, Array.from({ length: 30 }, (_, i) => `row-${i}`), 'chained delta reads see every line once');
  });

  it('a log-mode viewer gets every line of an exited session, then closed', async () => {
    const s = await create();
    // More lines than one log frame carries (500), so the viewer needs several polls to drain them.
    await write(s.session_id, "stty -echo; awk 'BEGIN{for(i=0;i<1200;i++) print \"line-\" i}'; exit 4\n");
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
      assert.deepEqual(lines, Array.from({ length: 1200 }, (_, i) => `line-${i}`), 'every line arrives before closed');
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(v.frames.length, closedAt + 1, 'nothing follows closed: the viewer stopped polling');
    } finally {
      v.close();
    }
  });

  it('process stats count every process in one row only', async () => {
    await create();
    await create();
    const rows = (await t.socket('GET', '/process/stats')).json() as Array<{ kind: string; pid: number; processes: number }>;
    const tuicd = rows.find((r) => r.kind === 'tuicd')!;
    const host = rows.find((r) => r.kind === 'pty-host')!;
    assert.ok(tuicd && host);
    const counted = rows.reduce((n, r) => n + r.processes, 0);
    // Live sessions are all idle shells, so the tree is the same now as when the stats were read.
    assert.equal(counted, processTree(t.child.pid!).size, 'the rows partition tuicd\'s process tree');
    assert.ok(!processTree(host.pid).has(tuicd.pid));
  });
});
