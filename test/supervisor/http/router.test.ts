import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Router, type Match } from '../../../supervisor/http/router.js';
import type { HttpMethod, Route } from '../../../supervisor/http/types.js';

function route(method: HttpMethod, pattern: string): Route {
  return { method, pattern, handler: () => ({ status: 200 }) };
}

function found(m: Match): { route: Route; params: Record<string, string> } {
  assert.equal(m.kind, 'found', `expected a match, got ${JSON.stringify(m)}`);
  return m as { kind: 'found'; route: Route; params: Record<string, string> };
}

describe('Router', () => {
  it('a last *rest segment takes the rest of the path, each segment decoded; it must be last', () => {
    const r = new Router();
    const data = route('GET', '/api/plugins/:id/data/*path');
    r.add(data);
    assert.deepEqual(found(r.match('GET', '/api/plugins/p/data/a/b%20c/d.json')).params, { id: 'p', path: 'a/b c/d.json' });
    assert.deepEqual(found(r.match('GET', '/api/plugins/p/data/%2e%2e/x')).params, { id: 'p', path: '../x' });
    assert.deepEqual(found(r.match('GET', '/api/plugins/p/data//etc')).params, { id: 'p', path: '/etc' });
    assert.equal(r.match('GET', '/api/plugins/p/data').kind, 'not-found');
    assert.equal(r.match('GET', '/api/plugins/p/data/%zz').kind, 'not-found');
    assert.equal(r.match('POST', '/api/plugins/p/data/a').kind, 'method-not-allowed');
    assert.throws(() => r.add(route('GET', '/x/*rest/y')), /must be the last/);
  });

  it('matches exact routes by method and path', () => {
    const r = new Router();
    const health = route('GET', '/health');
    const put = route('PUT', '/config');
    const get = route('GET', '/config');
    r.add(health);
    r.add(put);
    r.add(get);
    assert.equal(found(r.match('GET', '/health')).route, health);
    assert.equal(found(r.match('PUT', '/config')).route, put);
    assert.equal(found(r.match('GET', '/config')).route, get);
    assert.deepEqual(found(r.match('GET', '/health')).params, {});
  });

  it('matches parameter routes and decodes the parameter', () => {
    const r = new Router();
    const write = route('POST', '/sessions/:id/write');
    const get = route('GET', '/sessions/:id');
    r.add(write);
    r.add(get);
    const m = found(r.match('POST', '/sessions/abc%20def/write'));
    assert.equal(m.route, write);
    assert.deepEqual(m.params, { id: 'abc def' });
    const g = found(r.match('GET', '/sessions/42'));
    assert.equal(g.route, get);
    assert.deepEqual(g.params, { id: '42' });
  });

  it('prefers an exact route over a parameter route for the same path', () => {
    const r = new Router();
    const param = route('GET', '/sessions/:id');
    const exact = route('GET', '/sessions/active');
    r.add(param);
    r.add(exact);
    assert.equal(found(r.match('GET', '/sessions/active')).route, exact);
    assert.equal(found(r.match('GET', '/sessions/other')).route, param);
  });

  it('says not-found for unknown paths, wrong segment counts and empty parameters', () => {
    const r = new Router();
    r.add(route('GET', '/health'));
    r.add(route('GET', '/sessions/:id'));
    assert.deepEqual(r.match('GET', '/nope'), { kind: 'not-found' });
    assert.deepEqual(r.match('GET', '/sessions/a/b'), { kind: 'not-found' });
    assert.deepEqual(r.match('GET', '/sessions//'), { kind: 'not-found' });
    assert.deepEqual(r.match('GET', '/healthz'), { kind: 'not-found' });
  });

  it('says method-not-allowed with the allowed methods for a known path', () => {
    const r = new Router();
    r.add(route('GET', '/config'));
    r.add(route('PUT', '/config'));
    r.add(route('DELETE', '/sessions/:id'));
    const m = r.match('POST', '/config');
    assert.equal(m.kind, 'method-not-allowed');
    assert.deepEqual([...(m as { allowed: HttpMethod[] }).allowed].sort(), ['GET', 'PUT']);
    assert.deepEqual(r.match('GET', '/sessions/x'), { kind: 'method-not-allowed', allowed: ['DELETE'] });
  });

  it('serves HEAD from a GET route, but not from other methods', () => {
    const r = new Router();
    const get = route('GET', '/health');
    r.add(get);
    r.add(route('POST', '/only-post'));
    const pget = route('GET', '/sessions/:id');
    r.add(pget);
    assert.equal(found(r.match('HEAD', '/health')).route, get);
    assert.equal(found(r.match('HEAD', '/sessions/1')).route, pget);
    assert.deepEqual(r.match('HEAD', '/only-post'), { kind: 'method-not-allowed', allowed: ['POST'] });
  });

  it('does not serve HEAD from a GET stream: 405, never a live subscription', () => {
    const r = new Router();
    r.add({ method: 'GET', pattern: '/events', handler: { stream: () => undefined } });
    r.add({ method: 'GET', pattern: '/streams/:id', handler: { stream: () => undefined } });
    assert.deepEqual(r.match('HEAD', '/events'), { kind: 'method-not-allowed', allowed: ['GET'] });
    assert.deepEqual(r.match('HEAD', '/streams/1'), { kind: 'method-not-allowed', allowed: ['GET'] });
    assert.equal(found(r.match('GET', '/events')).route.method, 'GET');
  });

  it('prefers an explicit HEAD route over the GET fallback', () => {
    const r = new Router();
    r.add(route('GET', '/x'));
    const head = route('HEAD', '/x');
    r.add(head);
    assert.equal(found(r.match('HEAD', '/x')).route, head);
  });

  it('ignores one trailing slash on the request path, and on a registered pattern', () => {
    const r = new Router();
    const health = route('GET', '/health');
    const s = route('GET', '/sessions/:id');
    const slashed = route('GET', '/slashed/');
    r.add(health);
    r.add(s);
    r.add(slashed);
    assert.equal(found(r.match('GET', '/health/')).route, health);
    assert.deepEqual(found(r.match('GET', '/sessions/7/')).params, { id: '7' });
    assert.equal(found(r.match('GET', '/slashed')).route, slashed);
    assert.equal(found(r.match('GET', '/slashed/')).route, slashed);
    assert.deepEqual(r.match('GET', '/health//'), { kind: 'not-found' });
  });

  it('matches the root path', () => {
    const r = new Router();
    const root = route('GET', '/');
    r.add(root);
    assert.equal(found(r.match('GET', '/')).route, root);
  });

  it('treats a malformed %-escape in a parameter as not found instead of throwing', () => {
    const r = new Router();
    r.add(route('GET', '/sessions/:id'));
    assert.deepEqual(r.match('GET', '/sessions/%E0%A4%A'), { kind: 'not-found' });
    assert.deepEqual(r.match('GET', '/sessions/%zz'), { kind: 'not-found' });
  });

  it('throws on a duplicate exact or parameter route, but not on a new method', () => {
    const r = new Router();
    r.add(route('GET', '/health'));
    assert.throws(() => r.add(route('GET', '/health')), /duplicate route GET \/health/);
    r.add(route('POST', '/health'));
    r.add(route('GET', '/sessions/:id'));
    assert.throws(() => r.add(route('GET', '/sessions/:id')), /duplicate route/);
    // Same shape under another parameter name could never be reached: also a duplicate.
    assert.throws(() => r.add(route('GET', '/sessions/:sid')), /duplicate route GET \/sessions\/:sid/);
    assert.throws(() => r.add(route('GET', '/health/')), /duplicate route/);
  });

  it('reaches a route of the same shape with another parameter name for another method', () => {
    const r = new Router();
    r.add(route('GET', '/sessions/:id'));
    const del = route('DELETE', '/sessions/:name');
    r.add(del);
    const m = found(r.match('DELETE', '/sessions/x'));
    assert.equal(m.route, del);
    assert.deepEqual(m.params, { name: 'x' });
    const na = r.match('PUT', '/sessions/x');
    assert.equal(na.kind, 'method-not-allowed');
    assert.deepEqual([...(na as { allowed: HttpMethod[] }).allowed].sort(), ['DELETE', 'GET']);
  });

  it('falls through from an exact path to a parameter route that serves the method', () => {
    const r = new Router();
    r.add(route('GET', '/sessions/active'));
    const del = route('DELETE', '/sessions/:id');
    r.add(del);
    const m = found(r.match('DELETE', '/sessions/active'));
    assert.equal(m.route, del);
    assert.deepEqual(m.params, { id: 'active' });
    const na = r.match('PUT', '/sessions/active');
    assert.equal(na.kind, 'method-not-allowed');
    assert.deepEqual([...(na as { allowed: HttpMethod[] }).allowed].sort(), ['DELETE', 'GET']);
  });

  it('tries later overlapping patterns before answering 405', () => {
    const r = new Router();
    r.add(route('GET', '/a/:x'));
    const post = route('POST', '/:y/b');
    r.add(post);
    const m = found(r.match('POST', '/a/b'));
    assert.equal(m.route, post);
    assert.deepEqual(m.params, { y: 'a' });
  });
});
