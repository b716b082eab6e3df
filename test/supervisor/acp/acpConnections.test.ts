/**
 * ACP connections against the scripted agent (test/fixtures/acp): launch and initialize, the
 * snapshot, kill, reconnect into a new generation, delete, and the child's process group gone after
 * each end, tuicd's stop included; refusals in the ACP error shape.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { scriptedAgentExecutable } from '../../fixtures/acp/scriptedAgentLauncher.js';
import { until, waitFor } from '../../helpers/poll.js';
import { makeTestHome } from '../../helpers/testHome.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { AcpHarness, alive, turnEnded } from './acpHarness.js';

function assertAcpError(body: any, code: string, operation: string, connectionId: string | null = null): void {
  assert.equal(body.code, code, JSON.stringify(body));
  assert.equal(typeof body.message, 'string');
  assert.equal(body.operation, operation);
  assert.equal(typeof body.retryable, 'boolean');
  assert.ok('sessionId' in body && 'connectionId' in body, JSON.stringify(body));
  if (connectionId !== null) assert.equal(body.connectionId, connectionId);
}

describe('ACP connections', () => {
  let h: AcpHarness;
  before(async () => {
    h = await AcpHarness.start();
  });
  after(async () => {
    await h.stop();
  });

  it('POST /acp/connections launches the agent in its own process group and answers the initialize snapshot', async () => {
    const snap = await h.connect();
    assert.equal(snap['generation'], 1);
    assert.equal(snap['state'], 'ready');
    assert.equal(snap['root'], h.root);
    assert.equal(snap['protocolVersion'], 1);
    assert.deepEqual(snap['agentInfo'], { name: 'scripted-agent', version: '1.0.0' });
    assert.deepEqual(snap['authMethods'], [{ id: 'none', name: 'No auth' }]);
    assert.equal(snap['agentCapabilities'].loadSession, true);
    const pid = snap['pid'] as number;
    assert.ok(alive(-pid), 'the child leads its own process group');
    const again = await h.ok('GET', `/acp/connections/${snap.id}`);
    assert.equal(again.id, snap.id);
    assert.equal(again.pid, pid);

    await h.ok('DELETE', `/acp/connections/${snap.id}`);
    await waitFor(() => !alive(-pid), 'the process group gone after DELETE');
    const gone = await h.call('GET', `/acp/connections/${snap.id}`);
    assert.equal(gone.status, 404);
    assertAcpError(gone.json(), 'not_found', 'snapshot', snap.id);
  });

  it('kill ends the child; calls then say transport_closed (410); reconnect starts generation 2 under the same id and load replays', async () => {
    const snap = await h.connect();
    const sid = await h.newSession(snap.id);
    const stream = await h.stream(snap.id);
    const { turnId } = await h.prompt(snap.id, sid, 'chunks 2');
    await stream.waitFor(turnEnded(turnId), 'the first turn');

    const killed = await h.ok('POST', `/acp/connections/${snap.id}/kill`);
    assert.equal(killed.state, 'closed');
    assert.equal(killed.pid, null);
    await waitFor(() => !alive(-snap['pid']), 'the group gone after kill');
    const refused = await h.call('POST', `/acp/connections/${snap.id}/sessions/${sid}/prompt`, { prompt: [{ type: 'text', text: 'hi' }] });
    assert.equal(refused.status, 410);
    assertAcpError(refused.json(), 'transport_closed', 'session/prompt', snap.id);
    assert.equal(refused.json().retryable, true);
    assert.equal(refused.json().sessionId, sid);

    const next = await h.ok('POST', `/acp/connections/${snap.id}/reconnect`, { root: h.root });
    assert.equal(next.id, snap.id);
    assert.equal(next.generation, 2);
    assert.equal(next.state, 'ready');
    assert.notEqual(next.pid, snap['pid']);
    await stream.waitFor((f) => f.kind === 'event' && f.event.type === 'generation' && f.generation === 2, 'the generation frame');

    // A session of the old generation is not attached until loaded; load replays its history on the stream.
    const before = stream.frames.length;
    assert.equal((await h.call('POST', `/acp/connections/${snap.id}/sessions/${sid}/prompt`, { prompt: [{ type: 'text', text: 'x' }] })).status, 404);
    await h.ok('POST', `/acp/connections/${snap.id}/sessions/${sid}/load`);
    await stream.waitFor(
      (f) => f.generation === 2 && f.event?.type === 'session_update' && f.event['notification'].update.content?.text === 'chunk 2',
      'the replayed chunk',
    );
    const replayed = stream.frames.slice(before).filter((f) => f.event?.type === 'session_update');
    assert.deepEqual(
      replayed.map((f) => f.event['notification'].update.content.text),
      ['chunks 2', 'chunk 1', 'chunk 2'],
    );
    const turn = await h.prompt(snap.id, sid, 'chunks 1');
    await stream.waitFor(turnEnded(turn.turnId), 'a turn after the reconnect');
    stream.close();
    await h.ok('DELETE', `/acp/connections/${snap.id}`);
  });

  it('the agent crashing mid-turn ends the turn with an error frame and the connection says so', async () => {
    const snap = await h.connect();
    const sid = await h.newSession(snap.id);
    const stream = await h.stream(snap.id);
    const { turnId } = await h.prompt(snap.id, sid, 'crash');
    const ended = await stream.waitFor(turnEnded(turnId), 'the crashed turn’s end');
    assert.equal(ended.event['stopReason'], null);
    assert.equal(ended.event['error'].code, 'transport_closed');
    const state = await stream.waitFor((f) => f.event?.type === 'state' && f.event['state'] === 'closed', 'the closed state');
    assert.equal(state.event['exitCode'], 3);
    const now = await h.ok('GET', `/acp/connections/${snap.id}`);
    assert.equal(now.state, 'closed');
    assert.match(now.reason, /code 3/);
    assert.deepEqual(
      now.sessions.map((s: any) => s.turnId),
      [null],
    );
    stream.close();
    await h.ok('DELETE', `/acp/connections/${snap.id}`);
  });

  it('an agent that answers and exits at once: its last updates and its answer still arrive', async () => {
    const snap = await h.connect();
    const sid = await h.newSession(snap.id);
    const stream = await h.stream(snap.id);
    const { turnId } = await h.prompt(snap.id, sid, 'answer-and-exit');
    const ended = await stream.waitFor(turnEnded(turnId), 'the turn’s end');
    assert.equal(ended.event['stopReason'], 'end_turn', JSON.stringify(ended.event));
    const chunks = stream.frames.filter((f: any) => f.event?.type === 'session_update' && f.event.notification.update.sessionUpdate === 'agent_message_chunk');
    assert.equal(chunks.length, 50);
    await stream.waitFor((f) => f.event?.type === 'state' && f.event['state'] === 'closed', 'the closed state');
    stream.close();
    await h.ok('DELETE', `/acp/connections/${snap.id}`);
  });

  it('session/new takes a cwd below the root only: a symlink below it that leads out is refused', async () => {
    const snap = await h.connect();
    const outside = mkdtempSync(join(tmpdir(), 'acp-outside-'));
    const link = join(h.root, `out-${Date.now()}`);
    symlinkSync(outside, link);
    try {
      const refused = await h.call('POST', `/acp/connections/${snap.id}/sessions`, { cwd: link });
      assert.equal(refused.status, 400, refused.text);
      assertAcpError(refused.json(), 'invalid_input', 'session/new');
      const below = await h.call('POST', `/acp/connections/${snap.id}/sessions`, { cwd: h.root });
      assert.equal(below.status, 200, below.text);
    } finally {
      rmSync(link, { force: true });
      rmSync(outside, { recursive: true, force: true });
      await h.ok('DELETE', `/acp/connections/${snap.id}`);
    }
  });

  it('refuses what it cannot launch, in the ACP error shape', async () => {
    const relative = await h.call('POST', '/acp/connections', { root: 'relative/dir' });
    assert.equal(relative.status, 400);
    assertAcpError(relative.json(), 'invalid_input', 'connect');
    const missing = await h.call('POST', '/acp/connections', { root: `${h.root}/nope` });
    assert.equal(missing.status, 400);
    const noBody = await h.call('POST', '/acp/connections', { root: h.root, executable: '/bin/sh' });
    assert.equal(noBody.status, 400, 'the executable never comes from a request');
    const unknown = await h.call('POST', '/acp/connections/nope/kill');
    assert.equal(unknown.status, 404);
    assertAcpError(unknown.json(), 'not_found', 'kill', 'nope');
  });
});

/** Every agent process the scripted agent's launcher started (each writes its pid as it starts). */
const agentPids = (h: AcpHarness): number[] =>
  readFileSync(join(h.agentDir, 'state', 'pids'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);

/** Still running: in /proc and not a zombie. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('ACP lifecycle calls racing on one connection', () => {
  it('two reconnects at once leave one agent running, and DELETE ends it', async () => {
    const h = await AcpHarness.start();
    try {
      const { id } = await h.connect();
      const reconnect = () => h.call('POST', `/acp/connections/${id}/reconnect`, { root: h.root });
      for (let round = 1; round <= 3; round++) {
        const answers = await Promise.all([reconnect(), reconnect()]);
        for (const a of answers) assert.equal(a.status, 200, a.text);
        const snap = await h.ok('GET', `/acp/connections/${id}`);
        assert.equal(snap.generation, 1 + 2 * round);
        assert.deepEqual(agentPids(h).filter(running), [snap.pid], `round ${round}: only the current generation's agent runs`);
      }
      await h.ok('DELETE', `/acp/connections/${id}`);
      assert.deepEqual(agentPids(h).filter(running), []);
    } finally {
      await h.stop();
    }
  });

  it('a DELETE while a reconnect waits for the old agent to end: no new agent is started', async () => {
    // An agent that ignores SIGTERM holds the reconnect in its kill for the grace period.
    const h = await AcpHarness.start({ ACP_FIXTURE_IGNORE_TERM: '1' });
    try {
      const { id } = await h.connect();
      const reconnecting = h.call('POST', `/acp/connections/${id}/reconnect`, { root: h.root });
      await until(
        () => h.ok('GET', `/acp/connections/${id}`),
        (snap) => snap.pid === null,
        'the reconnect ending the old agent',
      );
      const deleted = await h.call('DELETE', `/acp/connections/${id}`);
      assert.equal(deleted.status, 200, deleted.text);
      const answer = await reconnecting;
      assert.equal(answer.status, 404, answer.text);
      assertAcpError(answer.json(), 'not_found', 'reconnect', id);
      assert.equal(agentPids(h).length, 1, 'no second agent was started');
      assert.deepEqual(agentPids(h).filter(running), []);
    } finally {
      await h.stop();
    }
  });

  it('a DELETE while a reconnect’s new agent is in initialize ends that agent at once', async () => {
    const holdDir = mkdtempSync(join(tmpdir(), 'acp-hold-'));
    const hold = join(holdDir, 'hold');
    const h = await AcpHarness.start({ ACP_FIXTURE_INIT_HOLD: hold });
    try {
      const { id } = await h.connect();
      writeFileSync(hold, '');
      const reconnecting = h.call('POST', `/acp/connections/${id}/reconnect`, { root: h.root });
      await waitFor(() => agentPids(h).length === 2, 'the new agent started');
      const deleted = await h.call('DELETE', `/acp/connections/${id}`);
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(agentPids(h).filter(running), [], 'no agent runs once DELETE answered');
      const answer = await reconnecting;
      assert.equal(answer.status, 404, answer.text);
      assert.ok(existsSync(hold), 'the new agent never got past initialize');
    } finally {
      await h.stop();
      rmSync(holdDir, { recursive: true, force: true });
    }
  });
});

describe('ACP launch failures', () => {
  it('an empty ego_executable is refused (501 capability_unavailable)', async () => {
    const t = await Tuicd.start();
    try {
      const r = await t.socket('POST', '/acp/connections', JSON.stringify({ root: t.home }), { 'content-type': 'application/json' });
      assert.equal(r.status, 501);
      assertAcpError(r.json(), 'capability_unavailable', 'connect');
      assert.match(r.json().message, /ego_executable/);
    } finally {
      await t.stop();
    }
  });

  it('an agent answering another protocol version: 502 unsupported_protocol; one that exits: 502 initialization_failed', async () => {
    for (const [env, code] of [
      [{ ACP_FIXTURE_PROTOCOL: '2' }, 'unsupported_protocol'],
      [{ ACP_FIXTURE_INIT: 'exit' }, 'initialization_failed'],
    ] as const) {
      const h = await AcpHarness.start(env);
      try {
        const r = await h.call('POST', '/acp/connections', { root: h.root });
        assert.equal(r.status, 502, r.text);
        assertAcpError(r.json(), code, 'initialize');
      } finally {
        await h.stop();
      }
    }
  });

  it('the child does not outlive tuicd', async () => {
    const h = await AcpHarness.start();
    const snap = await h.connect();
    const pid = snap['pid'] as number;
    assert.ok(alive(-pid));
    await h.stop();
    await waitFor(() => !alive(-pid), 'the group gone after tuicd stopped');
  });
});

describe('ACP when tuicd dies', () => {
  it('a tuicd killed outright closes the agent’s stdin, and an ACP agent ends with it', async () => {
    const h = await AcpHarness.start();
    try {
      const snap = await h.connect();
      const pid = snap['pid'] as number;
      h.tuicd.child.kill('SIGKILL');
      await h.tuicd.exited;
      await waitFor(() => !alive(-pid), 'the agent gone after tuicd was killed');
    } finally {
      await h.stop();
    }
  });
});

describe('ACP over TCP', () => {
  it('launching needs credentials on TCP like the rest of the API; with them the connection works', async () => {
    const TOKEN = 'acp-tcp-token-5e1f0c2a9b';
    const agent = scriptedAgentExecutable();
    const root = makeTestHome('acp-tcp-root-');
    const t = await Tuicd.start({
      config: { ego_executable: agent.path, services: { server: { enabled: true, port: 0 }, auth: { session_token: TOKEN } } },
    });
    try {
      const body = JSON.stringify({ root });
      const anonymous = await t.tcp('POST', '/acp/connections', body, { 'content-type': 'application/json' });
      assert.equal(anonymous.status, 401);
      const made = await t.tcp('POST', `/acp/connections?token=${TOKEN}`, body, { 'content-type': 'application/json' });
      assert.equal(made.status, 201, made.text);
      const id = made.json().id as string;
      assert.equal((await t.tcp('POST', `/acp/connections/${id}/reconnect`, body, { 'content-type': 'application/json' })).status, 401);
      assert.equal((await t.tcp('GET', `/acp/connections/${id}`)).status, 401);
      assert.equal((await t.tcp('GET', `/acp/connections/${id}?token=${TOKEN}`)).json().state, 'ready');
      assert.equal((await t.socket('DELETE', `/acp/connections/${id}`)).status, 200);
    } finally {
      await t.stop();
      rmSync(agent.dir, { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
    }
  });
});
