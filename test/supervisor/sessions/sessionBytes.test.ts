// GET /stats reports what each running session holds in the pty host (issue 29 item 1): a quiet session
// a few KiB, a session that printed 400 KB about that much in its ring and its log, never past the caps.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';

interface Held {
  session_id: string;
  ring_bytes: number;
  log_bytes: number;
  screen_bytes: number;
}

describe('/stats: bytes per session', () => {
  let t: Tuicd;
  const work = mkdtempSync(join(tmpdir(), 'tuicd-bytes-'));
  before(async () => {
    t = await Tuicd.start({ env: { SHELL: '/bin/sh' } });
  });
  after(async () => {
    await t?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const create = async (script: string): Promise<string> => {
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', args: ['-c', script], cols: 120 }));
    assert.equal(r.status, 201, r.text);
    return (r.json() as { session_id: string }).session_id;
  };

  it('a quiet session holds a few KiB; a busy one what it printed, up to the caps', async () => {
    const quiet = await create(`printf 'ready\\n'; exec sleep 60`);
    // 4,000 lines of 100 bytes, then a marker line once all of it is out.
    const busy = await create(`i=1; while [ $i -le 4000 ]; do printf 'row %05d %s\\n' $i ${'x'.repeat(89)}; i=$((i+1)); done; echo done; exec sleep 60`);
    let held: Held[] = [];
    for (const deadline = Date.now() + 30_000; ; ) {
      const log = (await t.socket('GET', `/sessions/${busy}/output?format=log&limit=1`)).json() as { total_lines?: number };
      held = ((await t.socket('GET', '/stats')).json() as { session_bytes: Held[] }).session_bytes;
      if ((log.total_lines ?? 0) >= 4001 && held.some((h) => h.session_id === quiet)) break;
      if (Date.now() > deadline) throw new Error(`output not in: ${JSON.stringify(held)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const q = held.find((h) => h.session_id === quiet)!;
    const b = held.find((h) => h.session_id === busy)!;
    assert.ok(q.ring_bytes > 0 && q.ring_bytes <= 16 * 1024, `quiet ring ${q.ring_bytes}`);
    assert.ok(q.log_bytes <= 8 * 1024, `quiet log ${q.log_bytes}`);
    assert.ok(b.ring_bytes >= 400_000 && b.ring_bytes <= 2 * 1024 * 1024, `busy ring ${b.ring_bytes}`);
    // 4,001 lines of text (~395 KB) and their 5-byte slots, in chunks of at most 128 KiB.
    assert.ok(b.log_bytes >= 395_000 && b.log_bytes <= 395_000 + 4_096 * 5 + 2 * 128 * 1024, `busy log ${b.log_bytes}`);
    assert.ok(b.screen_bytes >= 0 && q.screen_bytes >= 0);
  });
});
