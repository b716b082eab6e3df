/**
 * A session nobody watches prints without its bytes crossing to the supervisor (issue 29, 500 busy
 * sessions): the pty host sends `activity` notices in their place, and a viewer's `watch` turns the
 * bytes back on before its ring read, so viewers that attach before and during a flood still get
 * every byte, byte-exact. Counted by GET /metrics (`output_payload_bytes` against `bytes_emitted`)
 * on a real tuicd with a real shell.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { waitFor } from '../../helpers/poll.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

/** What `seq -f '<prefix>%06g' 1 n` prints on a terminal (onlcr: CR LF). */
function lines(prefix: string, n: number): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) out.push(`${prefix}${String(i).padStart(6, '0')}\r\n`);
  return out.join('');
}

// The markers are computed by the shell, so nothing echoed contains them; `stty -echo` keeps the typed `go` out.
const SCRIPT = [
  'stty -echo',
  "seq -f 'b%06g' 1 3000",
  "printf 'R%sR\\n' 42",
  'read go',
  "seq -f 'a%06g' 1 150000",
  "printf 'E%sE\\n' 42",
  'read go',
  "seq -f 'c%06g' 1 3000",
  "printf 'D%sD\\n' 42",
  'exec sleep 600',
].join('; ');

const FIRST = `${lines('b', 3000)}R42R\r\n`;
const SECOND = `${lines('a', 150_000)}E42E\r\n`;

describe('output of unwatched sessions', { timeout: 120_000 }, () => {
  const suite = sessionSuite('tuicd-unwatched-');
  const metrics = async () => (await suite.t.socket('GET', '/metrics')).json<Record<string, number>>();
  const open = (sessionId: string, query: string) => WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${sessionId}/stream${query}`));
  const tail = (v: WsViewer, marker: string) => () => v.closed || Buffer.concat(v.bytes.slice(-4)).includes(marker);

  it("a raw read brings an unwatched session's total_written up to date (its notices trail by up to a window)", async () => {
    // The second printf lands inside the first one's activity window, so its notice waits for the window's end.
    const s = await suite.create({ args: ['-c', "printf 'x%.0s' $(seq 1 100); sleep 0.05; printf 'M%sM' 42; exec sleep 600"] });
    let raw: { data: string; total_written: number } | undefined;
    await waitFor(async () => (raw = await suite.raw(s.session_id))!.data.includes('M42M'), 'the second write is in the ring');
    const listed = (await suite.t.socket('GET', '/sessions')).json<Array<{ session_id: string; total_written: number }>>();
    assert.equal(listed.find((e) => e.session_id === s.session_id)?.total_written, raw!.total_written, 'the record counts what the read saw');
  });

  it('crosses the channel only while watched; viewers attaching before and during a flood get every byte', async () => {
    const m0 = await metrics();
    const s = await suite.create({ args: ['-c', SCRIPT] });
    await waitFor(async () => JSON.stringify(await suite.raw(s.session_id)).includes('R42R'), 'the first part is printed');
    // Notices of an unwatched session's output come at most a window (ACTIVITY_WINDOW_MS) after it.
    await waitFor(async () => (await metrics())['bytes_emitted']! - m0['bytes_emitted']! >= FIRST.length, 'the first part is counted');
    const m1 = await metrics();
    assert.equal(m1['output_payload_bytes']! - m0['output_payload_bytes']!, 0, 'no viewer: no output bytes crossed from the pty host');

    const before = await open(s.session_id, '?encoding=binary');
    const viewers: Array<[string, WsViewer]> = [['before', before]];
    try {
      await before.waitFor(tail(before, 'R42R'), 10_000, 'the ring replay');
      await suite.write(s.session_id, 'go\n');
      // Attached while the flood runs (its watch and ring read race the host's batches).
      for (const [name, query] of [
        ['during (binary)', '?encoding=binary'],
        ['during (json)', ''],
      ] as const) {
        viewers.push([name, await open(s.session_id, query)]);
      }
      for (const [name, v] of viewers) await v.waitFor(tail(v, 'E42E'), 60_000, `${name} reaches the end marker`);
      for (const [name, v] of viewers) {
        assert.deepEqual(
          v.frames.filter((f) => f.type === 'resync'),
          [],
          `${name}: no resync`,
        );
        const text = v.text();
        assert.equal(text.length, FIRST.length + SECOND.length, `${name}: every byte once`);
        assert.ok(text === FIRST + SECOND, `${name}: byte-exact`);
      }
      const m2 = await metrics();
      assert.ok(m2['output_payload_bytes']! - m1['output_payload_bytes']! >= SECOND.length, 'watched: the bytes crossed');

      for (const [, v] of viewers) {
        v.close();
        await v.waitFor(() => v.closed, 10_000, 'closed');
      }
      await suite.write(s.session_id, 'go\n');
      await waitFor(async () => (await metrics())['bytes_emitted']! - m2['bytes_emitted']! >= 3000 * 9, 'the third part is counted');
      const m3 = await metrics();
      assert.equal(m3['output_payload_bytes']! - m2['output_payload_bytes']!, 0, 'the viewers left: no bytes crossed');
    } finally {
      for (const [, v] of viewers) v.close();
    }
  });
});
