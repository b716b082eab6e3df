/** Web push for the /mobile page: the public VAPID key, subscribe/unsubscribe, and a test notification. */
import { ErrorBodySchema } from '../http/openapi.js';
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { PushSubscriptionSchema, SendReportSchema, SubscribedAnswer, UnsubscribeBody, UnsubscribedAnswer, VapidKeyAnswer } from '../push/pushSchemas.js';
import type { PushService } from '../push/pushService.js';

const TAG = 'push';

const disabled = { description: 'Push is disabled (`services.push.enabled` is false).', schema: ErrorBodySchema };

export function pushRoutes(push: PushService): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/api/push/vapid-key',
      tag: TAG,
      summary: 'The VAPID public key to subscribe with (made on first use)',
      description: 'Public: it is a public key, and the page asks for it before it may have a cookie.',
      answers: { 200: VapidKeyAnswer, 404: disabled },
      public: true,
      handler: async () => json({ publicKey: await push.publicKey() }),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/api/push/subscribe',
      tag: TAG,
      summary: "Store a browser's push subscription (idempotent by endpoint)",
      body: PushSubscriptionSchema,
      answers: {
        200: SubscribedAnswer,
        404: disabled,
        409: { description: 'The subscription limit (100) is reached: remove one first.', schema: ErrorBodySchema },
      },
      handler: async ({ body }) => json(await push.subscribe(body)),
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/api/push/subscribe',
      tag: TAG,
      summary: 'Remove a push subscription by its endpoint',
      body: UnsubscribeBody,
      answers: { 200: UnsubscribedAnswer },
      handler: async ({ body }) => json(await push.unsubscribe(body.endpoint)),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/api/push/test',
      tag: TAG,
      summary: 'Send a test notification to every subscription now',
      answers: {
        200: SendReportSchema,
        404: { description: 'No subscription yet.', schema: ErrorBodySchema },
        503: { description: 'Push is disabled, or its VAPID private key is missing.', schema: ErrorBodySchema },
      },
      handler: async () => json(await push.test()),
    }),
  ];
}
