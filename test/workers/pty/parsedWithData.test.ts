/**
 * Parser events ride with the session's next frame (issue 29, the byte path): the text stage runs
 * after a batch has left, and its events used to leave at once, each in a write (and a wake-up of
 * the supervisor) of its own per batch. They now wait for the session's next event, or one
 * coalescing window when none comes, and never overtake one.
 */

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test } from 'node:test';

import type { PtyEventSink } from '../../../workers/pty/ptyService.js';
import { PtyService } from '../../../workers/pty/ptyService.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { shellHomeEnv } from '../../helpers/testHome.js';

const PROGRESS_OSC = String.raw`\033]9;4;1;50\007`;

interface Recorded {
  event: string;
  data: Record<string, unknown>;
  payload?: string;
}

function recorder(onEvent: (r: Recorded, log: Recorded[]) => void): { sink: PtyEventSink; log: Recorded[] } {
  const log: Recorded[] = [];
  const sink: PtyEventSink = {
    emit: (event, data, options) => {
      const r: Recorded = {
        event,
        data: data as Record<string, unknown>,
        ...(options?.payload ? { payload: Buffer.from(options.payload).toString('utf8') } : {}),
      };
      log.push(r);
      onEvent(r, log);
    },
  };
  return { sink, log };
}

function waitFor(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const poll = (): void => {
      if (check()) resolve();
      else setTimeout(poll, 5);
    };
    poll();
  });
}

const env = (): Record<string, string> => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv() });

test('a batch’s parser events are not sent alone after its text stage: they go before the session’s next frame', async () => {
  let afterTextStage: boolean[] | undefined;
  let service!: PtyService;
  const { sink, log } = recorder((r, all) => {
    if (r.event !== 'data' || !r.payload?.includes(']9;4') || afterTextStage !== undefined) return;
    afterTextStage = [];
    // Queued after the text stage's own immediate (the batch was queued for it before the listeners
    // ran): by then the stage has found the progress event.
    setImmediate(() => {
      afterTextStage!.push(all.some((e) => e.event === 'parsed'));
      service.input('s', Buffer.from('x'), undefined); // the echo is the session's next frame
    });
  });
  service = new PtyService(sink, { createTextLog: () => new TextPipeline() });
  try {
    service.spawn({ session_id: 's', shell: '/bin/sh', args: ['-c', `printf '${PROGRESS_OSC}'; exec cat`], cwd: tmpdir(), env: env(), rows: 24, cols: 80 });
    await waitFor(() => log.some((e) => e.event === 'data' && e.payload === 'x'));
    assert.deepEqual(afterTextStage, [false], 'the parser event waited instead of leaving on its own');
    const parsed = log.findIndex((e) => e.event === 'parsed');
    const echo = log.findIndex((e) => e.event === 'data' && e.payload === 'x');
    const osc = log.findIndex((e) => e.event === 'data' && e.payload?.includes(']9;4'));
    assert.ok(parsed > osc && parsed < echo, `parsed (${parsed}) goes after its batch (${osc}) and before the next frame (${echo})`);
    assert.deepEqual(log[parsed]!.data['events'], [{ type: 'progress', state: 1, value: 50 }]);
  } finally {
    await service.shutdown(2_000);
  }
});

test('parser events still leave when no frame follows, and before the exit', async () => {
  const { sink, log } = recorder(() => {});
  const service = new PtyService(sink, { createTextLog: () => new TextPipeline() });
  try {
    service.spawn({ session_id: 'quiet', shell: '/bin/sh', args: ['-c', `printf '${PROGRESS_OSC}'; exec cat`], cwd: tmpdir(), env: env(), rows: 24, cols: 80 });
    await waitFor(() => log.some((e) => e.event === 'parsed'));
    service.spawn({ session_id: 'ends', shell: '/bin/sh', args: ['-c', `printf '${PROGRESS_OSC}'; exit 3`], cwd: tmpdir(), env: env(), rows: 24, cols: 80 });
    await waitFor(() => log.some((e) => e.event === 'exit' && e.data['session_id'] === 'ends'));
    const mine = log.filter((e) => e.data['session_id'] === 'ends').map((e) => e.event);
    assert.ok(mine.indexOf('parsed') >= 0 && mine.indexOf('parsed') < mine.indexOf('exit'), `events of the ending session: ${mine.join(', ')}`);
  } finally {
    await service.shutdown(2_000);
  }
});
