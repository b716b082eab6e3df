/**
 * The /mobile PWA: its page and assets (built by scripts/buildMobile.mjs into
 * dist/mobile, compressed once at first use), the login form's routes, and the list of pending
 * `ui confirm` requests the page shows. On TCP an unauthenticated navigation to the page goes to the
 * login page (302 /mobile/login?next=); the socket listener asks nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { type TcpAuth, wantsSecureCookie } from '../http/auth.js';
import { negotiateEncoding } from '../http/compression.js';
import { ErrorBodySchema } from '../http/openapi.js';
import { type AnswerSpec, defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
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

const TAG = 'mobile';

const LoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, errorMessage: 'username is required' }),
    password: Type.String({ minLength: 1, errorMessage: 'password is required' }),
    next: Type.Optional(Type.String({ description: 'Where to go after login: a /mobile path; anything else goes to /mobile.' })),
  },
  { errorMessage: 'body must be a JSON object {username, password, next?}' },
);

const ConfirmSchema = Type.Object({
  request_id: Type.String(),
  title: Type.String(),
  message: Type.Optional(Type.String()),
  origin_session_id: Type.Optional(Type.String({ description: 'The session whose agent asked.' })),
});

const NotBuilt = { description: 'The page is not built (run npm run build).', schema: ErrorBodySchema };
/** 304 when If-None-Match names the current ETag: no body. */
const NotModified = null;

/** The page: HTML, or on TCP without credentials a redirect (302, no body) to the login page. */
const PAGE_ANSWERS: Readonly<Record<number, AnswerSpec | null>> = {
  200: { description: 'The page (HTML).', contentType: 'text/html' },
  302: null,
  304: NotModified,
  429: { description: 'TCP: too many failed logins from this address (Retry-After).', schema: ErrorBodySchema },
  503: NotBuilt,
};
const PAGE_DESCRIPTION =
  'Public, but on TCP the page itself needs credentials (the session cookie, `?token=`, Basic, or the LAN bypass): without them it redirects (302) to `/mobile/login?next=<this path>`. The unix socket asks nothing.';

const ok = Type.Object({ ok: Type.Literal(true) });

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
    if (!existsSync(join(dir, 'index.html')))
      throw new ApiError('unavailable', `the /mobile page is not built (no ${join(dir, 'index.html')}): run npm run build`);
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
    if (!asset) throw new ApiError('not_found', `no such /mobile asset: ${name.slice(0, 100)}`);
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

  const login = async ({ body }: { body: { username: string; password: string; next?: string } }, ctx: RequestContext): Promise<Reply> => {
    const secure = wantsSecureCookie(ctx);
    const outcome = await deps.auth.login(body.username, body.password, ctx.listener === 'socket' ? '127.0.0.1' : ctx.remoteAddress, secure);
    if (!outcome.ok) return outcome.reply;
    return {
      status: 200,
      headers: { 'Set-Cookie': outcome.setCookie!, 'Cache-Control': 'no-store' },
      body: { ok: true, next: safeNext(body.next ?? null) },
    };
  };

  const asset = (pattern: string, summary: string, contentType: string, serveIt: (ctx: RequestContext) => Reply): Route =>
    defineRoute({
      method: 'GET',
      pattern,
      tag: TAG,
      summary,
      answers: { 200: { description: summary, contentType }, 304: NotModified, 503: NotBuilt },
      public: true,
      handler: (_input, ctx) => serveIt(ctx),
    });

  /** The page itself, at each address it opens on (`id`: what that address names). */
  const pageRoute = (pattern: string, summary: string, id?: string): Route =>
    defineRoute({
      method: 'GET',
      pattern,
      tag: TAG,
      summary,
      description: PAGE_DESCRIPTION,
      ...(id === undefined ? {} : { params: Type.Object({ id: Type.String({ description: id }) }) }),
      answers: PAGE_ANSWERS,
      public: true,
      handler: (_input, ctx) => page(ctx),
    });

  return [
    pageRoute('/mobile', 'The phone page (PWA)'),
    pageRoute('/mobile/session/:id', 'The phone page opened on one session', 'The session the page opens.'),
    pageRoute('/mobile/acp', 'The phone page opened on its ACP agents: start one, or return to one started earlier'),
    pageRoute(
      '/mobile/acp/:id',
      "The phone page opened on one ACP connection's conversation (`?session=` picks the session)",
      'The ACP connection the page opens.',
    ),
    asset('/mobile/login', 'The login page', 'text/html', (ctx) => serve(ctx, 'login.html')),
    // The service worker controls /mobile and everything under it, though it lives one level down.
    asset('/mobile/sw.js', 'The service worker (Service-Worker-Allowed: /mobile)', 'text/javascript', (ctx) =>
      serve(ctx, 'sw.js', { 'Service-Worker-Allowed': '/mobile' }),
    ),
    // Code, styles, icons and the manifest hold no secret: public, so the login page can use them too.
    defineRoute({
      method: 'GET',
      pattern: '/mobile/:name',
      tag: TAG,
      summary: "One of the page's files: script, styles, manifest, icons",
      params: Type.Object({ name: Type.String({ description: 'A file name: app.js, app.css, manifest.webmanifest, icon-192.png…' }) }),
      answers: {
        200: { description: 'The file, typed by its extension (.js, .css, .webmanifest, .png, .svg, .html).', contentType: '*/*' },
        304: NotModified,
        404: { description: 'No such file.', schema: ErrorBodySchema },
        503: NotBuilt,
      },
      public: true,
      handler: ({ params }, ctx) => serve(ctx, params.name),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/auth/login',
      tag: 'auth',
      summary: 'Log in with the username and password: sets the session cookie',
      description: 'Rate-limited per address like Basic Auth (429 with Retry-After once over `services.auth.auth_rate_limit_max`).',
      body: LoginBody,
      answers: {
        200: Type.Object({ ok: Type.Literal(true), next: Type.String({ description: 'Where to go now: `next` if it is a /mobile path, else /mobile.' }) }),
        401: { description: 'Invalid credentials.', schema: ErrorBodySchema },
        429: { description: 'Too many failed attempts from this address (Retry-After).', schema: ErrorBodySchema },
        503: { description: 'Password login is not set up (username, password hash or session token missing).', schema: ErrorBodySchema },
      },
      public: true,
      handler: login,
    }),
    {
      ...defineRoute({
        method: 'POST',
        pattern: '/auth/logout',
        tag: 'auth',
        summary: 'Log out: clears the session cookie',
        description: 'Any body is ignored.',
        answers: { 200: ok },
        public: true,
        handler: (_input, ctx) => ({
          status: 200,
          headers: { 'Set-Cookie': deps.auth.logoutCookie(wantsSecureCookie(ctx)), 'Cache-Control': 'no-store' },
          body: { ok: true },
        }),
      }),
      // A beacon or a form may log out: whatever the body is, it is not read.
      noBody: true,
    },
    defineRoute({
      method: 'GET',
      pattern: '/api/mobile/confirms',
      tag: TAG,
      summary: 'The `ui confirm` requests waiting for an answer',
      answers: { 200: Type.Object({ confirms: Type.Array(ConfirmSchema) }) },
      handler: () => json({ confirms: deps.confirms.list() }),
    }),
  ];
}
