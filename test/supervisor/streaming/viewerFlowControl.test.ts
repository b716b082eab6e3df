/**
 * Flow control through the viewers (streaming/viewerFlow.ts): a flood of long lines without a
 * newline reaches every live viewer byte-exact, a slow one included, because the session's acks
 * wait for the slowest viewer that still drains and the producer slows to it; a viewer that stops
 * reading stops counting once it made no progress for ViewerFlowConstants.STALL_MS, so the others
 * get everything, and it gets a resync when it reads again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

/** `seq 1 n | tr '\n' ,` between two markers: one line with no newline, every byte in a known place. */
function flood(n: number): { command: string; expected: string } {
  const parts: string[] = ['F42F'];
  for (let i = 1; i <= n; i++) parts.push(`${i},`);
  parts.push('E42E');
  // The markers are computed by the shell, so the command (echoed before `stty -echo` applies) never contains them.
  return { command: `printf 'F%sF' 42; seq 1 ${n} | tr '\\n' ,; printf 'E%sE\\n' 42\n`, expected: parts.join('') };
}

/**
 * The viewer leaves its socket unread for `pauseMs` after every frame it gets: it takes about one
 * socket read (up to 64 KiB) per pause, a few MB/s, far slower than the producer.
 */
function throttle(viewer: WsViewer, pauseMs: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  let on = true;
  const onMessage = () => {
    if (!on || viewer.ws.isPaused) return;
    viewer.ws.pause();
    timer = setTimeout(() => viewer.ws.resume(), pauseMs);
  };
  viewer.ws.on('message', onMessage);
  return () => {
    on = false;
    clearTimeout(timer);
    viewer.ws.off('message', onMessage);
    viewer.ws.resume();
  };
}

/** The end marker is in what arrived last (checking the whole text on every frame would be quadratic). */
const reachedEnd = (v: WsViewer) => () => v.closed || Buffer.concat(v.bytes.slice(-4)).includes('E42E');

/** Everything the viewer got from the first marker on; asserts it is exactly the flood. */
function assertExact(name: string, v: WsViewer, expected: string): void {
  const text = v.text();
  const at = text.indexOf('F42F');
  assert.ok(at >= 0, `${name}: the start marker arrived`);
  const got = text.slice(at, at + expected.length);
  if (got !== expected) {
    let i = 0;
    while (i < got.length && got[i] === expected[i]) i++;
    const resyncs = v.frames.filter((f) => f.type === 'resync');
    assert.fail(`${name}: ${got.length} of ${expected.length} bytes, first difference at ${i}; resync frames ${JSON.stringify(resyncs)}`);
  }
}

describe('viewer flow control', { timeout: 240_000 }, () => {
  const suite = sessionSuite('tuicd-vflow-');

  const open = async (sessionId: string, query: string) => {
    const v = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${sessionId}/stream${query}`));
    return v;
  };

  it('a flood of 22 MB on one line reaches three viewers byte-exact, one of them reading slowly', async () => {
    const s = await suite.create();
    const { command, expected } = flood(3_000_000);
    assert.ok(expected.length >= 20_000_000);
    const fast = await open(s.session_id, '?encoding=binary');
    const json = await open(s.session_id, '');
    const slow = await open(s.session_id, '?encoding=binary');
    let unthrottle = () => {};
    try {
      await suite.write(s.session_id, 'stty -echo\n');
      await slow.waitFor(() => slow.bytes.length > 0, 10_000, 'the prompt');
      unthrottle = throttle(slow, 50);
      await suite.write(s.session_id, command);
      for (const [name, v] of [
        ['fast', fast],
        ['json', json],
        ['slow', slow],
      ] as const) {
        await v.waitFor(reachedEnd(v), 180_000, `${name} reaches the end marker`);
      }
      unthrottle();
      for (const [name, v] of [
        ['fast', fast],
        ['json', json],
        ['slow', slow],
      ] as const) {
        assert.deepEqual(
          v.frames.filter((f) => f.type === 'resync'),
          [],
          `${name}: no resync`,
        );
        assertExact(name, v, expected);
      }
    } finally {
      unthrottle();
      for (const v of [fast, json, slow]) v.close();
    }
  });

  it('a viewer that stops reading does not hold the session: the others get everything, it gets a resync when it reads again', async () => {
    const s = await suite.create();
    const { command, expected } = flood(1_000_000);
    const fast = await open(s.session_id, '');
    const slow = await open(s.session_id, '?encoding=binary');
    const stalled = await open(s.session_id, '');
    let unthrottle = () => {};
    try {
      await suite.write(s.session_id, 'stty -echo\n');
      await stalled.waitFor(() => stalled.bytes.length > 0, 10_000, 'the prompt');
      stalled.ws.pause();
      unthrottle = throttle(slow, 50);
      await suite.write(s.session_id, command);
      await fast.waitFor(reachedEnd(fast), 180_000, 'fast reaches the end marker while a viewer is stalled');
      await slow.waitFor(reachedEnd(slow), 180_000, 'slow reaches the end marker while a viewer is stalled');
      unthrottle();
      assertExact('fast', fast, expected);
      assertExact('slow', slow, expected);
      assert.equal(stalled.frames.filter((f) => f.type === 'resync').length, 0, 'nothing arrived while stalled');

      stalled.ws.resume();
      await stalled.waitFor(reachedEnd(stalled), 60_000, 'the stalled viewer reaches the end after it reads again');
      const resyncAt = stalled.frames.findIndex((f) => f.type === 'resync');
      assert.ok(resyncAt >= 0, 'a resync frame says what the stalled viewer missed');
      const resync = stalled.frames[resyncAt]!;
      assert.ok((resync['missed'] as number) > 0);
      // From the resync on, the stalled viewer has the stream exactly as it was from `to` (the fast viewer saw it all from offset 0).
      const fromResync = Buffer.concat(stalled.bytes).subarray(stalled.frameAt[resyncAt]).toString('utf8');
      const after = fromResync.slice(0, fromResync.indexOf('E42E') + 4);
      const to = resync['to'] as number;
      assert.ok(after.endsWith('E42E'));
      assert.equal(after, fast.text().slice(to, to + after.length), 'the bytes after the resync are the ones at its `to`');
    } finally {
      unthrottle();
      for (const v of [fast, slow, stalled]) v.close();
    }
  });
});
