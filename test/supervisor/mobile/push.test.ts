/**
 * Web push against a loopback HTTPS push-service stub: the payload tuicd sends is
 * decrypted here with the subscription's own keys, the VAPID signature checked with the public key
 * the page gets; bad subscriptions are refused by name; a 410 removes its subscription. The push
 * triggers (edges of awaiting input / completed / rate limit, ui confirm), the 30 s per-session limit
 * and the "not while the page shows that session" rule run in-process on a clock of the test's own.
 */
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { globalAgent } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ConfigStore } from '../../../supervisor/config/configStore.js';
import { fakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { removeDir } from '../../helpers/removeDir.js';
import { WsViewer } from '../../helpers/wsViewer.js';
import { EventBus } from '../../../supervisor/events/eventBus.js';
import { PushConstants, PushService } from '../../../supervisor/push/pushService.js';
import { ViewerPresence } from '../../../supervisor/streaming/viewerPresence.js';
import { BrowserSubscription, PushServiceStub } from '../../helpers/pushServiceStub.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** Checks the `vapid t=<JWT>, k=<key>` header: ES256 over the JWT with the key the page was given. */
function assertVapid(header: string, publicKey: string, audience: string): void {
  const m = /^vapid t=([^,]+), k=(.+)$/.exec(header);
  assert.ok(m, `Authorization: ${header}`);
  assert.equal(m[2], publicKey);
  const [h, p, sig] = m[1]!.split('.');
  const claims = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8'));
  assert.equal(claims.aud, audience);
  const point = Buffer.from(publicKey, 'base64url');
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
    format: 'jwk',
  });
  assert.ok(
    verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(sig!, 'base64url')),
    'the JWT is signed by the VAPID key',
  );
}

