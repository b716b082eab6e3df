/** Route table: exact paths by map lookup, parameterised paths by segment match; knows 404 from 405. */
import type { HttpMethod, Route } from './types.js';

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
    const segments = route.pattern.split('/').slice(1);
    if (!segments.some((s) => s.startsWith(':'))) {
      let byMethod = this.exact.get(route.pattern);
      if (!byMethod) this.exact.set(route.pattern, (byMethod = new Map()));
      if (byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.pattern}`);
      byMethod.set(route.method, route);
      return;
    }
    let entry = this.patterns.find((p) => p.segments.join('/') === segments.join('/'));
    if (!entry) this.patterns.push((entry = { segments, routes: new Map() }));
    if (entry.routes.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.pattern}`);
    entry.routes.set(route.method, route);
  }

  match(method: HttpMethod, path: string): Match {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const byMethod = this.exact.get(trimmed);
    if (byMethod) return pick(byMethod, method, {});
    const parts = trimmed.split('/').slice(1);
    for (const p of this.patterns) {
      const params = matchSegments(p.segments, parts);
      if (params) return pick(p.routes, method, params);
    }
    return { kind: 'not-found' };
  }
}

function pick(byMethod: Map<HttpMethod, Route>, method: HttpMethod, params: Record<string, string>): Match {
  const route = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
  if (route) return { kind: 'found', route, params };
  return { kind: 'method-not-allowed', allowed: [...byMethod.keys()] };
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    const got = parts[i]!;
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
