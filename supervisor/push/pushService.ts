/**
 * Web push for the /mobile page: VAPID keys in the config (the private key goes to
 * the credential store through the config vault), subscriptions in `push-subscriptions.json` (owner
 * only), and a notification when a session starts awaiting input, completes, hits a rate limit, or a
 * `ui confirm` opens, or an ACP agent asks a question (`acp-notice` interaction_pending). At most one
 * per session (or ACP connection) per PUSH_INTERVAL_MS, none while a viewer shows it (ViewerPresence:
 * the /mobile page's session view, an ACP stream); a 404/410 from the push service removes the
 * subscription. Payloads are encrypted (aes128gcm) and signed by the maintained `web-push` package.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import webpush from 'web-push';

import { ApiError } from '../../shared/apiError.js';
import type { Disposable } from '../../shared/disposable.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { validatorOf } from '../../shared/schemaCheck.js';
import { atomicWriteFile } from '../config/atomicWrite.js';
import type { ConfigStore } from '../config/configStore.js';
import type { EventBus } from '../events/eventBus.js';
import type { ViewerPresence } from '../streaming/viewerPresence.js';
import { acpPresenceKey } from '../acp/acpPresence.js';
import { PushSubscriptionSchema } from './pushSchemas.js';

export const PushConstants = {
  /** At most one push per session per 30 s (`last_push_ms`): a busy agent must not buzz a phone every second. */
  PUSH_INTERVAL_MS: 30_000,
  /** A push nobody could deliver within this long is dropped by the push service. */
  TTL_SECS: 300,
  /** Bound on stored subscriptions: each is one phone or browser. */
  MAX_SUBSCRIPTIONS: 100,
  /** What the push service gets to answer before a send counts as failed. */
  SEND_TIMEOUT_MS: 10_000,
} as const;

export interface PushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface SendReport {
  sent: number;
  failed: number;
  stale_removed: number;
}

export interface PushMessage {
  title: string;
  body: string;
  /** Where a tap on the notification leads: /mobile/session/<id> or /mobile. */
  url: string;
  tag: string;
}

export interface PushServiceOptions {
  configDir: string;
  config: ConfigStore;
  bus: EventBus;
  presence: ViewerPresence;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  now?: () => number;
}

/**
 * What the schema (pushSchemas.ts) cannot say of a subscription: the endpoint is an https URL and
 * the keys have their sizes (a P-256 point, a 16-byte secret), so a bad one fails here, not at send time.
 */
export function checkSubscription(sub: PushSubscription): PushSubscription {
  let url: URL;
  try {
    url = new URL(sub.endpoint);
  } catch {
    throw new ApiError('invalid_input', `endpoint is not a URL: ${quoteClientInput(sub.endpoint)}`, { extra: { field: 'endpoint' } });
  }
  if (url.protocol !== 'https:') throw new ApiError('invalid_input', `endpoint must be an https URL, got ${url.protocol}`, { extra: { field: 'endpoint' } });
  if (Buffer.from(sub.keys.p256dh, 'base64url').length !== 65)
    throw new ApiError('invalid_input', 'keys.p256dh must be a base64url P-256 public key (65 bytes)', { extra: { field: 'keys.p256dh' } });
  if (Buffer.from(sub.keys.auth, 'base64url').length !== 16)
    throw new ApiError('invalid_input', 'keys.auth must be a base64url 16-byte secret', { extra: { field: 'keys.auth' } });
  return { endpoint: sub.endpoint, keys: { p256dh: sub.keys.p256dh, auth: sub.keys.auth } };
}

/** A subscription read back from the file: kept only if it still passes every check. */
function storedSubscription(value: unknown): PushSubscription | null {
  if (!validatorOf(PushSubscriptionSchema).Check(value)) return null;
  try {
    return checkSubscription(value as PushSubscription);
  } catch {
    return null;
  }
}

const DISABLED = 'push is disabled (services.push.enabled is false)';

export class PushService implements Disposable {
  private subscriptions: PushSubscription[] = [];
  private loaded: Promise<void> | undefined;
  private readonly lastPushMs = new Map<string, number>();
  /** The last SessionState fields that decide a push, per session: pushes go out on the edges only. */
  private readonly lastState = new Map<string, { awaiting: boolean; completed: boolean; limited: boolean }>();
  private readonly listeners: Disposable[] = [];
  private keyGeneration: Promise<void> | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private readonly now: () => number;