describe('web push through tuicd', { timeout: 60_000 }, () => {
  let stub: PushServiceStub;
  let t: Tuicd;
  before(async () => {
    stub = await PushServiceStub.start();
    t = await Tuicd.start({ env: { NODE_EXTRA_CA_CERTS: stub.certPath }, config: { services: { push: { enabled: true } } } });
  });
  after(async () => {
    await t?.stop();
    await stub?.stop();
  });

  it('hands out a VAPID key kept in the credential store, refuses bad subscriptions, and delivers an encrypted test push', async () => {
    const key = await t.socket('GET', '/api/push/vapid-key');
    assert.equal(key.status, 200, key.text);
    const publicKey = key.json().publicKey as string;
    assert.equal(Buffer.from(publicKey, 'base64url').length, 65);
    assert.equal((await t.socket('GET', '/api/push/vapid-key')).json().publicKey, publicKey, 'the same key every time');
    const onDisk = JSON.parse(readFileSync(join(t.configDir, 'config.json'), 'utf8'));
    assert.equal(onDisk.services.push.vapid_public_key, publicKey);
    assert.ok(!onDisk.services.push.vapid_private_key, 'the private key is not in config.json');
    assert.equal((await t.socket('GET', '/config')).json().services.push.vapid_private_key_exists, true, 'it is in the credential store');

    assert.equal((await t.socket('POST', '/api/push/test', '{}', JSON_HEADERS)).status, 404, 'no subscription yet');
    const bad = async (body: unknown, message: RegExp, field: string, method: 'POST' | 'DELETE' = 'POST') => {
      const text = JSON.stringify(body);
      const r = await t.socket(method, '/api/push/subscribe', text, { ...JSON_HEADERS, 'Content-Length': String(Buffer.byteLength(text)) });
      assert.equal(r.status, 400, r.text);
      assert.match(r.json().error, message);
      assert.equal(r.json().code, 'invalid_input', text);
      assert.equal(r.json().field, field, text);
    };
    const phone = new BrowserSubscription(stub.endpoint('/push/phone'));
    const { keys } = phone.toJSON();
    await bad({}, /^endpoint is required$/, 'endpoint');
    await bad({ ...phone.toJSON(), endpoint: 'http://127.0.0.1/x' }, /https/, 'endpoint');
    await bad({ ...phone.toJSON(), endpoint: 'not a url' }, /^endpoint is not a URL: "not a url"$/, 'endpoint');
    await bad({ endpoint: phone.endpoint, keys: { p256dh: 'AAAA', auth: keys.auth } }, /p256dh/, 'keys.p256dh');
    await bad({ endpoint: phone.endpoint, keys: { p256dh: keys.p256dh, auth: 'x' } }, /auth/, 'keys.auth');
    // Wrong types, named by the body's schema.
    await bad({ endpoint: 42, keys }, /^endpoint is required$/, 'endpoint');
    await bad({ endpoint: phone.endpoint, keys: 'k' }, /^keys \{p256dh, auth\} is required$/, 'keys');
    await bad({ endpoint: phone.endpoint, keys: { p256dh: 65, auth: keys.auth } }, /^keys\.p256dh must be a base64url P-256 public key/, 'keys.p256dh');
    await bad([phone.toJSON()], /^body must be a JSON object \{endpoint, keys:\{p256dh, auth\}\}$/, '');
    await bad({ endpoint: 42 }, /^endpoint is required$/, 'endpoint', 'DELETE');
    await bad({}, /^endpoint is required$/, 'endpoint', 'DELETE');

    const sub = await t.socket('POST', '/api/push/subscribe', JSON.stringify(phone), JSON_HEADERS);
    assert.deepEqual(sub.json(), { ok: true, created: true });
    assert.deepEqual(
      (await t.socket('POST', '/api/push/subscribe', JSON.stringify(phone), JSON_HEADERS)).json(),
      { ok: true, created: false },
      'idempotent by endpoint',
    );

    const sent = await t.socket('POST', '/api/push/test', '{}', JSON_HEADERS);
    assert.deepEqual(sent.json(), { sent: 1, failed: 0, stale_removed: 0 });
    await stub.waitFor(1);
    const push = stub.received[0]!;
    assert.equal(push.path, '/push/phone');
    assert.equal(push.headers['content-encoding'], 'aes128gcm');
    assertVapid(String(push.headers['authorization']), publicKey, stub.endpoint('').replace(/\/$/, ''));
    const message = JSON.parse(phone.decrypt(push.body));
    assert.equal(message.title, 'tuicd');
    assert.equal(message.url, '/mobile');
  });

  it('removes a subscription the push service answers 410 for, and unsubscribes on DELETE', async () => {
    const gone = new BrowserSubscription(stub.endpoint('/push/gone'));
    stub.statusFor.set('/push/gone', 410);
    await t.socket('POST', '/api/push/subscribe', JSON.stringify(gone), JSON_HEADERS);
    const first = await t.socket('POST', '/api/push/test', '{}', JSON_HEADERS);
    assert.deepEqual(first.json(), { sent: 1, failed: 0, stale_removed: 1 });
    const stored = JSON.parse(readFileSync(join(t.configDir, 'push-subscriptions.json'), 'utf8'));
    assert.deepEqual(
      stored.subscriptions.map((s: { endpoint: string }) => s.endpoint),
      [stub.endpoint('/push/phone')],
    );
    const body = JSON.stringify({ endpoint: stub.endpoint('/push/phone') });
    // Node's client sends a DELETE body only with an explicit length (no chunking by default for DELETE).
    const del = await t.socket('DELETE', '/api/push/subscribe', body, { ...JSON_HEADERS, 'Content-Length': String(Buffer.byteLength(body)) });
    assert.deepEqual(del.json(), { ok: true, removed: true });
    assert.equal((await t.socket('POST', '/api/push/test', '{}', JSON_HEADERS)).status, 404);
  });

  it("pushes an agent's question, but not while the page's viewer (client=mobile) shows that session", async () => {
    const phone = new BrowserSubscription(stub.endpoint('/push/agent'));
    await t.socket('POST', '/api/push/subscribe', JSON.stringify(phone), JSON_HEADERS);
    const before = stub.received.length;
    const ESC = '\x1b';
    const ask = (n: number) => ({
      out: `${ESC}[2J${ESC}[H⏺ Bash(rm -r old-${n})\r\n\r\nDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No (esc)\r\n\r\nEsc to cancel · Tab to amend\r\n`,
    });
    const done = { out: `${ESC}[2J${ESC}[H⏺ Done.\r\n` };
    const agentDir = mkdtempSync(join(tmpdir(), 'tuicd-push-agent-'));
    after(() => removeDir(agentDir));
    const agent = fakeAgent(
      'claude',
      [done, { read: '2' }, ask(1), { read: '1' }, done, { read: '2' }, ask(2), { read: '1' }, done, { read: 'q' }, { exit: 0 }],
      agentDir,
    );
    const created = await t.socket('POST', '/sessions', JSON.stringify({ shell: '/bin/sh' }));
    const id = created.json().session_id as string;
    const write = (data: string) => t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data }));
    const until = async (what: string, probe: () => Promise<boolean>) => {
      const end = Date.now() + 20_000;
      while (!(await probe())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const state = async () =>
      ((await t.socket('GET', '/sessions')).json() as Array<{ session_id: string; state: Record<string, unknown> }>).find((r) => r.session_id === id)?.state ??
      {};
    const output = async () => (await t.socket('GET', `/sessions/${id}/output?format=raw&limit=100000`)).json().data as string;
    // A plain viewer (not the page's) hears the parser: a repeated prompt is new only after a screen without it.
    const parsed = await WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${id}/stream?encoding=binary`));
    const cleared = () => parsed.frames.filter((f) => f.type === 'parsed' && (f['event'] as { type: string }).type === 'choice-cleared').length;
    await write(`${agent.command}\n`);
    await until('the agent', async () => (await output()).includes('Done.'));
    // Question 1 while the page shows the session: decided (and skipped) as the state changes.
    const viewer = await WsViewer.open(WsViewer.socketUrl(t.socketPath, `/sessions/${id}/stream?client=mobile&encoding=binary`));
    await write('2');
    await until('question 1', async () => (await state())['choice_prompt'] !== undefined);
    viewer.ws.close();
    await until('the viewer to leave', async () => viewer.closed);
    const clearedBefore = cleared();
    await write('1');
    await until('question 1 answered', async () => (await state())['choice_prompt'] === undefined && cleared() > clearedBefore);
    assert.equal(stub.received.length, before, 'nothing was pushed about question 1');
    // Question 2 with nobody watching: pushed (question 1 set no rate-limit clock: it was never sent).
    await write('2');
    await stub.waitFor(before + 1, 20_000);
    await write('1');
    await write('q');
    parsed.ws.close();
    const pushes = stub.received.slice(before);
    assert.equal(pushes.length, 1, 'one push: question 2 only');
    const message = JSON.parse(phone.decrypt(pushes[0]!.body));
    assert.equal(message.title, 'claude is waiting for you');
    assert.equal(message.body, 'Do you want to proceed?');
    assert.equal(message.url, `/mobile/session/${id}`);
  });
});

describe('push triggers, rate limit and presence (in-process)', () => {
  let stub: PushServiceStub;
  let dir: string;
  let config: ConfigStore;
  const bus = new EventBus();
  const presence = new ViewerPresence();
  let clock = 1_000_000;
  let push: PushService;
  const quiet = { warn: () => undefined, info: () => undefined };
  const caBefore = globalAgent.options.ca;

  before(async () => {
    stub = await PushServiceStub.start();
    // web-push sends through the global HTTPS agent: trust the stub's certificate there.
    globalAgent.options.ca = stub.cert;
    dir = mkdtempSync(join(tmpdir(), 'tuicd-push-unit-'));
    config = new ConfigStore({ path: join(dir, 'config.json') });
    await config.load();
    await config.update({ services: { push: { enabled: true } } });
    push = new PushService({ configDir: dir, config, bus, presence, log: quiet, now: () => clock });
    await push.subscribe(new BrowserSubscription(stub.endpoint('/push/unit')).toJSON());
  });
  after(async () => {
    push.dispose();
    config.dispose();
    bus.dispose();
    globalAgent.options.ca = caBefore;
    await stub.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const state = (id: string, s: Record<string, unknown>) =>
    bus.publish('session-state-changed', { session_id: id, state: { awaiting_input: false, rate_limited: false, last_activity_ms: clock, ...s } });
  const pushes = async () => {
    await push.settled();
    return stub.received.length;
  };

  it('pushes on the edge into awaiting input, at most once per session per 30 s, and again after', async () => {
    state('s1', { agent_state: 'working' });
    assert.equal(await pushes(), 0, 'working is no reason');
    state('s1', { awaiting_input: true, agent_state: 'awaiting_input', question_text: 'Proceed?' });
    assert.equal(await pushes(), 1);
    state('s1', { agent_state: 'working' });
    state('s1', { awaiting_input: true, agent_state: 'awaiting_input' });
    assert.equal(await pushes(), 1, 'a second question inside 30 s is not pushed');
    state('s2', { rate_limited: true, agent_state: 'working' });
    assert.equal(await pushes(), 2, 'the limit is per session');
    clock += PushConstants.PUSH_INTERVAL_MS;
    state('s1', { agent_state: 'completed' });
    assert.equal(await pushes(), 3, 'completion after the interval');
  });

  it('pushes nothing about a session the page is showing; a ui confirm is pushed too', async () => {
    clock += PushConstants.PUSH_INTERVAL_MS;
    presence.add('s3');
    state('s3', { awaiting_input: true, agent_state: 'awaiting_input' });
    assert.equal(await pushes(), 3, 'watched: no push');
    presence.remove('s3');
    state('s3', { agent_state: 'working' });
    state('s3', { awaiting_input: true, agent_state: 'awaiting_input' });
    assert.equal(await pushes(), 4, 'no longer watched: pushed');
    bus.publish('mcp-confirm', { request_id: 'r1', title: 'Deploy?', origin_session_id: 's4' });
    assert.equal(await pushes(), 5);
  });
});
