/** The shared worker heartbeat: one ping at a time, a miss reported once, nothing sent while inactive. */

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';

import { Heartbeat } from '../../../supervisor/hosts/heartbeat.js';

/** A worker that answers after `answerMs`, or rejects once the ping's timeout passed first. */
function worker(answerMs: () => number) {
  const calls = { pings: 0, maxInFlight: 0, inFlight: 0 };
  const ping = (timeoutMs: number): Promise<void> => {
    calls.pings++;
    calls.inFlight++;
    calls.maxInFlight = Math.max(calls.maxInFlight, calls.inFlight);
    const ms = answerMs();
    return new Promise<void>((resolve, reject) => {
      setTimeout(
        () => {
          calls.inFlight--;
          if (ms <= timeoutMs) resolve();
          else reject(new Error(`no answer in ${timeoutMs} ms`));
        },
        Math.min(ms, timeoutMs),
      );
    });
  };
  return { calls, ping };
}

test('a worker slower than the interval but inside the timeout is pinged one at a time and never reported', async (t) => {
  const w = worker(() => 60);
  const missed: unknown[] = [];
  const hb = new Heartbeat({ intervalMs: 10, timeoutMs: 200, ping: w.ping, active: () => true, onMissed: (e) => missed.push(e) });
  t.after(() => hb.dispose());
  await sleep(400);
  assert.equal(w.calls.maxInFlight, 1);
  assert.ok(w.calls.pings >= 2, `pings ${w.calls.pings}`);
  assert.deepEqual(missed, []);
});

test('a wedged worker is reported once, and the heartbeat stops', async (t) => {
  let wedged = false;
  const w = worker(() => (wedged ? 10_000 : 1));
  const missed: unknown[] = [];
  const hb = new Heartbeat({ intervalMs: 10, timeoutMs: 50, ping: w.ping, active: () => true, onMissed: (e) => missed.push(e) });
  t.after(() => hb.dispose());
  await sleep(60);
  wedged = true;
  await sleep(400);
  assert.equal(missed.length, 1);
  assert.match(String(missed[0]), /no answer in 50 ms/);
  const pings = w.calls.pings;
  await sleep(100);
  assert.equal(w.calls.pings, pings, 'no ping after the miss');
});

test('nothing is sent while inactive, and a miss seen after the worker was replaced is not reported', async (t) => {
  let active = false;
  const w = worker(() => 10_000);
  const missed: unknown[] = [];
  const hb = new Heartbeat({ intervalMs: 10, timeoutMs: 100, ping: w.ping, active: () => active, onMissed: (e) => missed.push(e) });
  t.after(() => hb.dispose());
  await sleep(80);
  assert.equal(w.calls.pings, 0);
  active = true;
  while (w.calls.pings === 0) await sleep(5); // a ping is in flight now (its worker never answers)
  active = false; // replaced before its timeout
  await sleep(250);
  assert.equal(w.calls.pings, 1, 'one ping at a time, none while inactive');
  assert.deepEqual(missed, []);
});
