/**
 * ACP sessions and the stream against the scripted agent: turns answered at once with their frames
 * on the stream in order, seqs without holes, an exact resume after a viewer drops mid-turn, the
 * dropped-cursor 404 before the upgrade, `end` on delete, `acp-notice` on /events; the session
 * routes, ego's extensions and what an agent without a capability answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { SseClient } from '../../helpers/sseClient.js';
import { AcpHarness, type Frame, turnEnded } from './acpHarness.js';

const text = (f: Frame): string | undefined => f.event?.['notification']?.update?.content?.text;

function assertContiguous(frames: Frame[], from: number): void {
  for (const [i, f] of frames.entries()) assert.equal(f.seq, from + i, `frame ${i} has seq ${f.seq}, expected ${from + i}`);
}

describe('ACP sessions and stream', () => {
  let h: AcpHarness;
  let id: string;
  before(async () => {
    h = await AcpHarness.start();
    id = (await h.connect()).id;
  });
  after(async () => {
    await h.stop();
  });

  it('a prompt answers 202 at once; its turn arrives on the stream in order: turn_started, the updates verbatim, turn_ended with the stopReason', async () => {
    const sid = await h.newSession(id);
    const stream = await h.stream(id);
    const turn = await h.prompt(id, sid, 'chunks 5');
    const ended = await stream.waitFor(turnEnded(turn.turnId), 'the turn end');
    assert.equal(ended.event['stopReason'], 'end_turn');
    const turnFrames = stream.frames.filter((f) => f.seq >= turn.seq && f.seq <= ended.seq);
    assertContiguous(turnFrames, turn.seq);
    assert.equal(turnFrames[0]!.event.type, 'turn_started');
    assert.deepEqual(turnFrames[0]!.event['prompt'], [{ type: 'text', text: 'chunks 5' }]);
    assert.deepEqual(turnFrames.slice(1, -1).map(text), ['chunks 5', 'chunk 1', 'chunk 2', 'chunk 3', 'chunk 4', 'chunk 5']);
    // Verbatim: the notification's params as the agent sent them.
    assert.deepEqual(turnFrames[2]!.event['notification'], {
      sessionId: sid,
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'chunk 1' } },
    });
    assertContiguous(stream.frames, stream.frames[0]!.seq);

    const tool = await h.prompt(id, sid, 'tool');
    await stream.waitFor(turnEnded(tool.turnId), 'the tool turn');
    const updates = stream.events('session_update').map((f) => f.event['notification'].update);
    assert.deepEqual(
      updates.filter((u) => u.toolCallId === 't1').map((u) => [u.sessionUpdate, u.status]),
      [
        ['tool_call', 'pending'],
        ['tool_call_update', 'completed'],
      ],
    );
    stream.close();
  });

  it('a viewer that drops mid-turn resumes with ?after= exactly: no frame twice, none missing', async () => {
    const sid = await h.newSession(id);
    const first = await h.stream(id);
    const turn = await h.prompt(id, sid, 'slow');
    await first.waitFor((f) => text(f) === 'slow 5', 'five slow chunks');
    first.close();
    await first.waitForClose();
    const seen = first.frames;
    const last = seen[seen.length - 1]!.seq;

    const second = await h.stream(id, last);
    await second.waitFor((f) => text(f) === 'slow 10', 'more chunks after the resume');
    const cancel = await h.ok('POST', `/acp/connections/${id}/sessions/${sid}/cancel`);
    assert.equal(cancel.turnId, turn.turnId);
    const ended = await second.waitFor(turnEnded(turn.turnId), 'the cancelled turn');
    assert.equal(ended.event['stopReason'], 'cancelled');
    assertContiguous(second.frames, last + 1);

    // The whole journal read afresh is exactly what the two viewers saw together.
    const whole = await h.stream(id, 0);
    await whole.waitFor((f) => f.seq === ended.seq, 'the whole journal');
    const joined = [...seen, ...second.frames.filter((f) => f.seq <= ended.seq)];
    const fresh = whole.frames.filter((f) => f.seq >= seen[0]!.seq && f.seq <= ended.seq);
    assert.deepEqual(
      joined.map((f) => f.seq),
      fresh.map((f) => f.seq),
    );
    assert.deepEqual(joined, fresh);
    second.close();
    whole.close();
  });

  it('a viewer that stops reading is caught up from the journal when it reads again: every frame once, in order', async () => {
    const sid = await h.newSession(id);
    const start = (await h.ok('GET', `/acp/connections/${id}`)).lastSeq as number;
    const stalled = await h.stream(id, start);
    const live = await h.stream(id, start);
    const socket = (stalled.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const turn = await h.prompt(id, sid, 'chunks 4000');
    const ended = await live.waitFor(turnEnded(turn.turnId), 'the turn at the reading viewer', 60_000);
    socket.resume();
    await stalled.waitFor((f) => f.seq === ended.seq, 'the stalled viewer caught up', 60_000);
    assertContiguous(stalled.frames, start + 1);
    assert.deepEqual(
      stalled.frames.map((f) => f.seq),
      live.frames.filter((f) => f.seq <= ended.seq).map((f) => f.seq),
    );
    stalled.close();
    live.close();
  });

  it('one turn at a time per session (409); unknown sessions 404; a prompt without blocks 400', async () => {
    const sid = await h.newSession(id);
    const stream = await h.stream(id);
    const turn = await h.prompt(id, sid, 'slow');
    const busy = await h.call('POST', `/acp/connections/${id}/sessions/${sid}/prompt`, { prompt: [{ type: 'text', text: 'again' }] });
    assert.equal(busy.status, 409);
    assert.equal(busy.json().sessionId, sid);
    await h.ok('POST', `/acp/connections/${id}/sessions/${sid}/cancel`);
    await stream.waitFor(turnEnded(turn.turnId), 'the cancelled turn');
    const unknown = await h.call('POST', `/acp/connections/${id}/sessions/nope/prompt`, { prompt: [{ type: 'text', text: 'x' }] });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json().operation, 'session/prompt');
    assert.equal((await h.call('POST', `/acp/connections/${id}/sessions/${sid}/prompt`, { prompt: [] })).status, 400);
    assert.equal((await h.call('POST', `/acp/connections/${id}/sessions/${sid}/prompt`, { prompt: 'hi' })).status, 400);
    assert.equal((await h.call('POST', `/acp/connections/${id}/sessions`, { cwd: '/etc' })).status, 400, 'a cwd outside the root');
    stream.close();
  });

  it('session routes: list, resume, close, delete; ego extensions forwarded when advertised, 501 when not', async () => {
    const sid = await h.newSession(id);
    const list = await h.ok('GET', `/acp/connections/${id}/sessions`);
    assert.equal(list.listedByAgent, true);
    assert.ok(list.sessions.some((s: any) => s.sessionId === sid && s.attached === true));
    assert.deepEqual(await h.ok('POST', `/acp/connections/${id}/sessions/${sid}/pause`), { paused: sid });
    for (const verb of ['compact', 'resume-turn', 'fork']) {
      const r = await h.call('POST', `/acp/connections/${id}/sessions/${sid}/${verb}`);
      assert.equal(r.status, 501, `${verb}: ${r.text}`);
      assert.equal(r.json().code, 'capability_unavailable');
    }
    // The agent does not serve set_config_option: its "method not found" is capability_unavailable too.
    const config = await h.call('POST', `/acp/connections/${id}/sessions/${sid}/config`, { configId: 'model', value: 'fast' });
    assert.equal(config.status, 501, config.text);
    await h.ok('POST', `/acp/connections/${id}/sessions/${sid}/close`);
    assert.equal((await h.call('POST', `/acp/connections/${id}/sessions/${sid}/cancel`)).status, 404, 'closed: detached');
    await h.ok('POST', `/acp/connections/${id}/sessions/${sid}/resume`);
    await h.ok('DELETE', `/acp/connections/${id}/sessions/${sid}`);
    const missing = await h.call('POST', `/acp/connections/${id}/sessions/s-unknown/load`);
    assert.equal(missing.status, 502);
    assert.equal(missing.json().code, 'agent_error');
  });

  it('a cursor the journal dropped is refused with 404 before the upgrade; a cursor past the end or not a number 400', async () => {
    const h2 = await AcpHarness.start();
    try {
      const c = await h2.connect();
      const sid = await h2.newSession(c.id);
      const watcher = await h2.stream(c.id);
      const turn = await h2.prompt(c.id, sid, 'chunks 10050');
      await watcher.waitFor(turnEnded(turn.turnId), 'the long turn', 60_000);
      watcher.close();
      const snap = await h2.ok('GET', `/acp/connections/${c.id}`);
      assert.ok(snap.firstSeq > 2, `the journal dropped its oldest frames (first ${snap.firstSeq})`);
      const refused = await h2.stream(c.id, 1).then(
        () => assert.fail('upgraded'),
        (err: { status: number; body: string }) => err,
      );
      assert.equal(refused.status, 404);
      assert.equal(JSON.parse(refused.body).firstAvailable, snap.firstSeq);
      const past = await h2.stream(c.id, snap.lastSeq + 5).catch((err: { status: number }) => err);
      assert.equal((past as { status: number }).status, 400);
      const nan = await h2.stream(c.id, 'abc').catch((err: { status: number }) => err);
      assert.equal((nan as { status: number }).status, 400);
      // The oldest frame still held resumes fine.
      const ok = await h2.stream(c.id, snap.firstSeq - 1);
      await ok.waitFor((f) => f.seq === snap.lastSeq, 'the journal to its end');
      assert.equal(ok.frames[0]!.seq, snap.firstSeq);
      ok.close();
    } finally {
      await h2.stop();
    }
  });

  it('DELETE sends `end` and closes the stream; ready and settled ride /events as acp-notice, turn frames never do', async () => {
    const events = await SseClient.open({ socketPath: h.tuicd.socketPath, path: '/events' });
    const c = await h.connect();
    const sid = await h.newSession(c.id);
    const stream = await h.stream(c.id);
    const turn = await h.prompt(c.id, sid, 'chunks 3');
    await stream.waitFor(turnEnded(turn.turnId), 'the turn');
    await h.ok('DELETE', `/acp/connections/${c.id}`);
    const end = await stream.waitFor((f) => f.kind === 'end', 'the end frame');
    assert.equal(end.reason, 'deleted');
    await stream.waitForClose();
    const notices = () => events.events.filter((e) => e.event === 'acp-notice').map((e) => JSON.parse(e.data));
    await waitForNotice(() => notices().some((n) => n.connection_id === c.id && n.event === 'settled'));
    const mine = notices().filter((n) => n.connection_id === c.id);
    assert.deepEqual(
      mine.map((n) => n.event),
      ['ready', 'settled'],
    );
    assert.equal(mine[0].generation, 1);
    assert.equal(typeof mine[0].seq, 'number');
    assert.ok(!events.raw.includes('chunk 2'), 'turn frames stay off /events');
    events.close();
  });
});

describe('ACP stream: a viewer leaving while its connection is deleted', () => {
  it('is dropped from the viewers (nothing is sent to its closed socket); the others get `end` and DELETE answers 200', async () => {
    // An agent that ignores SIGTERM keeps the DELETE in its kill for the grace period.
    const h = await AcpHarness.start({ ACP_FIXTURE_IGNORE_TERM: '1' });
    try {
      const c = await h.connect();
      const sid = await h.newSession(c.id);
      const leaving = await h.stream(c.id);
      const staying = await h.stream(c.id);
      // The leaving viewer stops reading and falls behind: what it missed waits for it in the journal.
      leaving.ws.pause();
      const turn = await h.prompt(c.id, sid, 'big 60 20000');
      await staying.waitFor(turnEnded(turn.turnId), 'the turn');
      const deleting = h.call('DELETE', `/acp/connections/${c.id}`);
      // The registry forgets the connection first, then waits for the agent to end.
      for (;;) {
        if ((await h.call('GET', `/acp/connections/${c.id}`)).status === 404) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      leaving.ws.terminate();
      const answer = await deleting;
      assert.equal(answer.status, 200, answer.text);
      const end = await staying.waitFor((f) => f.kind === 'end', 'the end frame');
      assert.equal(end.reason, 'deleted');
      await staying.waitForClose();
      assert.equal(staying.closeCode, 1000);
    } finally {
      await h.stop();
    }
  });
});

async function waitForNotice(pred: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('acp-notice not seen');
    await new Promise((r) => setTimeout(r, 20));
  }
}
