/**
 * The /mobile PWA (issue 18): its page and assets (built by scripts/buildMobile.mjs into
 * dist/mobile, compressed once at first use), the login form's routes, and the list of pending
 * `ui confirm` requests the page shows. On TCP an unauthenticated navigation to the page goes to the
 * login page (302 /mobile/login?next=); the socket listener asks nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

import { negotiateEncoding } from '../http/compression.js';
import { type TcpAuth, wantsSecureCookie } from '../http/auth.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import type { ConfirmBroker } from '../mcp/confirmBroker.js';

/** dist/mobile, next to dist/supervisor (this file runs from dist/supervisor/routes). */
export const MOBILE_ASSET_DIR = fileURLToPath(new URL('../../mobile/', import.meta.url));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** Everything from this server; xterm.js sets inline styles, hence 'unsafe-inline' for styles only. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

interface Asset {
  type: string;
  raw: Buffer;
  gzip: Buffer;
  br: Buffer;
  etag: string;
}

export interface MobileDeps {
  auth: TcpAuth;
  confirms: ConfirmBroker;
  /** Where the built page lives; MOBILE_ASSET_DIR unless a test says otherwise. */
  assetDir?: string;
}

/** `next` must be a path of this page: anything else (another site, `//host`) goes to /mobile. */
export function safeNext(next: string | null | undefined): string {
  if (typeof next !== 'string' || !/^\/mobile(\/[A-Za-z0-9._~/-]*)?(\?[A-Za-z0-9._~=&%-]*)?$/.test(next) || next.includes('//')) return '/mobile';
  return next;
}

export function mobileRoutes(deps: MobileDeps): Route[] {
  const dir = deps.assetDir ?? MOBILE_ASSET_DIR;
  let assets: Map<string, Asset> | undefined;
  const load = (): Map<string, Asset> => {
    if (assets) return assets;
    if (!existsSync(join(dir, 'index.html'))) throw new HttpError(503, `the /mobile page is not built (no ${join(dir, 'index.html')}): run npm run build`);
    const map = new Map<string, Asset>();
    for (const name of readdirSync(dir)) {
      const type = CONTENT_TYPES[extname(name)];
      if (!type) continue;
      const raw = readFileSync(join(dir, name));
      map.set(name, {
        type,
        raw,
        gzip: gzipSync(raw, { level: 9 }),
        br: brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
        etag: `"${createHash('sha256').update(raw).digest('base64url').slice(0, 22)}"`,
      });
    }
    return (assets = map);
  };

  const serve = (ctx: RequestContext, name: string, extra: Record<string, string> = {}): Reply => {
    const asset = load().get(name);
    if (!asset) throw new HttpError(404, `no such /mobile asset: ${name.slice(0, 100)}`);
    // no-cache: revalidated (a 304 by ETag) so a new build shows at once; the service worker serves it offline.
    const headers: Record<string, string> = {
      'Content-Type': asset.type,
      'Cache-Control': 'no-cache',
      ETag: asset.etag,
      'X-Content-Type-Options': 'nosniff',
      ...extra,
    };
    if (asset.type.startsWith('text/html')) {
      headers['Content-Security-Policy'] = CSP;
      headers['Referrer-Policy'] = 'no-referrer';
    }
    if (ctx.headers['if-none-match'] === asset.etag) return { status: 304, headers };
    const encoding = asset.raw.length > 860 ? negotiateEncoding(ctx.headers['accept-encoding']) : null;
    if (encoding === null) return { status: 200, headers, body: asset.raw };
    return { status: 200, headers: { ...headers, 'Content-Encoding': encoding, Vary: 'Accept-Encoding' }, body: encoding === 'br' ? asset.br : asset.gzip };
  };

  /** The page itself: on TCP only with credentials (cookie, ?token=, Basic, LAN bypass), else the login page. */
  const page = async (ctx: RequestContext): Promise<Reply> => {
    if (ctx.listener === 'tcp') {
      const outcome = await deps.auth.check(ctx);
      if (!outcome.ok) {
        if (outcome.reply.status === 429) return outcome.reply;
        const next = safeNext(ctx.path);
        return { status: 302, headers: { Location: `/mobile/login?next=${encodeURIComponent(next)}`, 'Cache-Control': 'no-store' } };
      }
      if (outcome.setCookie) return serve(ctx, 'index.html', { 'Set-Cookie': outcome.setCookie });
    }
    return serve(ctx, 'index.html');
  };

  const login = async (ctx: RequestContext): Promise<Reply> => {
    const body = parseJsonBody<unknown>(ctx);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'body must be a JSON object {username, password, next?}');
    const { username, password, next } = body as Record<string, unknown>;
    if (typeof username !== 'string' || username === '') throw new HttpError(400, 'username is required');
    if (typeof password !== 'string' || password === '') throw new HttpError(400, 'password is required');
    const secure = wantsSecureCookie(ctx);
    const outcome = await deps.auth.login(username, password, ctx.listener === 'socket' ? '127.0.0.1' : ctx.remoteAddress, secure);
    if (!outcome.ok) return outcome.reply;
    return {
      status: 200,
      headers: { 'Set-Cookie': outcome.setCookie!, 'Cache-Control': 'no-store' },
      body: { ok: true, next: safeNext(typeof next === 'string' ? next : null) },
    };
  };

  return [
    { method: 'GET', pattern: '/mobile', handler: page, public: true },
    { method: 'GET', pattern: '/mobile/session/:id', handler: page, public: true },
    { method: 'GET', pattern: '/mobile/login', handler: (ctx) => serve(ctx, 'login.html'), public: true },
    // The service worker controls /mobile and everything under it, though it lives one level down.
    { method: 'GET', pattern: '/mobile/sw.js', handler: (ctx) => serve(ctx, 'sw.js', { 'Service-Worker-Allowed': '/mobile' }), public: true },
    // Code, styles, icons and the manifest hold no secret: public, so the login page can use them too.
    { method: 'GET', pattern: '/mobile/:name', handler: (ctx) => serve(ctx, ctx.params['name']!), public: true },
    { method: 'POST', pattern: '/auth/login', handler: login, public: true },
    {
      method: 'POST',
      pattern: '/auth/logout',
      handler: (ctx) => ({
        status: 200,
        headers: { 'Set-Cookie': deps.auth.logoutCookie(wantsSecureCookie(ctx)), 'Cache-Control': 'no-store' },
        body: { ok: true },
      }),
      public: true,
      noBody: true,
    },
    { method: 'GET', pattern: '/api/mobile/confirms', handler: () => json({ confirms: deps.confirms.list() }) },
  ];
}
