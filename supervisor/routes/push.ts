/** REFERENCE §1.13 push routes: the public VAPID key, subscribe/unsubscribe, and a test notification. */
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import { PushError } from '../push/pushService.js';
import type { PushService } from '../push/pushService.js';

/** PushError → the same `{error}` reply every other refusal has. */
async function answer(run: () => Promise<object>): Promise<Reply> {
  try {
    return json(await run());
  } catch (err) {
    if (err instanceof PushError) throw new HttpError(err.status, err.message);
    throw err;
  }
}

export function pushRoutes(push: PushService): Route[] {
  return [
    // Public (REFERENCE §1.0): a public key, and the page asks for it before it may have a cookie.
    { method: 'GET', pattern: '/api/push/vapid-key', handler: () => answer(async () => ({ publicKey: await push.publicKey() })), public: true },
    { method: 'POST', pattern: '/api/push/subscribe', handler: (ctx: RequestContext) => answer(() => push.subscribe(parseJsonBody(ctx))) },
    { method: 'DELETE', pattern: '/api/push/subscribe', handler: (ctx: RequestContext) => answer(() => push.unsubscribe(parseJsonBody(ctx))) },
    { method: 'POST', pattern: '/api/push/test', handler: () => answer(() => push.test()) },
  ];
}
