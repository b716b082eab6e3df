/**
 * Route table: exact paths by map lookup, parameterised paths by segment match; knows 404 from 405.
 * A last segment `*name` takes the rest of the path (one segment or more, each %-decoded, joined by `/`).
 */
import { type HttpMethod, isStreamHandler, type Route } from './types.js';

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: HttpMethod[] }
  | { kind: 'not-found' };

interface ParamPattern {
  segments: string[];
  routes: Map<HttpMethod, Route>;
}

export class Router {
  private readonly exact = new Map<string, Map<HttpMethod, Route>>();
  private readonly patterns: ParamPattern[] = [];

  add(route: Route): void {
    // match() drops one trailing slash from the path, so a pattern registered with one must drop it too.
    const pattern = route.pattern.length > 1 && route.pattern.endsWith('/') ? route.pattern.slice(0, -1) : route.pattern;
    const segments = pattern.split('/').slice(1);
    if (segments.some((s, i) => s.startsWith('*') && i !== segments.length - 1)) throw new Error(`route ${route.pattern}: a *rest segment must be the last`);
    if (!segments.some((s) => s.startsWith(':') || s.startsWith('*'))) {
      let byMethod = this.exact.get(pattern);
      if (!byMethod) this.exact.set(pattern, (byMethod = new Map()));
      if (byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.pattern}`);
      byMethod.set(route.method, route);
      return;
    }
    // `/s/:id` and `/s/:name` are the same route shape: a second one for the same method could never match.
    const shape = shapeOf(segments);
    if (this.patterns.some((p) => shapeOf(p.segments) === shape && p.routes.has(route.method))) {
      throw new Error(`duplicate route ${route.method} ${route.pattern}`);
    }
    let entry = this.patterns.find((p) => p.segments.join('/') === segments.join('/'));
    if (!entry) this.patterns.push((entry = { segments, routes: new Map() }));
    entry.routes.set(route.method, route);
  }

  match(method: HttpMethod, path: string): Match {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const byMethod = this.exact.get(trimmed);
    if (byMethod) {
      const route = pick(byMethod, method);
      if (route) return { kind: 'found', route, params: {} };
    }
    // Every entry the path matches is asked for the method before answering 405, so a parameter
    // route serving this method is not hidden by an exact or earlier pattern that serves others.
    let allowed: Set<HttpMethod> | null = byMethod ? addAllowed(new Set(), byMethod) : null;
    if (this.patterns.length > 0) {
      const parts = trimmed.split('/').slice(1);
      for (const p of this.patterns) {
        const params = matchSegments(p.segments, parts);
        if (!params) continue;
        const route = pick(p.routes, method);
        if (route) return { kind: 'found', route, params };
        allowed = addAllowed(allowed ?? new Set(), p.routes);
      }
    }
    return allowed ? { kind: 'method-not-allowed', allowed: [...allowed] } : { kind: 'not-found' };
  }
}

function shapeOf(segments: string[]): string {
  return segments.map((s) => (s.startsWith(':') ? ':' : s.startsWith('*') ? '*' : s)).join('/');
}

/**
 * HEAD is served by the GET route, which answers without a body; not by a stream (SSE), whose
 * handler writes as it goes: a HEAD there is a 405 rather than a live subscription with a body.
 */
function pick(byMethod: Map<HttpMethod, Route>, method: HttpMethod): Route | undefined {
  const route = byMethod.get(method);
  if (route !== undefined || method !== 'HEAD') return route;
  const get = byMethod.get('GET');
  return get !== undefined && !isStreamHandler(get.handler) ? get : undefined;
}

function addAllowed(into: Set<HttpMethod>, byMethod: Map<HttpMethod, Route>): Set<HttpMethod> {
  for (const m of byMethod.keys()) into.add(m);
  return into;
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  const rest = pattern[pattern.length - 1]!.startsWith('*');
  if (rest ? parts.length < pattern.length : pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    const got = parts[i]!;
    if (want.startsWith('*')) {
      try {
        params[want.slice(1)] = parts.slice(i).map(decodeURIComponent).join('/');
      } catch {
        return null;
      }
      return params;
    }
    if (want.startsWith(':')) {
      if (got.length === 0) return null;
      try {
        params[want.slice(1)] = decodeURIComponent(got);
      } catch {
        return null; // malformed %-escape: no route can match it
      }
    } else if (want !== got) return null;
  }
  return params;
}
