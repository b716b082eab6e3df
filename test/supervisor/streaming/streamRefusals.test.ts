/**
 * GET /sessions/:id/stream refuses before upgrading, with the same error bodies as the REST routes:
 * an unknown session is 404 not_found, a bad `offset` or `format` is 400 invalid_input naming the
 * query parameter; what it accepts opens.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import WebSocket from 'ws';

import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

/** The status an upgrade gets (101 when it opened) and the refusal's JSON body. */
function upgrade(url: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: null });
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.once('error', reject);
  });
}

describe('stream upgrade refusals', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-stream-refusals-');
  const url = (path: string) => WsViewer.socketUrl(suite.t.socketPath, path);

  it('an unknown session is 404 not_found', async () => {
    assert.deepEqual(await upgrade(url('/sessions/no-such-session/stream')), {
      status: 404,
      body: { error: 'Session not found', code: 'not_found' },
    });
  });

  it('a bad offset or format is 400 invalid_input naming the query parameter, with the texts of before', async () => {
    const s = await suite.create();
    for (const [query, field, error] of [
      ['offset=abc', 'offset', 'offset must be a non-negative integer, got abc'],
      ['offset=-1', 'offset', 'offset must be a non-negative integer, got -1'],
      ['offset=1.5', 'offset', 'offset must be a non-negative integer, got 1.5'],
      ['offset=Infinity', 'offset', 'offset must be a non-negative integer, got Infinity'],
      ['format=html', 'format', 'format must be raw, text or log, got html'],
      ['format=', 'format', 'format must be raw, text or log, got '],
      ['format=log&offset=x', 'offset', 'offset must be a non-negative integer, got x'],
    ] as const) {
      const r = await upgrade(url(`/sessions/${s.session_id}/stream?${query}`));
      assert.deepEqual(r, { status: 400, body: { error, code: 'invalid_input', field, in: 'query' } }, query);
    }
    // The unknown session is told first, whatever the query.
    assert.equal((await upgrade(url('/sessions/no-such-session/stream?offset=abc'))).status, 404);
  });

  it('what it accepts opens: an empty offset is none, any encoding or client', async () => {
    const s = await suite.create();
    for (const query of [
      '',
      'offset=',
      'offset=0',
      'format=log&offset=0',
      'format=text',
      'encoding=binary',
      'encoding=utf8',
      'client=mobile',
      'client=other',
    ]) {
      const r = await upgrade(url(`/sessions/${s.session_id}/stream?${query}`));
      assert.equal(r.status, 101, `${query}: ${JSON.stringify(r.body)}`);
    }
  });

  it('GET /openapi.json describes the upgrade: tag streaming, its parameters, the frames', async () => {
    const doc = (await suite.t.socket('GET', '/openapi.json')).json();
    const op = doc.paths['/sessions/{id}/stream']?.get;
    assert.ok(op, 'the WebSocket route is in the document');
    assert.equal(op['x-stream'], 'websocket');
    assert.deepEqual(op.tags, ['streaming']);
    assert.deepEqual(
      op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`),
      ['path:id', 'query:offset', 'query:format', 'query:encoding', 'query:client', 'query:client_id'],
    );
    const format = op.parameters.find((p: { name: string }) => p.name === 'format');
    assert.deepEqual(
      format.schema.anyOf.map((b: { const: string }) => b.const),
      ['raw', 'text', 'log'],
    );
    for (const frame of ['"output"', '"resync"', '"log"', '"closed"', '1013']) assert.ok(op.description.includes(frame), `the description names ${frame}`);
  });
});