  constructor(private readonly opts: PushServiceOptions) {
    this.now = opts.now ?? Date.now;
    this.listeners.push(opts.bus.on('session-state-changed', (_n, payload) => this.onState(payload as { session_id: string; state: Record<string, unknown> })));
    this.listeners.push(opts.bus.on('session-closed', (_n, payload) => this.forget((payload as { session_id: string }).session_id)));
    this.listeners.push(
      opts.bus.on('acp-notice', (_n, payload) => {
        const notice = payload as { event: string; connection_id: string; request_id?: string };
        if (notice.event === 'interaction_pending') this.onAcpQuestion(notice.connection_id);
        // Its agent ended (the connection deleted, or killed before a reconnect): nothing more to space out.
        else if (notice.event === 'settled') this.forget(acpPresenceKey(notice.connection_id));
      }),
    );
    this.listeners.push(
      opts.bus.on('mcp-confirm', (_n, payload) => this.onConfirm(payload as { title: string; message?: string; origin_session_id?: string })),
    );
  }

  get path(): string {
    return join(this.opts.configDir, 'push-subscriptions.json');
  }

  get enabled(): boolean {
    return this.opts.config.get().services.push.enabled;
  }

  /** The public key the page subscribes with; made (and saved) on first use. */
  async publicKey(): Promise<string> {
    if (!this.enabled) throw new ApiError('not_found', DISABLED);
    await this.ensureKeys();
    return this.opts.config.get().services.push.vapid_public_key;
  }

  async subscribe(subscription: PushSubscription): Promise<{ ok: true; created: boolean }> {
    if (!this.enabled) throw new ApiError('not_found', DISABLED);
    const sub = checkSubscription(subscription);
    await this.load();
    const existing = this.subscriptions.findIndex((s) => s.endpoint === sub.endpoint);
    if (existing >= 0) this.subscriptions[existing] = sub;
    else {
      if (this.subscriptions.length >= PushConstants.MAX_SUBSCRIPTIONS)
        throw new ApiError('conflict', `at most ${PushConstants.MAX_SUBSCRIPTIONS} push subscriptions; remove one first`);
      this.subscriptions.push(sub);
    }
    await this.save();
    return { ok: true, created: existing < 0 };
  }

  async unsubscribe(endpoint: string): Promise<{ ok: true; removed: boolean }> {
    await this.load();
    const before = this.subscriptions.length;
    this.subscriptions = this.subscriptions.filter((s) => s.endpoint !== endpoint);
    if (this.subscriptions.length !== before) await this.save();
    return { ok: true, removed: this.subscriptions.length !== before };
  }

  async count(): Promise<number> {
    await this.load();
    return this.subscriptions.length;
  }

  /** POST /api/push/test: one notification to every subscription now, outside the rate limit. */
  async test(): Promise<SendReport> {
    if (!this.enabled) throw new ApiError('unavailable', DISABLED);
    await this.load();
    if (this.subscriptions.length === 0) throw new ApiError('not_found', 'no push subscription: subscribe from the /mobile page first');
    return this.send({ title: 'tuicd', body: 'Test notification: push works.', url: '/mobile', tag: 'tuicd-test' });
  }

  async send(message: PushMessage): Promise<SendReport> {
    await this.ensureKeys();
    const push = this.opts.config.get().services.push;
    if (!push.vapid_private_key || !push.vapid_public_key) throw new ApiError('unavailable', 'push has no VAPID private key (the credential store lost it?)');
    await this.load();
    const report: SendReport = { sent: 0, failed: 0, stale_removed: 0 };
    const stale = new Set<string>();
    await Promise.all(
      this.subscriptions.map(async (sub) => {
        try {
          await webpush.sendNotification(sub, JSON.stringify(message), {
            vapidDetails: { subject: push.vapid_subject, publicKey: push.vapid_public_key, privateKey: push.vapid_private_key },
            TTL: PushConstants.TTL_SECS,
            timeout: PushConstants.SEND_TIMEOUT_MS,
            contentEncoding: 'aes128gcm',
          });
          report.sent++;
        } catch (err) {
          const status = (err as { statusCode?: number }).statusCode;
          // 404/410: the browser dropped this subscription; it will never work again.
          if (status === 404 || status === 410) stale.add(sub.endpoint);
          else report.failed++;
          this.opts.log.warn({ push_endpoint_host: new URL(sub.endpoint).host, status, err: (err as Error).message }, 'push not delivered');
        }
      }),
    );
    if (stale.size > 0) {
      this.subscriptions = this.subscriptions.filter((s) => !stale.has(s.endpoint));
      report.stale_removed = stale.size;
      await this.save();
    }
    return report;
  }

  dispose(): void {
    for (const l of this.listeners.splice(0)) l.dispose();
  }

