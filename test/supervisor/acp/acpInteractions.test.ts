/**
 * Questions an ACP agent asks a person, and the client-side methods tuicd serves it: a permission
 * listed, announced on /events and answered exactly once (bad option 400, second answer 409); a
 * turn cancelled while its question waits answers it `cancelled`; an elicitation's form answered;
 * fs reads and writes inside the root only; terminal/* backed by a real tuicd session; Web Push for
 * a question nobody watches (in-process, against the push-service stub).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { globalAgent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { acpPresenceKey } from '../../../supervisor/acp/acpPresence.js';
import { ConfigStore } from '../../../supervisor/config/configStore.js';
import { EventBus } from '../../../supervisor/events/eventBus.js';
import { PushService } from '../../../supervisor/push/pushService.js';
import { ViewerPresence } from '../../../supervisor/streaming/viewerPresence.js';
import { until } from '../../helpers/poll.js';
import { BrowserSubscription, PushServiceStub } from '../../helpers/pushServiceStub.js';
import { SseClient } from '../../helpers/sseClient.js';
import { WsViewer } from '../../helpers/wsViewer.js';
import { AcpHarness, turnEnded } from './acpHarness.js';

describe('ACP interactions and client methods', () => {
  let h: AcpHarness;
  let id: string;
  before(async () => {
    h = await AcpHarness.start();
    id = (await h.connect()).id;
  });
  after(async () => {
    await h.stop();
  });

  it('a permission request waits for a person: listed, noticed on /events, answered once', async () => {
    const events = await SseClient.open({ socketPath: h.tuicd.socketPath, path: '/events' });
    const sid = await h.newSession(id);
    const stream = await h.stream(id);
    const turn = await h.prompt(id, sid, 'permission');
    const raised = await stream.waitFor((f) => f.event?.type === 'interaction_raised', 'the question on the stream');
    const { interactions } = await h.ok('GET', `/acp/connections/${id}/interactions`);
    assert.equal(interactions.length, 1);
    const q = interactions[0];
    assert.equal(q.kind, 'permission');
    assert.equal(q.sessionId, sid);
    assert.equal(q.requestId, raised.event['interaction'].requestId);
    assert.equal(q.request.toolCall.title, 'Delete build/');
    assert.deepEqual(
      q.request.options.map((o: any) => o.optionId),
      ['allow', 'reject'],
    );
    const notice = await until(
      () => events.events.filter((e) => e.event === 'acp-notice').map((e) => JSON.parse(e.data)),
      (ns) => ns.some((n) => n.event === 'interaction_pending'),
      'the interaction_pending notice',
    );
    assert.deepEqual(
      notice.find((n) => n.event === 'interaction_pending'),
      {
        event: 'interaction_pending',
        connection_id: id,
        generation: 1,
        seq: raised.seq,
        session_id: sid,
        request_id: q.requestId,
      },
    );

    const bad = await h.call('POST', `/acp/connections/${id}/permissions/${q.requestId}/response`, { optionId: 'maybe' });
    assert.equal(bad.status, 400);
    assert.equal((await h.call('POST', `/acp/connections/${id}/permissions/${q.requestId}/response`, { optionId: 'allow', extra: 1 })).status, 400);
    assert.equal((await h.call('POST', `/acp/connections/${id}/elicitations/${q.requestId}/response`, { action: 'accept' })).status, 404, 'not an elicitation');
    await h.ok('POST', `/acp/connections/${id}/permissions/${q.requestId}/response`, { optionId: 'allow' });
    const again = await h.call('POST', `/acp/connections/${id}/permissions/${q.requestId}/response`, { optionId: 'reject' });
    assert.equal(again.status, 409);
    assert.equal((await h.call('POST', `/acp/connections/${id}/permissions/unknown/response`, { optionId: 'allow' })).status, 404);

    const ended = await stream.waitFor(turnEnded(turn.turnId), 'the turn end');
    assert.equal(ended.event['stopReason'], 'end_turn');
    assert.ok(stream.agentText().includes('selected:allow'));
    const settled = stream.events('interaction_settled')[0]!;
    assert.equal(settled.event['reason'], 'answered');
    assert.deepEqual(settled.event['answer'], { outcome: { outcome: 'selected', optionId: 'allow' } });
    assert.deepEqual((await h.ok('GET', `/acp/connections/${id}/interactions`)).interactions, []);
    await until(
      () => events.events.filter((e) => e.event === 'acp-notice').map((e) => JSON.parse(e.data).event),
      (ns) => ns.includes('interaction_settled'),
      'the interaction_settled notice',
    );
    stream.close();
    events.close();
  });

  it('cancelling the turn while its question waits answers it cancelled; a late answer is a conflict', async () => {
    const sid = await h.newSession(id);
    const stream = await h.stream(id);
    const turn = await h.prompt(id, sid, 'permission');
    const raised = await stream.waitFor((f) => f.event?.type === 'interaction_raised' && f.event['interaction'].sessionId === sid, 'the question');
    await h.ok('POST', `/acp/connections/${id}/sessions/${sid}/cancel`);
    const ended = await stream.waitFor(turnEnded(turn.turnId), 'the cancelled turn');
    assert.equal(ended.event['stopReason'], 'cancelled');
    const settled = stream.events('interaction_settled').find((f) => f.event['sessionId'] === sid)!;
    assert.equal(settled.event['reason'], 'cancelled');
    const late = await h.call('POST', `/acp/connections/${id}/permissions/${raised.event['interaction'].requestId}/response`, { optionId: 'allow' });
    assert.equal(late.status, 409);
    stream.close();
  });

  it('an elicitation is answered with its form values', async () => {
    const sid = await h.newSession(id);
    const stream = await h.stream(id);
    const turn = await h.prompt(id, sid, 'elicit');
    const raised = await stream.waitFor((f) => f.event?.type === 'interaction_raised' && f.event['interaction'].sessionId === sid, 'the form');
    assert.equal(raised.event['interaction'].kind, 'elicitation');
    assert.equal(raised.event['interaction'].request.message, 'Your name?');
    const rid = raised.event['interaction'].requestId;
    assert.equal((await h.call('POST', `/acp/connections/${id}/elicitations/${rid}/response`, { action: 'maybe' })).status, 400);
    await h.ok('POST', `/acp/connections/${id}/elicitations/${rid}/response`, { action: 'accept', content: { name: 'Ada' } });
    await stream.waitFor(turnEnded(turn.turnId), 'the turn end');
    assert.ok(stream.agentText().includes('elicited:{"action":"accept","content":{"name":"Ada"}}'), JSON.stringify(stream.agentText()));
    stream.close();
  });

  it('fs/read_text_file and fs/write_text_file reach files inside the root only (no .., no symlink out)', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'acp-outside-'));
    try {
      writeFileSync(join(outside, 'secret.txt'), 'secret');
      symlinkSync(outside, join(h.root, 'link'));
      writeFileSync(join(h.root, 'notes.txt'), 'hello notes');
      const sid = await h.newSession(id);
      const stream = await h.stream(id);
      const run = async (text: string) => {
        const turn = await h.prompt(id, sid, text);
        await stream.waitFor(turnEnded(turn.turnId), text);
        return stream.agentText().at(-1)!;
      };
      assert.equal(await run(`read ${h.root}/notes.txt`), 'read:hello notes');
      assert.equal(await run(`write ${h.root}/sub/new.txt made by the agent`), 'written');
      assert.equal(readFileSync(join(h.root, 'sub/new.txt'), 'utf8'), 'made by the agent');
      assert.match(await run(`read ${h.root}/../${outside.split('/').pop()}/secret.txt`), /^read-error:/);
      assert.match(await run(`read ${h.root}/link/secret.txt`), /^read-error:/);
      assert.match(await run(`write ${h.root}/link/planted.txt x`), /^write-error:/);
      assert.ok(!existsSync(join(outside, 'planted.txt')));
      assert.match(await run('read relative.txt'), /^read-error:/);
      stream.close();
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('terminal/* runs the command in a real tuicd session the phone can watch', async () => {
    const sid = await h.newSession(id);
    const stream = await h.stream(id);
    // The command waits for a file of the test's, so the session is watched while it runs.
    const turn = await h.prompt(id, sid, 'terminal while [ ! -f go ]; do sleep 0.05; done; echo from-terminal; exit 4');
    const started = await stream.waitFor((f) => /^terminal:/.test(f.event?.['notification']?.update?.content?.text ?? ''), 'the terminal id');
    const terminalId = started.event['notification'].update.content.text.slice('terminal:'.length);
    const listed = (await h.ok<any[]>('GET', '/sessions')).find((s) => s.session_id === terminalId);
    assert.ok(listed, 'the terminal is a tuicd session');
    assert.equal(listed.cwd, h.root);
    const viewer = await WsViewer.open(WsViewer.socketUrl(h.tuicd.socketPath, `/sessions/${terminalId}/stream`));
    assert.ok((await h.ok('GET', `/acp/connections/${id}`)).terminals.includes(terminalId));
    writeFileSync(join(h.root, 'go'), '');
    await viewer.waitFor(() => viewer.text().includes('from-terminal'), 10_000, 'the output on the terminal stream');
    viewer.close();
    await stream.waitFor(turnEnded(turn.turnId), 'the turn end');
    assert.ok(stream.agentText().includes('exit:4 output:from-terminal'), JSON.stringify(stream.agentText()));
    // It was a tuicd session (released at the end of the turn: no longer listed).
    await until(
      () => h.ok<any[]>('GET', '/sessions'),
      (all) => !all.some((s) => s.session_id === terminalId),
      'the released terminal gone from /sessions',
    );
    stream.close();
  });
});

describe('ACP questions and Web Push (in-process)', () => {
  let stub: PushServiceStub;
  let dir: string;
  let config: ConfigStore;
  const bus = new EventBus();
  const presence = new ViewerPresence();
  let push: PushService;
  const caBefore = globalAgent.options.ca;

  before(async () => {
    stub = await PushServiceStub.start();
    globalAgent.options.ca = stub.cert;
    dir = mkdtempSync(join(tmpdir(), 'tuicd-acp-push-'));
    config = new ConfigStore({ path: join(dir, 'config.json') });
    await config.load();
    await config.update({ services: { push: { enabled: true } } });
    push = new PushService({ configDir: dir, config, bus, presence, log: { warn: () => undefined, info: () => undefined } });
    await push.subscribe(new BrowserSubscription(stub.endpoint('/push/acp')).toJSON());
  });
  after(async () => {
    push.dispose();
    config.dispose();
    bus.dispose();
    globalAgent.options.ca = caBefore;
    await stub.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const pending = (connection: string) =>
    bus.publish('acp-notice', { event: 'interaction_pending', connection_id: connection, generation: 1, seq: 3, session_id: 's', request_id: 'r' });
  const pushes = async () => {
    await push.settled();
    return stub.received.length;
  };

  it('pushes a question on a connection nobody watches, not one whose stream is open', async () => {
    presence.add(acpPresenceKey('watched'));
    pending('watched');
    assert.equal(await pushes(), 0, 'watched: no push');
    bus.publish('acp-notice', { event: 'ready', connection_id: 'c1', generation: 1, seq: 1 });
    assert.equal(await pushes(), 0, 'ready is no reason');
    pending('c1');
    assert.equal(await pushes(), 1);
  });

  it('spaces a connection’s pushes out until its agent ends, then forgets it', async () => {
    const before = await pushes();
    pending('c2');
    assert.equal(await pushes(), before + 1);
    pending('c2');
    assert.equal(await pushes(), before + 1, 'a second question at once: no second push');
    bus.publish('acp-notice', { event: 'settled', connection_id: 'c2', generation: 1, seq: 9 });
    pending('c2');
    assert.equal(await pushes(), before + 2, 'the entry went with the agent: the next generation’s question is pushed');
  });
});

describe('ACP questions and Web Push through tuicd', () => {
  it('only the /mobile page’s stream (?client=mobile) holds a question’s push back', async () => {
    const stub = await PushServiceStub.start();
    const h = await AcpHarness.start({}, undefined, { env: { NODE_EXTRA_CA_CERTS: stub.certPath }, config: { services: { push: { enabled: true } } } });
    try {
      const phone = new BrowserSubscription(stub.endpoint('/push/phone'));
      await h.ok('POST', '/api/push/subscribe', phone.toJSON());
      const ask = async (client: string | undefined) => {
        const { id } = await h.connect();
        const sid = await h.newSession(id);
        const stream = await h.stream(id, undefined, client);
        const turn = await h.prompt(id, sid, 'permission');
        await stream.waitFor((f) => f.event?.type === 'interaction_raised', 'the question');
        return { id, stream, turn };
      };
      // Shown on the phone: no push. Watched by another client only: pushed.
      const onPhone = await ask('mobile');
      const elsewhere = await ask(undefined);
      await stub.waitFor(1);
      const tags = stub.received.map((p) => JSON.parse(phone.decrypt(p.body)).tag);
      assert.deepEqual(tags, [`acp:${elsewhere.id}`]);
      for (const q of [onPhone, elsewhere]) q.stream.close();
    } finally {
      await h.stop();
      await stub.stop();
    }
  });
});
