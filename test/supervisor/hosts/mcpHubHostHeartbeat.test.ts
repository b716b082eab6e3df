// McpHubHost's heartbeat with the real hub worker and a real server-everything stdio upstream. The
// hub is wedged for real, with no hook in production code: the test attaches the inspector to the
// hub's thread (NodeWorker domain) and makes it evaluate `while (true) {}`, a thread alive but stuck
// in a synchronous loop. The unanswered ping ends it; the restarted hub gets the upstream back and
// calls work again. A hub that is only busy for a while (shorter than the timeout) is left alone.
import assert from 'node:assert/strict';
import { Session } from 'node:inspector/promises';
import { after, test } from 'node:test';
import type { Worker } from 'node:worker_threads';

import { toCallToolResult } from '../../../shared/mcpEnvelope.js';
import type { McpHubHost } from '../../../supervisor/hosts/mcpHubHost.js';
import type { UpstreamServer } from '../../../supervisor/upstreams/upstreamConfig.js';
import { startHubHost } from '../../helpers/hubHost.js';
import { until, waitFor } from '../../helpers/poll.js';
import { everythingStdio } from '../../helpers/upstreamServers.js';

const upstream = (name: string) => everythingStdio(name) as unknown as UpstreamServer;

/** The hub's thread, reached behind the host's back: the test wedges it. */
const runningWorker = (host: McpHubHost): Worker | undefined => (host as unknown as { running: { worker: Worker } | null }).running?.worker;

/**
 * The inspector's sessions on worker threads (threadId → sessionId). One inspector session for the
 * file: on Node 20 a second one enabling the NodeWorker domain was never told of the next hub's thread.
 */
let inspector: { session: Session; sessions: Map<string, string> } | undefined;

async function attachTo(worker: Worker): Promise<{ session: Session; sessionId: string }> {
  if (!inspector) {
    const session = new Session();
    session.connect();
    const state = { session, sessions: new Map<string, string>() };
    session.on('NodeWorker.attachedToWorker', ({ params }: { params: { sessionId: string; workerInfo: { workerId: string } } }) => {
      state.sessions.set(params.workerInfo.workerId, params.sessionId);
    });
    await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    inspector = state;
  }
  const { session, sessions } = inspector;
  const id = String(worker.threadId);
  await waitFor(() => sessions.has(id), `the inspector attached to hub thread ${id}`, 5_000);
  return { session, sessionId: sessions.get(id)! };
}

after(() => inspector?.session.disconnect());

let nextMessageId = 1;

/**
 * Runs `expression` on the worker's own thread through the inspector (as a debugger's console
 * would). Resolves once it is sent; `done` once the thread answers (never, for an endless loop).
 */
async function evaluateInWorker(worker: Worker, expression: string): Promise<{ done: Promise<void> }> {
  const { session, sessionId } = await attachTo(worker);
  const id = nextMessageId++;
  const done = new Promise<void>((resolve) => {
    const onMessage = ({ params }: { params: { sessionId: string; message: string } }) => {
      if (params.sessionId !== sessionId || (JSON.parse(params.message) as { id?: number }).id !== id) return;
      session.off('NodeWorker.receivedMessageFromWorker', onMessage);
      resolve();
    };
    session.on('NodeWorker.receivedMessageFromWorker', onMessage);
  });
  await session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method: 'Runtime.evaluate', params: { expression } }) });
  return { done };
}

const readyPid = async (host: McpHubHost) => (await host.status()).find((r) => r.name === 'alpha' && r.status === 'ready')?.pid ?? null;

const echo = async (host: McpHubHost, text: string) => toCallToolResult(await host.call('alpha', 'echo', { message: text }));

test('a hub stuck in a synchronous loop misses its heartbeat, is replaced with its upstream, and calls work again', { timeout: 25_000 }, async (t) => {
  const { lines, host } = startHubHost(t, { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 700 });
  await host.boot([upstream('alpha')]);
  const firstPid = await until(
    () => readyPid(host),
    (pid) => pid !== null,
    'alpha ready',
    15_000,
  );
  assert.match(toCallToolResult(await echo(host, 'before')).content[0]!['text'] as string, /before/);
  const wedged = runningWorker(host)!;

  await evaluateInWorker(wedged, 'while (true) {}');
  // Sent to the wedged thread, which never reads it: the heartbeat's end of the hub fails it, saying so.
  const inFlight = echo(host, 'into the wedge');

  await waitFor(() => runningWorker(host) !== undefined && runningWorker(host) !== wedged, 'a new hub thread in place of the wedged one', 10_000);
  const failed = await inFlight;
  assert.equal(failed.isError, true);
  assert.match(failed.content[0]!['text'] as string, /hub stopped during the call \(.*heartbeat.*\) and is being restarted; the call was not retried/);
  assert.equal(lines.filter((l) => /missed its heartbeat/.test(l)).length, 1, lines.join('\n'));

  // The registered upstream was replayed into the new hub: a new child, and calls reach it.
  const secondPid = await until(
    () => readyPid(host),
    (pid) => pid !== null && pid !== firstPid,
    'alpha ready on the restarted hub',
    15_000,
  );
  assert.notEqual(secondPid, firstPid);
  assert.match(toCallToolResult(await echo(host, 'after')).content[0]!['text'] as string, /after/);
  await waitFor(() => host.listFragment().includes('"alpha__echo"'), 'alpha listed again');
});

test('a hub busy for several heartbeat intervals but less than the timeout is not ended', { timeout: 20_000 }, async (t) => {
  const { lines, host } = startHubHost(t, { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 3_000 });
  await host.boot([upstream('alpha')]);
  await until(
    () => readyPid(host),
    (pid) => pid !== null,
    'alpha ready',
    15_000,
  );
  const busy = runningWorker(host)!;

  // Busy for 4 intervals: the one ping in flight is answered late, the ticks meanwhile send none.
  const spell = await evaluateInWorker(busy, 'for (const end = Date.now() + 400; Date.now() < end; );');
  await spell.done;
  assert.match(toCallToolResult(await echo(host, 'after the busy spell')).content[0]!['text'] as string, /after the busy spell/);
  // A few more beats after the spell, all answered.
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(runningWorker(host), busy, 'the same hub thread');
  assert.ok(!lines.some((l) => /missed its heartbeat|exited/.test(l)), lines.join('\n'));
});
