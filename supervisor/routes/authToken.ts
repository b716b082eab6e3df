/**
 * The remote-access session token (`services.auth.session_token`: the `tui-session` cookie's value
 * and the `?token=` of a QR code). GET hands it to a caller that proved the password (Basic on
 * TCP) or is local (the socket); POST rotate replaces it, which logs every device out: each cookie
 * and token link handed out so far stops working at its next request.
 */
import { randomBytes } from 'node:crypto';

import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import type { ConfigStore } from '../config/configStore.js';
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';

const TAG = 'config';

/** 32 random bytes, base64url: as long as any token a client has been handed. */
function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

export function authTokenRoutes(config: ConfigStore): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/api/auth/session-token',
      tag: TAG,
      summary: 'The session token, for a caller that authenticated with the password (Basic) or comes over the socket',
      description: 'A caller let in by the cookie or `?token=` already holds it and is refused (403). 503 when no token is set.',
      answers: { 200: Type.Object({ token: Type.String() }) },
      handler: (_input, ctx) => {
        // Let in by the token itself (its cookie or link, whatever else the request carries: the cookie is
        // checked before Basic), or without the password: refused, so a page script cannot read an HttpOnly cookie's value here.
        if (ctx.listener === 'tcp' && (ctx.byToken === true || !/^basic /i.test(ctx.headers['authorization'] ?? ''))) {
          throw new ApiError('forbidden', 'The session token is handed only to a caller that authenticated with the password (Basic)');
        }
        const token = config.get().services.auth.session_token;
        if (!token) throw new ApiError('unavailable', 'No session token is configured (services.auth.session_token)');
        return json({ token });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/api/auth/rotate-token',
      tag: TAG,
      summary: 'Replace the session token with a new random one: every device logged in by cookie or token link is logged out',
      description: 'Basic auth (the password) still works; the new token is read with GET /api/auth/session-token.',
      answers: { 200: Type.Object({ ok: Type.Literal(true) }) },
      handler: async () => {
        await config.update({ services: { auth: { session_token: newSessionToken() } } });
        return json({ ok: true });
      },
    }),
  ];
}
