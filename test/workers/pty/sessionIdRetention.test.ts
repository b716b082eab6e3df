/**
 * A session keeps its id for its whole life; the channel's decoder hands strings out as slices of
 * the decoded message. The id kept must not keep the `spawn` request (and the environment in it) alive.
 */

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test } from 'node:test';

import { decodeEnvelope, encodeEnvelope, Kind } from '../../../shared/codec.js';
import { exposedGc } from '../../../shared/idleGc.js';
import { PtyService } from '../../../workers/pty/ptyService.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { heapNodes } from '../../helpers/heapSnapshot.js';
import { shellHomeEnv } from '../../helpers/testHome.js';

const SESSIONS = 4;
/** Variables in each request's environment: the decoder slices short strings out of runs of the message's text (about 6 KB here). */
const ENV_VARS = 200;
/** Built at run time: this file's own source text (a string in the heap too) must not hold it. */
const ID_PREFIX = ['retention', 'test', 'session', ''].join('-');
/** A string holding an id and this much more is a piece of a request. */
const REQUEST_PIECE_BYTES = 1_000;

function manyVariables(n: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (let i = 0; i < ENV_VARS; i++) env[`TUICD_TEST_${i}`] = `value ${i} of session ${n}`;
  return env;
}

/** A spawn request as the pty host receives it: encoded by the supervisor, decoded from the channel. */
function decodedSpawn(n: number): Parameters<PtyService['spawn']>[0] {
  const params = {
    session_id: `${ID_PREFIX}${n}-${'0'.repeat(20)}`,
    shell: '/bin/sh',
    args: ['-c', `printf 'ready-${n} '; exec sleep 60`],
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv(), ...manyVariables(n) },
    rows: 24,
    cols: 80,
  };
  const envelope = decodeEnvelope(encodeEnvelope([Kind.Request, n, 'spawn', params, 1_000]));
  return envelope[3] as Parameters<PtyService['spawn']>[0];
}

test(`${SESSIONS} live sessions keep no spawn request alive (their ids are not slices of it)`, async () => {
  const service = new PtyService({ emit: () => undefined }, { createTextLog: () => new TextPipeline() });
  try {
    for (let n = 1; n <= SESSIONS; n++) service.spawn(decodedSpawn(n));
    // The decoder keeps its last source until the next decode: one more, small, lets it go.
    decodeEnvelope(encodeEnvelope([Kind.Event, 'ping', {}]));
    exposedGc()();
    const pieces = await heapNodes((n) => n.type.includes('string') && n.selfSize >= REQUEST_PIECE_BYTES && n.name.includes(ID_PREFIX));
    assert.deepEqual(
      pieces.map((n) => n.selfSize),
      [],
      'no piece of a request is left in the heap',
    );
  } finally {
    await service.shutdown(2_000);
  }
});
