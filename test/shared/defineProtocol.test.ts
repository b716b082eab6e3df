/** Contracts: derived types (checked by tsc via @ts-expect-error), validators, and name lookups. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Type } from 'typebox';

import { connect, serve } from '../../shared/channel.js';
import { defineProtocol, type ApiOf, type EventOf, type ParamsOf, type ResultOf } from '../../shared/protocol/defineProtocol.js';
import { createLinkedPair } from '../../shared/transports/inMemory.js';

const Demo = defineProtocol({
  name: 'demo',
  version: 3,
  requests: {
    spawn: { params: Type.Object({ cols: Type.Integer({ minimum: 1 }), cwd: Type.Optional(Type.String()) }), result: Type.Object({ id: Type.String() }) },
  },
  events: { exit: Type.Object({ id: Type.String(), code: Type.Union([Type.Number(), Type.Null()]) }) },
});

test('types derive from the schemas (a wrong call fails to compile)', async (t) => {
  const params: ParamsOf<typeof Demo, 'spawn'> = { cols: 80 };
  const result: ResultOf<typeof Demo, 'spawn'> = { id: 'p1' };
  const exit: EventOf<typeof Demo, 'exit'> = { id: 'p1', code: null };
  const api: ApiOf<typeof Demo> = { spawn: async () => result };
  assert.deepEqual(await api.spawn(params), result);
  assert.equal(exit.code, null);

  const [a, b] = createLinkedPair();
  const server = serve(b, Demo, { spawn: ({ cols }) => ({ id: `p${cols}` }) });
  const client = connect(a, Demo);
  t.after(() => {
    client.dispose();
    server.dispose();
  });
  const reply: { id: string } = await client.request('spawn', { cols: 80 });
  assert.deepEqual(reply, { id: 'p80' });
  // @ts-expect-error cols must be a number
  await assert.rejects(client.request('spawn', { cols: '80' }), { code: 'INVALID_MESSAGE' });
  // @ts-expect-error no such method in the contract
  await assert.rejects(client.request('kill', {}), { code: 'UNKNOWN_METHOD' });
  // @ts-expect-error no such event in the contract
  assert.throws(() => client.on('data', () => {}), TypeError);
  client.on('exit', (e) => {
    const code: number | null = e.code;
    void code;
  });
});

test('validators name the failing path; integers and bounds are enforced', () => {
  assert.equal(Demo.checkParams('spawn', { cols: 80 }), undefined);
  assert.equal(Demo.checkParams('spawn', { cols: 80, cwd: '/tmp' }), undefined);
  assert.match(Demo.checkParams('spawn', { cols: 0 }) ?? '', /^\/cols /);
  assert.match(Demo.checkParams('spawn', { cols: 1.5 }) ?? '', /^\/cols /);
  assert.match(Demo.checkParams('spawn', {}) ?? '', /cols/);
  assert.match(Demo.checkEvent('exit', { id: 'x', code: 'nope' }) ?? '', /code/);
  assert.equal(Demo.checkResult('spawn', { id: 'p1' }), undefined);
});

test('only own names count as methods and events (no prototype lookups)', () => {
  assert.ok(Demo.hasMethod('spawn'));
  for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
    assert.equal(Demo.hasMethod(name), false, name);
    assert.equal(Demo.hasEvent(name), false, name);
  }
});

test('a bad version is refused when the contract is declared', () => {
  assert.throws(() => defineProtocol({ name: 'x', version: 1.5, requests: {}, events: {} }), TypeError);
  assert.throws(() => defineProtocol({ name: 'x', version: -1, requests: {}, events: {} }), TypeError);
});
