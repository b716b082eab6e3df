// GET /openapi.json against the router it describes: a real supervisor (in this process, so the
// test can walk its route table), requests over its unix socket. Every route is declared and in the
// document; the document is valid OpenAPI 3.1; every body it calls invalid is refused naming the
// field; every parameter-free GET answers what its 200 schema says.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Validator } from '@seriousme/openapi-schema-validator';
import { Compile } from 'typebox/compile';

import { openApiPath } from '../../../supervisor/http/openapi.js';
import { resolvePaths } from '../../../shared/paths.js';
import { Supervisor } from '../../../supervisor/supervisor.js';
import { testEngine } from '../../helpers/httpEngine.js';
import { shellHomeEnv } from '../../helpers/testHome.js';
import { httpRequest } from '../../helpers/tuicdProcess.js';

type Json = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;

/** A value of none of the types `schema` allows: what a careless client sends. */
function wrongValueFor(schema: Json): unknown {
  const types = new Set<string>();
  const collect = (s: Json) => {
    if (Array.isArray(s['type'])) for (const t of s['type']) types.add(t);
    else if (typeof s['type'] === 'string') types.add(s['type']);
    else if (s['const'] !== undefined) types.add(typeof s['const']);
    for (const branch of [...(s['anyOf'] ?? []), ...(s['oneOf'] ?? [])]) collect(branch);
    if (s['enum']) for (const v of s['enum']) types.add(typeof v);
  };
  collect(schema);
  if (types.size === 0) return undefined; // anything goes: no wrong value exists
  if (!types.has('object')) return { wrong: true };
  if (!types.has('array')) return ['wrong'];
  if (!types.has('boolean')) return true;
  return undefined;
}

describe('GET /openapi.json tells the truth about the router', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-openapi-'));
  const paths = resolvePaths({ configDir: dir });
  let sup: Supervisor;
  let doc: Json;
  // Content-Length always: node's client sends a DELETE body without one otherwise, and the server then sees none.
  const request = (method: string, path: string, body?: string) =>
    httpRequest(
      {
        socketPath: paths.socketPath,
        method,
        path,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
      },
      body,
    );

  before(async () => {
    // Every feature on, so each parameter-free GET has its 200 to give (push answers 404 while off, the session token 503 while unset).
    writeFileSync(paths.configFile, JSON.stringify({ services: { push: { enabled: true }, auth: { session_token: 'openapi-test-token' } } }));
    sup = await Supervisor.start({
      paths,
      env: { ...process.env, ...shellHomeEnv(), TUIC_BIND_HOST: '127.0.0.1', TUIC_CREDENTIAL_STORE: 'file' },
      logLevel: 'fatal',
      engine: testEngine(),
    });
    const answer = await request('GET', '/openapi.json');
    assert.equal(answer.status, 200, answer.text);
    doc = answer.json();
  });

  after(async () => {
    await sup?.stop('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  test('every route the router serves has a schema and is in the document', () => {
    const { routes, wsRoutes } = sup.routeTable();
    assert.ok(routes.length > 50, `the router has its routes (${routes.length})`);
    const undeclared = [
      ...routes.filter((r) => !r.spec).map((r) => `${r.method} ${r.pattern}`),
      ...wsRoutes.filter((r) => !r.spec).map((r) => `WS ${r.pattern}`),
    ];
    assert.deepEqual(undeclared, [], 'routes without a declaration');
    const missing = [
      ...routes.filter((r) => doc['paths'][openApiPath(r.pattern)]?.[r.method.toLowerCase()] === undefined).map((r) => `${r.method} ${r.pattern}`),
      ...wsRoutes.filter((r) => doc['paths'][openApiPath(r.pattern)]?.['get'] === undefined).map((r) => `WS ${r.pattern}`),
    ];
    assert.deepEqual(missing, [], 'routes missing from the document');
    let operations = 0;
    for (const item of Object.values<Json>(doc['paths'])) operations += METHODS.filter((m) => item[m] !== undefined).length;
    assert.equal(operations, routes.length + wsRoutes.length, 'the document has no route the router lacks');
  });

  test('the document is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    assert.deepEqual(result, { valid: true });
    assert.equal(doc['openapi'], '3.1.0');
    assert.deepEqual(Object.keys(doc['components']['securitySchemes']).sort(), ['basicAuth', 'sessionCookie', 'sessionToken']);
  });

  test('a wrong-typed required body field is refused with 400 invalid_input naming the field', async () => {
    const checked: string[] = [];
    for (const [path, item] of Object.entries<Json>(doc['paths'])) {
      for (const method of METHODS) {
        const op = item[method];
        const schema = op?.['requestBody']?.['content']?.['application/json']?.['schema'];
        if (!schema || op['x-body-checked-by'] === 'handler') continue;
        const field = (schema['required'] as string[] | undefined)?.find((name) => wrongValueFor(schema['properties']?.[name] ?? {}) !== undefined);
        if (field === undefined) continue;
        const body = { [field]: wrongValueFor(schema['properties'][field]) };
        const url = path.replace(/\{[^}]+\}/g, 'no-such-thing');
        const answer = await request(method.toUpperCase(), url, JSON.stringify(body));
        const what = `${method.toUpperCase()} ${path} with ${JSON.stringify(body)}`;
        assert.equal(answer.status, 400, `${what}: ${answer.text}`);
        const error = answer.json();
        assert.equal(error.code, 'invalid_input', `${what}: ${answer.text}`);
        assert.equal(error.field, field, `${what}: ${answer.text}`);
        assert.ok(error.error.includes(field), `${what}: the message names the field: ${error.error}`);
        checked.push(`${method} ${path}`);
      }
    }
    assert.ok(checked.length >= 10, `body routes checked: ${checked.join(', ')}`);
  });

  test('every parameter-free JSON GET answers what its 200 schema says', async () => {
    const checked: string[] = [];
    for (const [path, item] of Object.entries<Json>(doc['paths'])) {
      const op = item['get'];
      // Parameter-free: no path or query parameters at all (routes with them are the feature suites' to call).
      if (!op || op['x-stream'] !== undefined || (op['parameters'] ?? []).length > 0) continue;
      const schema = op['responses']?.['200']?.['content']?.['application/json']?.['schema'];
      if (!schema) continue;
      const answer = await request('GET', path);
      assert.equal(answer.status, 200, `GET ${path}: ${answer.text}`);
      const value = JSON.parse(answer.text);
      const check = Compile(schema);
      const errors = check.Check(value) ? [] : check.Errors(value).slice(0, 3);
      assert.deepEqual(errors, [], `GET ${path} answered ${answer.text.slice(0, 300)}`);
      checked.push(path);
    }
    assert.ok(checked.includes('/health') && checked.includes('/sessions') && checked.length >= 10, `GETs checked: ${checked.join(', ')}`);
  });
});