  private onState(payload: { session_id: string; state: Record<string, unknown> }): void {
    const { session_id: id, state } = payload;
    const now = {
      awaiting: state['awaiting_input'] === true || state['agent_state'] === 'awaiting_input',
      completed: state['agent_state'] === 'completed',
      limited: state['rate_limited'] === true,
    };
    const was = this.lastState.get(id) ?? { awaiting: false, completed: false, limited: false };
    this.lastState.set(id, now);
    const question = typeof state['question_text'] === 'string' ? state['question_text'] : (state['choice_prompt'] as { title?: string } | undefined)?.title;
    const agent = typeof state['agent_type'] === 'string' ? state['agent_type'] : 'session';
    if (now.awaiting && !was.awaiting)
      this.notify(id, { title: `${agent} is waiting for you`, body: question ?? 'It asked a question.', url: `/mobile/session/${id}`, tag: id });
    else if (now.limited && !was.limited)
      this.notify(id, { title: `${agent} hit a rate limit`, body: 'It will go on when the limit lifts.', url: `/mobile/session/${id}`, tag: id });
    else if (now.completed && !was.completed)
      this.notify(id, {
        title: `${agent} finished`,
        body: typeof state['agent_intent'] === 'string' ? state['agent_intent'] : 'The turn is complete.',
        url: `/mobile/session/${id}`,
        tag: id,
      });
  }

  private onConfirm(payload: { title: string; message?: string; origin_session_id?: string }): void {
    const id = payload.origin_session_id;
    this.notify(id ?? '', {
      title: `Confirm: ${payload.title}`,
      body: payload.message ?? 'An agent asks for your confirmation.',
      url: id ? `/mobile/session/${id}` : '/mobile',
      tag: `confirm-${id ?? ''}`,
    });
  }

  /** An ACP agent asks a person (a permission, a form): pushed unless a viewer watches its connection's stream. */
  private onAcpQuestion(connectionId: string): void {
    const key = acpPresenceKey(connectionId);
    this.notify(key, { title: 'An ACP agent is waiting for you', body: 'It asks for a permission or an answer.', url: '/mobile', tag: key });
  }

  private notify(sessionId: string, message: PushMessage): void {
    if (!this.enabled) return;
    if (sessionId !== '' && this.opts.presence.watched(sessionId)) return;
    const now = this.now();
    const last = this.lastPushMs.get(sessionId);
    if (last !== undefined && now - last < PushConstants.PUSH_INTERVAL_MS) return;
    this.lastPushMs.set(sessionId, now);
    const sending: Promise<void> = (async () => {
      if ((await this.count()) === 0) return;
      const report = await this.send(message);
      this.opts.log.info({ session_id: sessionId || undefined, ...report }, 'push sent');
    })()
      .catch((err: unknown) => this.opts.log.warn({ err: (err as Error).message }, 'push failed'))
      .finally(() => this.inflight.delete(sending));
    this.inflight.add(sending);
  }

  /** Resolves once every push started so far was answered (tests; shutdown). */
  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }

  private forget(sessionId: string): void {
    this.lastState.delete(sessionId);
    this.lastPushMs.delete(sessionId);
  }

  private ensureKeys(): Promise<void> {
    const push = this.opts.config.get().services.push;
    if (push.vapid_private_key && push.vapid_public_key) return Promise.resolve();
    // One generation even when two requests ask at once.
    this.keyGeneration ??= (async () => {
      const keys = webpush.generateVAPIDKeys();
      await this.opts.config.update({ services: { push: { vapid_public_key: keys.publicKey, vapid_private_key: keys.privateKey } } });
      this.opts.log.info({ vapid_public_key: keys.publicKey }, 'push: VAPID key pair made (private key in the credential store)');
    })().finally(() => (this.keyGeneration = undefined));
    return this.keyGeneration;
  }

  private load(): Promise<void> {
    this.loaded ??= readFile(this.path, 'utf8').then(
      (text) => {
        const parsed = JSON.parse(text) as { subscriptions?: unknown };
        const list = Array.isArray(parsed.subscriptions) ? parsed.subscriptions : [];
        this.subscriptions = list.flatMap((s) => storedSubscription(s) ?? []);
      },
      (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') this.opts.log.warn({ file: this.path, err: err.message }, 'push subscriptions not read; starting with none');
      },
    );
    return this.loaded;
  }

  private save(): Promise<void> {
    return atomicWriteFile(this.path, `${JSON.stringify({ subscriptions: this.subscriptions }, null, 2)}\n`, { mode: 0o600 });
  }
}
