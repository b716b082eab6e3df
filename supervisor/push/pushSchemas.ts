/** The wire shapes of the push routes: one typebox schema each. */
import { Type } from 'typebox';

const B64URL = '^[A-Za-z0-9_-]+=*$';

/** What a browser's `PushSubscription.toJSON()` gives; other fields (`expirationTime`) are allowed and not kept. */
export const PushSubscriptionSchema = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, description: "The push service's https URL for this browser.", errorMessage: 'endpoint is required' }),
    keys: Type.Object(
      {
        p256dh: Type.String({
          pattern: B64URL,
          description: "The browser's P-256 public key (65 bytes), base64url.",
          errorMessage: 'keys.p256dh must be a base64url P-256 public key (65 bytes)',
        }),
        auth: Type.String({
          pattern: B64URL,
          description: 'The 16-byte auth secret, base64url.',
          errorMessage: 'keys.auth must be a base64url 16-byte secret',
        }),
      },
      { errorMessage: 'keys {p256dh, auth} is required' },
    ),
  },
  { errorMessage: 'body must be a JSON object {endpoint, keys:{p256dh, auth}}' },
);

export const UnsubscribeBody = Type.Object(
  { endpoint: Type.String({ minLength: 1, description: 'The endpoint of the subscription to remove.', errorMessage: 'endpoint is required' }) },
  { errorMessage: 'body must be a JSON object {endpoint}' },
);

export const VapidKeyAnswer = Type.Object({ publicKey: Type.String({ description: 'The VAPID public key (base64url), for `pushManager.subscribe`.' }) });

export const SubscribedAnswer = Type.Object({
  ok: Type.Literal(true),
  created: Type.Boolean({ description: 'false: this endpoint was subscribed already (updated).' }),
});

export const UnsubscribedAnswer = Type.Object({ ok: Type.Literal(true), removed: Type.Boolean({ description: 'false: no subscription had this endpoint.' }) });

export const SendReportSchema = Type.Object({
  sent: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
  stale_removed: Type.Integer({ minimum: 0, description: 'Subscriptions the push service called gone (404/410), now removed.' }),
});
