/** Auth gate for the TCP listener: rate limit, cookie, ?token, then Basic with bcrypt off the event loop. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { verify as bcryptVerify } from '@node-rs/bcrypt';

import { AuthRateLimiter } from './authRateLimiter.js';
import type { Reply } from './types.js';
import { errorReply } from './errorReply.js';

export const AUTH_REALM = 'TUICommander';
const COOKIE_NAME = 'tui-session';
/**
 * A verified Authorization header is remembered so a client sending Basic on every request does not
 * pay ~250 ms of bcrypt each time; keyed by a digest of header + hash so a password change
 * invalidates it. The TTL slides with use: with a fixed one, every busy client paid bcrypt again
 * each minute, all its requests in flight at once (16 callers burned 4 s of CPU per expiry).
 */
const VERIFIED_CACHE_TTL_MS = 60_000;
const VERIFIED_CACHE_MAX = 256;

export interface AuthSettings {
  username: string;
  passwordHash: string;
  /** Empty when no session token exists; then no cookie is issued. */
  sessionToken: string;
  sessionTokenDurationSecs: number;
  lanAuthBypass: boolean;
  rateLimitMax: number;
  rateLimitWindowSecs: number;
}

/** `byToken`: let in by the session token (its cookie or `?token=`), which replacing the token revokes. */
export type AuthOutcome = { ok: true; setCookie?: string; byToken?: true } | { ok: false; reply: Reply; failure?: boolean };

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Compares secrets in constant time with respect to their contents (lengths hidden by hashing). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function isPrivateAddress(ip: string): boolean {
  return (
    /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|127\.|169\.254\.)/.test(ip) || ip === '::1' || /^f[cd][0-9a-f]{2}:/i.test(ip) || /^fe[89ab][0-9a-f]:/i.test(ip)
  );
}

function cookieValue(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === COOKIE_NAME) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A refusal in the `{error, code}` shape every other error answer has, with the Basic challenge. */
function unauthorized(message: string, headers?: Record<string, string>): Reply {
  return errorReply('unauthorized', message, undefined, { 'WWW-Authenticate': `Basic realm="${AUTH_REALM}"`, ...headers });
}

/** The answer while an address is locked out, whichever credential it tried. */
function lockedOut(waitSecs: number): Reply {
  return errorReply('busy', 'Too many failed authentication attempts', undefined, { 'Retry-After': String(waitSecs) });
}

export type PasswordVerifier = (password: string, hash: string) => Promise<boolean>;

/**
 * What the gate reads of a request. `query` and `remoteAddress` may be getters (the Exchange's are):
 * they are read only when needed, since copying the peer address out of uWS and parsing a query
 * string cost more than the rest of a cached Basic check.
 */
export interface AuthRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly remoteAddress: string;
  /** Came over TLS: a cookie handed out says Secure. */
  readonly tls: boolean;
}

/**
 * A cookie must say Secure when the browser reached us over TLS: on this listener's TLS, or at a
 * TLS-terminating proxy that says so in X-Forwarded-Proto. A client that fakes the header only gets
 * a cookie its browser keeps off plain HTTP.
 */
export function wantsSecureCookie(req: Pick<AuthRequest, 'tls' | 'headers'>): boolean {
  return req.tls || req.headers['x-forwarded-proto']?.toLowerCase() === 'https';
}

export class TcpAuth {
  readonly limiter: AuthRateLimiter;
  private readonly verified = new Map<string, number>();
  /** Verifications under way, by cache key: requests that arrive together share one bcrypt. */
  private readonly verifying = new Map<string, Promise<boolean>>();
  /** How to end each open stream (an SSE stream) that the session token let in. */
  private readonly tokenStreams = new Set<() => void>();

  constructor(
    private readonly settings: () => AuthSettings,
    private readonly now: () => number = Date.now,
    private readonly verifyPassword: PasswordVerifier = bcryptVerify,
  ) {
    this.limiter = new AuthRateLimiter(() => {
      const s = this.settings();
      return { maxFailures: s.rateLimitMax, windowSecs: s.rateLimitWindowSecs };
    }, now);
  }

  /**
   * True when `check` could not accept the request whatever it waited for: no LAN bypass, no
   * Authorization header, and no session cookie or `?token=` while a session token is set. Read
   * synchronously, so a public route that only says more to the authenticated (/health) keeps its
   * fast path for the anonymous caller.
   */
  carriesNoCredential(req: AuthRequest): boolean {
    const s = this.settings();
    if (s.lanAuthBypass || req.headers['authorization'] !== undefined) return false;
    return !s.sessionToken || (cookieValue(req.headers['cookie']) === undefined && req.query.get('token') === null);
  }

