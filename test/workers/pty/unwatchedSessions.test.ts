/**
 * The pty host sends a session's bytes only while the supervisor watches it (issue 29, 500 busy
 * sessions): a session spawned `unwatched` reports its batches as `activity` (offset and length, no
 * payload, nothing owed to the flow control), `watch` switches it to `data` from the next batch on
 * and back, and `adopt` makes every session unwatched (the new supervisor has no viewers yet).
 */

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test } from 'node:test';

import type { PtyEventSink } from '../../../workers/pty/ptyService.js';
import { ACTIVITY_WINDOW_MS, PtyService } from '../../../workers/pty/ptyService.js';
import { shellHomeEnv } from '../../helpers/testHome.js';

interface Recorded {
  event: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

function recorder(): { sink: PtyEventSink; log: Recorded[] } {
  const log: Recorded[] = [];
  const sink: PtyEventSink = {
    emit: (event, data, options) => {
      log.push({ event, data: data as Record<string, unknown>, ...(options?.payload ? { payload: Buffer.from(options.payload) } : {}) });
    },
  };
  return { sink, log };
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not met within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const env = (): Record<string, string> => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv() });

/** The session's output events in order, each as [event, offset, length]. */
function batches(log: Recorded[], id: string): Array<[string, number, number]> {
  return log
    .filter((e) => e.data['session_id'] === id && (e.event === 'data' || e.event === 'activity'))
    .map((e) => [e.event, e.data['offset'] as number, e.event === 'data' ? e.payload!.length : (e.data['bytes'] as number)]);
}

/** Offsets follow on from each other: no batch lost or counted twice across the switches. */
function assertContiguous(seen: Array<[string, number, number]>): number {
  let at = 0;
  for (const [event, offset, length] of seen) {
    assert.equal(offset, at, `${event} at ${offset}, expected ${at}`);
    at += length;
  }
  return at;
}

test('an unwatched session prints past the unacked window with no acks: its batches leave as activity notices', async () => {
  const { sink, log } = recorder();
  const service = new PtyService(sink);
  const total = 3 * 1024 * 1024; // past UNACKED_OUTPUT_BYTES (2 MiB), which would hold a watched session with no acks
  try {
    service.spawn({
      session_id: 'u',
      shell: '/bin/sh',
      args: ['-c', `head -c ${total} /dev/zero | tr '\\0' x; exec sleep 60`],
      cwd: tmpdir(),
      env: env(),
      rows: 24,
      cols: 80,
      unwatched: true,
    });
    await waitFor(() => assertContiguous(batches(log, 'u')) >= total, 'every byte reported');
    assert.deepEqual(
      batches(log, 'u').filter(([event]) => event !== 'activity'),
      [],
      'no payload crossed',
    );
  } finally {
    await service.shutdown(2_000);
  }
});

test('watch switches a session to data from the next batch and back; adopt makes it unwatched', async () => {
  const { sink, log } = recorder();
  const service = new PtyService(sink);
  const echoed = (text: string) => () => log.some((e) => e.data['session_id'] === 'w' && e.event === 'data' && e.payload!.includes(text));
  const reported = (bytes: number) => () => assertContiguous(batches(log, 'w')) >= bytes;
  try {
    service.spawn({
      session_id: 'w',
      shell: '/bin/sh',
      args: ['-c', "printf 'hello\\n'; exec cat"],
      cwd: tmpdir(),
      env: env(),
      rows: 24,
      cols: 80,
      unwatched: true,
    });
    await waitFor(reported('hello\r\n'.length), 'the greeting reported');
    service.watch('w', true);
    service.input('w', Buffer.from('one\n'), undefined);
    await waitFor(echoed('one'), 'the watched echo arrives with its bytes');
    service.watch('w', false);
    const before = assertContiguous(batches(log, 'w'));
    service.input('w', Buffer.from('two\n'), undefined);
    // Echo and cat's copy: "two\r\n" twice.
    await waitFor(reported(before + 10), 'the unwatched echo reported');
    assert.ok(!echoed('two')(), 'unwatched again: no payload');
    service.watch('w', true);
    service.adopt();
    const adoptedAt = assertContiguous(batches(log, 'w'));
    service.input('w', Buffer.from('three\n'), undefined);
    await waitFor(reported(adoptedAt + 14), 'reported after the adopt');
    assert.ok(!echoed('three')(), 'adopted: unwatched until the new supervisor watches');
    const kinds = batches(log, 'w').map(([event]) => event);
    assert.ok(kinds.includes('data') && kinds[0] === 'activity', `events: ${kinds.join(', ')}`);
    assertContiguous(batches(log, 'w'));
  } finally {
    await service.shutdown(2_000);
  }
});

test('an unwatched session printing every 10 ms sends a notice per window, not per batch, and its last one before the exit', async () => {
  const { sink, log } = recorder();
  const service = new PtyService(sink);
  try {
    const started = Date.now();
    service.spawn({
      session_id: 'n',
      shell: '/bin/sh',
      args: ['-c', 'i=0; while [ $i -lt 60 ]; do echo $i; sleep 0.01; i=$((i+1)); done'],
      cwd: tmpdir(),
      env: env(),
      rows: 24,
      cols: 80,
      unwatched: true,
    });
    await waitFor(() => log.some((e) => e.event === 'exit' && e.data['session_id'] === 'n'), 'the exit');
    const elapsed = Date.now() - started;
    const mine = log.filter((e) => e.data['session_id'] === 'n');
    const notices = mine.filter((e) => e.event === 'activity').length;
    // 60 lines of "0\r\n".."59\r\n": every byte reported, in order, before the exit.
    assert.equal(assertContiguous(batches(log, 'n')), 10 * 3 + 50 * 4);
    assert.equal(mine.at(-1)!.event, 'exit');
    // One at the start of each window and one at its end at most (a window after the first may start with either).
    assert.ok(notices <= 2 * Math.ceil(elapsed / ACTIVITY_WINDOW_MS) + 2, `${notices} notices in ${elapsed} ms for 60 batches`);
    assert.ok(notices < 60, `${notices} notices for 60 batches`);
  } finally {
    await service.shutdown(2_000);
  }
});
