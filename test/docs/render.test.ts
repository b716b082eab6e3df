/**
 * The doc renderers on shapes the live document may not have yet: WebSocket and public routes,
 * non-JSON answers, unions, escaping of text that Markdown would eat, and the stale-page report.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { firstDifference } from '../../scripts/docs/generate.js';
import { code, text, typeLabel } from '../../scripts/docs/markdown.js';
import { renderConfiguration, renderHttpApi, splitToolDescription } from '../../scripts/docs/render.js';

const errorRef = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };

const doc = {
  openapi: '3.1.0',
  info: { title: 'tuicd HTTP API', version: '9.9.9' },
  paths: {
    '/health': {
      get: {
        summary: 'Alive?',
        tags: ['monitoring'],
        security: [],
        responses: {
          200: { description: 'OK.', content: { 'application/json': { schema: { type: 'object', properties: { ok: { const: true } }, required: ['ok'] } } } },
        },
      },
    },
    '/sessions/{id}/stream': {
      get: {
        summary: 'Watch a terminal',
        tags: ['streaming'],
        'x-stream': 'websocket',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          101: { description: 'Switching protocols.' },
          404: { description: 'No such session.', ...errorRef },
          500: { description: 'A bug.', ...errorRef },
        },
      },
    },
    '/process/monitor': {
      get: {
        summary: 'A page <with> | pipes',
        tags: ['monitoring'],
        responses: { 200: { description: 'HTML.', content: { 'text/html': {} } }, 500: { description: 'A bug.', ...errorRef } },
      },
    },
  },
  components: {
    securitySchemes: { basicAuth: { type: 'http', scheme: 'basic', description: 'Basic.' } },
    schemas: { Error: { type: 'object', properties: { error: { type: 'string' } } } },
  },
};

describe('doc renderers', () => {
  it('marks WebSocket and public routes, keeps route-specific errors, lists the shared ones once', () => {
    const md = renderHttpApi(doc);
    assert.match(md, /### `GET \/sessions\/\{id\}\/stream`\n\n\*\*WebSocket\*\* · Watch a terminal/);
    assert.match(md, /### `GET \/health`\n\n\*\*public\*\* \(no auth on TCP\) · Alive\?/);
    assert.match(md, /- `404`: No such session\./);
    assert.match(md, /\| `500` +\| A bug\. +\|/, 'the error most routes share is in the Errors table');
    assert.match(md, /- `200` `text\/html`: HTML\./);
    assert.match(md, /A page &lt;with&gt; \\\| pipes/);
    assert.match(md, /- \[monitoring\]\(#monitoring\): `GET \/health`, `GET \/process\/monitor`/);
  });

  it('labels types and escapes text outside code spans only', () => {
    assert.equal(typeLabel({ anyOf: [{ const: 'a' }, { const: 'b' }, { type: 'null' }] }), '"a" | "b" | null');
    assert.equal(typeLabel({ type: 'integer', minimum: 1, maximum: 500 }), 'integer (1–500)');
    assert.equal(typeLabel({ type: 'array', items: { type: 'string', maxLength: 9, minLength: 1 } }), 'string[] (each 1–9 chars)');
    assert.equal(typeLabel({ type: 'object', additionalProperties: { type: 'string' } }), 'map of string');
    assert.equal(text('a <b> `<c>` | d'), 'a &lt;b&gt; `<c>` \\| d');
    assert.equal(code('a`b'), '`` a`b ``');
  });

  it('renders union config fields as their forms and reads action lines back', () => {
    const md = renderConfiguration({
      properties: {
        tls: {
          anyOf: [{ properties: { mode: { const: 'off' } }, required: ['mode'] }, { properties: { mode: { const: 'manual' }, cert: { type: 'string' } } }],
          default: { mode: 'off' },
        },
        server: { type: 'object', properties: { port: { type: 'integer', default: 9876, description: 'TCP port' } } },
      },
    });
    assert.match(md, /\| `tls` +\| object +\| `\{"mode":"off"\}` +\| One of `\{"mode": "off"\}` or `\{"mode": "manual", "cert": string\?\}`\. \|/);
    assert.match(md, /## `server`\n\n\| Field/);
    assert.match(md, /\| `server\.port` +\| integer +\| `9876` +\| TCP port \|/);
    assert.deepEqual(splitToolDescription('What.\n\nActions:\n- list: all of them\n- get: one\n\nNotes.'), {
      summary: 'What.',
      actions: [
        ['list', 'all of them'],
        ['get', 'one'],
      ],
      notes: 'Notes.',
    });
  });

  it('names the first differing line of a stale page', () => {
    assert.equal(firstDifference('a\nb\n', 'a\nb\n'), null);
    assert.deepEqual(firstDifference('a\nb\nc\n', 'a\nB\nc\n'), { line: 2, expected: 'b', actual: 'B' });
    assert.deepEqual(firstDifference('a\n', 'a\nmore\n'), { line: 2, expected: '', actual: 'more' });
  });
});