  async check(req: AuthRequest): Promise<AuthOutcome> {
    const s = this.settings();
    const { headers } = req;
    // Read at most once (a getter copying out of uWS), and before any wait: once the client has
    // gone, uWS no longer knows its address.
    let address: string | undefined;
    const peer = () => (address ??= req.remoteAddress);
    if (s.lanAuthBypass && isPrivateAddress(peer())) return { ok: true };
    // One lockout for every credential, checked before any is compared: were a right token or
    // cookie let through while locked out, the 429 itself would say which guesses were wrong.
    // With no failure on record anywhere, nobody is locked out: the peer address is not needed.
    const wait = this.limiter.isEmpty ? 0 : this.limiter.retryAfterSecs(peer());
    if (wait > 0) return { ok: false, reply: lockedOut(wait) };
    const cookie = s.sessionToken ? cookieValue(headers['cookie']) : undefined;
    if (cookie !== undefined && safeEqual(cookie, s.sessionToken)) return { ok: true, byToken: true };
    const token = s.sessionToken ? req.query.get('token') : null;
    if (token !== null && safeEqual(token, s.sessionToken)) {
      this.limiter.clear(peer());
      return { ok: true, setCookie: this.cookie(s, wantsSecureCookie(req)), byToken: true };
    }
    // A wrong token or cookie is a guess like a wrong password. A request that also carries Basic
    // is judged by it (a stale cookie beside the right password is no failure); otherwise it
    // counts here, once per request, and a wrong cookie is expired so the browser stops sending it.
    const guessed = token !== null || cookie !== undefined;
    const header = headers['authorization'];
    if (!header || !/^basic /i.test(header) || !s.username || !s.passwordHash) {
      if (!guessed) return { ok: false, reply: unauthorized('Scan the QR code or authenticate with Basic Auth') };
      this.limiter.recordFailure(peer());
      const expire = cookie !== undefined ? { 'Set-Cookie': this.logoutCookie(wantsSecureCookie(req)) } : undefined;
      return { ok: false, reply: unauthorized('Invalid credentials', expire), failure: true };
    }
    const cacheKey = digest(`${header}\0${s.username}\0${s.passwordHash}`).toString('base64');
    const until = this.verified.get(cacheKey);
    if (until !== undefined && until > this.now()) {
      this.remember(cacheKey);
      return this.passed(s, req);
    }
    const ip = peer();
    let verification = this.verifying.get(cacheKey);
    if (verification !== undefined) {
      // Same header as a check under way: one guess, one bcrypt; a refusal still counts per request.
      if (await verification) return this.passed(s, req);
      this.limiter.recordFailure(ip);
      return { ok: false, reply: unauthorized('Invalid credentials'), failure: true };
    }
    // Counted as a failure before bcrypt runs and forgiven if it passes: recorded only afterwards,
    // a burst of N different guesses all passed the lockout check above while none had failed yet.
    const attempt = this.limiter.recordFailure(ip);
    verification = this.verify(header, s, cacheKey).finally(() => this.verifying.delete(cacheKey));
    this.verifying.set(cacheKey, verification);
    if (await verification) {
      this.limiter.forgive(ip, attempt);
      return this.passed(s, req);
    }
    return { ok: false, reply: unauthorized('Invalid credentials'), failure: true };
  }

  /**
   * The /mobile login form (POST /auth/login): the same username, bcrypt hash and per-IP limit as
   * Basic auth; success hands out the `tui-session` cookie, so the page never holds the password.
   * `secure`: the page was served over TLS (wantsSecureCookie), so the cookie must say Secure.
   */
  async login(username: string, password: string, ip: string, secure: boolean): Promise<AuthOutcome> {
    const s = this.settings();
    const wait = this.limiter.retryAfterSecs(ip);
    if (wait > 0) return { ok: false, reply: lockedOut(wait) };
    if (!s.username || !s.passwordHash || !s.sessionToken) {
      const missing = [
        !s.username && 'services.auth.username',
        !s.passwordHash && 'services.auth.password_hash',
        !s.sessionToken && 'services.auth.session_token',
      ]
        .filter(Boolean)
        .join(', ');
      return { ok: false, reply: errorReply('unavailable', `password login is not set up on this server: ${missing} missing`) };
    }
    // Counted before bcrypt and forgiven on success, as in check(): a burst of guesses cannot slip past the limit.
    const attempt = this.limiter.recordFailure(ip);
    const passwordOk = await this.verifyPassword(password, s.passwordHash).catch(() => false);
    if (!(safeEqual(username, s.username) && passwordOk)) {
      return { ok: false, reply: errorReply('unauthorized', 'Invalid credentials'), failure: true };
    }
    this.limiter.forgive(ip, attempt);
    return { ok: true, setCookie: this.cookie(s, secure) };
  }

  /**
   * An open stream the session token let in: `end` closes it once the token is replaced. Returns
   * the unregistration, for a stream that ends by itself.
   */
  trackTokenStream(end: () => void): () => void {
    this.tokenStreams.add(end);
    return () => this.tokenStreams.delete(end);
  }

  /**
   * The session token was replaced (rotated): every open stream it let in ends, as every later
   * request with it is refused; streams the password let in stay. Returns how many ended.
   */
  revokeTokenStreams(): number {
    const ends = [...this.tokenStreams];
    this.tokenStreams.clear();
    for (const end of ends) end();
    return ends.length;
  }

  /** Expires the cookie in this browser (the token itself stays valid for its other holders). */
  logoutCookie(secure: boolean): string {
    return `${COOKIE_NAME}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${secure ? '; Secure' : ''}`;
  }

  private passed(s: AuthSettings, req: AuthRequest): AuthOutcome {
    return { ok: true, ...(s.sessionToken ? { setCookie: this.cookie(s, wantsSecureCookie(req)) } : {}) };
  }

  private async verify(header: string, s: AuthSettings, cacheKey: string): Promise<boolean> {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    // Always run bcrypt, even for a wrong user, so timing does not reveal valid usernames.
    const passwordOk = await this.verifyPassword(password, s.passwordHash).catch(() => false);
    const ok = safeEqual(user, s.username) && passwordOk;
    if (ok) this.remember(cacheKey);
    return ok;
  }

  /** (Re)starts the key's TTL and makes it the newest entry, so the least recently used goes first. */
  private remember(key: string): void {
    this.verified.delete(key);
    if (this.verified.size >= VERIFIED_CACHE_MAX) {
      const first = this.verified.keys().next();
      if (!first.done) this.verified.delete(first.value);
    }
    this.verified.set(key, this.now() + VERIFIED_CACHE_TTL_MS);
  }

  private cookie(s: AuthSettings, secure: boolean): string {
    return `${COOKIE_NAME}=${s.sessionToken}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${s.sessionTokenDurationSecs}${secure ? '; Secure' : ''}`;
  }
}
