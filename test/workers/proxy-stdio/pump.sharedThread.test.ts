/**
 * Several pumps in one thread (as the hub runs them): each keeps its own child, respawn clock and
 * request ids; a pump whose channel closes takes only its own child down; a thread that dies on an
 * uncaught exception takes every pump's process group with it (the group reaper).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { isAlive, mockParams, startPumpThread } from './pumpHarness.js';

describe('pumps sharing a thread', { concurrency: true }, () => {
  test('two pumps: own children, own respawn clocks and ids; closing one channel shuts down only its child', async (t) => {
    const thread = startPumpThread(t);
    const [a, b] = await Promise.all([thread.attach(), thread.attach()]);
    // With one respawn clock for the thread the second start would be refused as too fast.
    const startedA = await a.start(mockParams('normal', { name: 'a' }));
    const startedB = await b.start(mockParams('normal', { name: 'b', env: { MOCK_IGNORE_EOF: '1' } }));
    assert.notEqual(startedA.pid, startedB.pid);
    const idA = ((await a.callTool('whoami')) as { id: number }).id;
    const idB = ((await b.callTool('whoami')) as { id: number }).id;
    assert.equal(idA, idB, 'each pump numbers its own requests (initialize, tools/list, then this one)');
    const { pid: grandchildB } = (await b.callTool('grandchild')) as { pid: number };

    // b's child ignores EOF: its pump must still SIGKILL the group after the grace period.
    b.client.dispose();
    await b.until(() => !isAlive(startedB.pid) && !isAlive(grandchildB), 10_000, "b's process group to be gone");
    assert.equal(isAlive(startedA.pid), true, "a's child is not b's business");
    assert.equal(((await a.callTool('whoami')) as { pid: number }).pid, startedA.pid);
    assert.equal((await a.client.request('status', {})).alive, true);
  });

  test('a thread that dies on an uncaught exception takes every pump child (and its group) with it', async (t) => {
    const thread = startPumpThread(t);
    const pumps = await Promise.all([thread.attach(), thread.attach(), thread.attach()]);
    const children = await Promise.all(
      pumps.map(async (pump, n) => {
        const { pid } = await pump.start(mockParams('normal', { name: `crash-${n}`, env: { MOCK_IGNORE_EOF: '1' } }));
        const { pid: grandchild } = (await pump.callTool('grandchild')) as { pid: number };
        return [pid, grandchild];
      }),
    );
    // Not events.once: the thread's uncaught error arrives as an 'error' event first, which once() would reject on.
    const exited = new Promise<number>((resolve) => thread.worker.once('exit', resolve));
    const error = new Promise<Error>((resolve) => thread.worker.once('error', resolve));
    thread.worker.postMessage({ crash: 'a bug in the hosting thread' });
    assert.equal((await error).message, 'a bug in the hosting thread');
    assert.equal(await exited, 1);
    for (const pump of pumps) await pump.until(() => pump.client.closed, 5_000, 'the channel to close with the thread');
    // Children that ignore EOF would outlive a thread that only dropped their pipes: they were killed.
    await pumps[0]!.until(() => children.flat().every((pid) => !isAlive(pid)), 5_000, 'every child and grandchild to be gone');
  });
});
