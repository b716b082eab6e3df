/**
 * The one typed request/event channel every worker boundary uses: `connect()` gives the calling
 * side a typed client, `serve()` registers handlers on the other. Wire format: shared/codec.ts.
 */

import { type Cancellation, CancelSource, cancellationOf } from './cancellation.js';
import { type Envelope, Kind, decodeEnvelope, encodeEnvelope } from './codec.js';
import { type Disposable, DisposableStore, toDisposable } from './disposable.js';
import { ErrorCode, SupervisorError, fromWire, toWire } from './errors.js';
import {
  type EventListener,
  type EventNameOf,
  type EventOf,
  type HandlerContext,
  type HandlersOf,
  type MethodOf,
  type ParamsOf,
  type Protocol,
  type Reply,
  type ResultOf,
  isPayloadReply,
} from './protocol/defineProtocol.js';
import type { Transport } from './transports/transport.js';

/**
 * Per-request default, as MCP's DEFAULT_REQUEST_TIMEOUT_MSEC: long enough for a slow spawn or an
 * upstream call, short enough that a wedged peer surfaces as an error rather than a hang.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** A worker that has not said hello by then is wedged or is not a channel server at all. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** setTimeout's ceiling; a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface SendOptions {
  /** Bytes that travel beside the header, never inside msgpack. Do not modify them after sending. */
  payload?: Uint8Array;
  /** Let a MessagePort move (detach) the payload's buffer instead of copying it. Default false. */
  transfer?: boolean;
  /** Put this frame on the wire now, not at the end of the tick (Transport.flush). Default false. */
  flush?: boolean;
}

export interface RequestOptions extends SendOptions {
  /** Milliseconds until the request fails with REQUEST_TIMEOUT; default from ConnectOptions. */
  timeout?: number;
  /** Aborting fails the request with REQUEST_CANCELLED and tells the server to stop. */
  signal?: AbortSignal;
  /** The same, for a caller that holds a Cancellation (no AbortSignal is built); wins over `signal`. */
  cancellation?: Cancellation;
  /**
   * Called as the successful result is read, before any later frame is: bookkeeping that must sit in
   * stream order with the server's events (a promise's continuation runs only after every frame of
   * the same read, so events the server sent after its reply would be handled first).
   */
  onResult?: () => void;
}

export interface ConnectOptions {
  /** Default request timeout in ms; default DEFAULT_REQUEST_TIMEOUT_MS. */
  timeout?: number;
  /** Close with PROTOCOL_MISMATCH if no hello arrives within this many ms; default HANDSHAKE_TIMEOUT_MS. */
  handshakeTimeout?: number;
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as PromiseLike<unknown> | null)?.then === 'function';

type AnyListener = (data: unknown, payload: Uint8Array | undefined) => void;

export { withPayload, type HandlerContext, type HandlersOf, type PayloadReply, type Reply } from './protocol/defineProtocol.js';

/** What both sides share: events in both directions, close and error reporting, lifecycle. */
abstract class Endpoint<P extends Protocol> implements Disposable {
  protected readonly store = new DisposableStore();
  // Arrays are replaced, never mutated, so a listener may dispose itself while events are delivered.
  private readonly listeners = new Map<string, AnyListener[]>();
  private readonly closeListeners = new Set<(reason: SupervisorError) => void>();
  private readonly errorListeners = new Set<(error: SupervisorError) => void>();
  protected closeReason: SupervisorError | undefined;

  constructor(
    protected readonly transport: Transport,
    readonly protocol: P,
  ) {}

  get closed(): boolean {
    return this.closeReason !== undefined;
  }

  /** Sends a one-way event; dropped silently once closed (`onClose` has already fired). */
  emit<E extends EventNameOf<P>>(event: E, data: EventOf<P, E>, options?: SendOptions): void {
    if (this.closeReason !== undefined) return;
    this.sendFrame(encodeEnvelope([Kind.Event, event, data]), options?.payload, options?.transfer ?? false, options?.flush === true);
  }

  /** Listens to one event (validated before the listener runs); throws TypeError for a name not in the contract. */
  on<E extends EventNameOf<P>>(event: E, listener: EventListener<P, E>): Disposable {
    if (!this.protocol.hasEvent(event)) throw new TypeError(`protocol '${this.protocol.name}' has no event '${event}'`);
    const add = listener as AnyListener;
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), add]);
    return toDisposable(() => {
      const rest = (this.listeners.get(event) ?? []).filter((l) => l !== add);
      if (rest.length > 0) this.listeners.set(event, rest);
      else this.listeners.delete(event);
    });
  }

  /** Fires once when the link goes away; the reason says why (peer died, bad frame, mismatch). */
  onClose(listener: (reason: SupervisorError) => void): Disposable {
    const reason = this.closeReason;
    if (reason !== undefined) queueMicrotask(() => listener(reason));
    else this.closeListeners.add(listener);
    return toDisposable(() => this.closeListeners.delete(listener));
  }

  /** Non-fatal protocol problems (an invalid event, a throwing listener); without a listener they become process warnings. */
  onError(listener: (error: SupervisorError) => void): Disposable {
    this.errorListeners.add(listener);
    return toDisposable(() => this.errorListeners.delete(listener));
  }

  dispose(): void {
    this.transport.close(new SupervisorError(ErrorCode.CHANNEL_CLOSED, `channel '${this.protocol.name}' disposed locally`));
    this.store.dispose();
  }

  /** Called at the end of a subclass constructor: frames kept by the transport may arrive at once. */
  protected attach(): void {
    this.store.add(this.transport.onMessage((header, payload) => this.receive(header, payload)));
    this.store.add(this.transport.onClose((reason) => this.handleClose(reason)));
  }

  protected sendFrame(header: Uint8Array, payload: Uint8Array | undefined, transfer: boolean, flush = false): void {
    this.transport.send(header, payload, transfer, flush);
  }

  protected abstract dispatch(envelope: Envelope, payload: Uint8Array | undefined): void;
  protected abstract failAll(reason: SupervisorError): void;

  protected handleEvent(name: string, data: unknown, payload: Uint8Array | undefined): void {
    const listeners = this.listeners.get(name);
    if (listeners === undefined) {
      if (!this.protocol.hasEvent(name)) this.report(new SupervisorError(ErrorCode.UNKNOWN_METHOD, `unknown event '${name}' on '${this.protocol.name}'`));
      return; // Nobody listens: skip validation, the hot path stays cheap.
    }
    const problem = this.protocol.checkEvent(name, data);
    if (problem !== undefined) {
      this.report(new SupervisorError(ErrorCode.INVALID_MESSAGE, `event '${name}' rejected: ${problem}`));
      return;
    }
    for (const listener of listeners) {
      try {
        listener(data, payload);
      } catch (err) {
        this.report(new SupervisorError(ErrorCode.HANDLER_FAILED, `listener for '${name}' threw: ${toWire(err).message}`));
      }
    }
  }

  protected report(error: SupervisorError): void {
    if (this.errorListeners.size === 0) process.emitWarning(`channel '${this.protocol.name}': ${error.message}`, { code: error.code });
    for (const listener of this.errorListeners) listener(error);
  }

  private receive(header: Uint8Array, payload: Uint8Array | undefined): void {
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(header);
    } catch (err) {
      // A frame we cannot read means the stream is not what we think: close this connection only.
      this.transport.close(err instanceof SupervisorError ? err : new SupervisorError(ErrorCode.INVALID_MESSAGE, String(err)));
      return;
    }
    this.dispatch(envelope, payload);
  }

  private handleClose(reason: SupervisorError): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.failAll(reason);
    for (const listener of this.closeListeners) listener(reason);
    this.closeListeners.clear();
  }
}

interface Pending {
  readonly method: string;
  readonly timeoutMs: number;
  readonly full: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly onResult: (() => void) | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Unsubscribes from the caller's Cancellation (or signal). */
  offCancel: (() => void) | undefined;
}

const noop = (): void => {};

/** The calling side. Frames wait until the server's hello matched, so a stale peer never acts on them. */
export class Client<P extends Protocol> extends Endpoint<P> {
  /** Resolves once the server's hello matched; rejects with PROTOCOL_MISMATCH or the close reason. */
  readonly ready: Promise<void>;
  private readonly pending = new Map<number, Pending>();
  private readonly defaultTimeoutMs: number;
  private readonly handshakeTimer: NodeJS.Timeout;
  private held: Array<[Uint8Array, Uint8Array | undefined, boolean]> | undefined = [];
  private nextId = 1;
  private settleReady: (error?: SupervisorError) => void = noop;

  constructor(transport: Transport, protocol: P, options: ConnectOptions = {}) {
    super(transport, protocol);
    this.defaultTimeoutMs = options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = (error) => (error ? reject(error) : resolve());
    });
    this.ready.catch(noop); // A caller that never awaits `ready` must not get an unhandled rejection.
    const handshakeMs = options.handshakeTimeout ?? HANDSHAKE_TIMEOUT_MS;
    this.handshakeTimer = setTimeout(() => {
      this.transport.close(new SupervisorError(ErrorCode.PROTOCOL_MISMATCH, `no hello from the '${protocol.name}' peer within ${handshakeMs} ms`));
    }, handshakeMs).unref();
    this.attach();
  }

  request<M extends MethodOf<P>>(method: M, params: ParamsOf<P, M>, options?: RequestOptions): Promise<ResultOf<P, M>> {
    return this.call(method, params, options, false) as Promise<ResultOf<P, M>>;
  }

  /** Like `request`, but also returns the binary payload the server sent beside the result. */
  requestWithPayload<M extends MethodOf<P>>(method: M, params: ParamsOf<P, M>, options?: RequestOptions): Promise<Reply<ResultOf<P, M>>> {
    return this.call(method, params, options, true) as Promise<Reply<ResultOf<P, M>>>;
  }

  protected override sendFrame(header: Uint8Array, payload: Uint8Array | undefined, transfer: boolean, flush = false): void {
    if (this.held !== undefined) this.held.push([header, payload, transfer]);
    else this.transport.send(header, payload, transfer, flush);
  }

  protected dispatch(envelope: Envelope, payload: Uint8Array | undefined): void {
    if (this.held !== undefined && envelope[0] !== Kind.Hello) {
      this.transport.close(
        new SupervisorError(ErrorCode.PROTOCOL_MISMATCH, `peer did not start with a hello; is it a '${this.protocol.name}' channel server?`),
      );
      return;
    }
    switch (envelope[0]) {
      case Kind.Result:
        return this.settle(envelope[1], envelope[2], payload);
      case Kind.Error: {
        const entry = this.take(envelope[1]);
        entry?.reject(fromWire(envelope[2]));
        return;
      }
      case Kind.Event:
        return this.handleEvent(envelope[1], envelope[2], payload);
      case Kind.Hello:
        return this.handleHello(envelope[1], envelope[2]);
      default:
        this.report(new SupervisorError(ErrorCode.INVALID_MESSAGE, `a server sent message kind ${envelope[0]}, which only clients send`));
    }
  }

  protected failAll(reason: SupervisorError): void {
    clearTimeout(this.handshakeTimer);
    this.held = undefined;
    this.settleReady(reason);
    for (const id of [...this.pending.keys()]) {
      const entry = this.take(id)!;
      entry.reject(this.closedError(entry.method, reason));
    }
  }

  /** CHANNEL_CLOSED with the reason inside; a refused handshake keeps its PROTOCOL_MISMATCH code. */
  private closedError(method: string, reason: SupervisorError): SupervisorError {
    const code = reason.code === ErrorCode.PROTOCOL_MISMATCH ? reason.code : ErrorCode.CHANNEL_CLOSED;
    return new SupervisorError(code, `'${method}' failed: channel '${this.protocol.name}' closed: ${reason.message}`, { reason: toWire(reason) });
  }

  private call(method: string, params: unknown, options: RequestOptions | undefined, full: boolean): Promise<unknown> {
    if (this.closeReason !== undefined) return Promise.reject(this.closedError(method, this.closeReason));
    // One mechanism for both: a signal is followed as a Cancellation.
    const cancellation = options?.cancellation ?? (options?.signal ? cancellationOf(options.signal) : undefined);
    if (cancellation?.cancelReason !== undefined) return Promise.reject(cancelled(method, cancellation.cancelReason));
    const timeoutMs = options?.timeout ?? this.defaultTimeoutMs;
    if (!(timeoutMs > 0)) return Promise.reject(new TypeError(`request timeout must be > 0 ms, got ${timeoutMs}`));
    const id = this.nextId++;
    let header: Uint8Array;
    try {
      header = encodeEnvelope([Kind.Request, id, method, params, timeoutMs]);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      const entry: Pending = { method, timeoutMs, full, resolve, reject, onResult: options?.onResult, timer: undefined, offCancel: undefined };
      entry.timer = setTimeout(this.onTimeout, Math.min(timeoutMs, MAX_TIMER_MS), id);
      if (cancellation !== undefined) entry.offCancel = cancellation.onCancel((reason) => this.abandon(id, cancelled(method, reason)));
      this.pending.set(id, entry);
      this.sendFrame(header, options?.payload, options?.transfer ?? false);
    });
  }

  private readonly onTimeout = (id: number): void => {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.abandon(id, new SupervisorError(ErrorCode.REQUEST_TIMEOUT, `'${entry.method}' on '${this.protocol.name}' timed out after ${entry.timeoutMs} ms`));
  };

  /** Fails a request locally and tells the server to stop working on it. */
  private abandon(id: number, error: SupervisorError): void {
    const entry = this.take(id);
    if (entry === undefined) return;
    entry.reject(error);
    if (!this.closed) this.sendFrame(encodeEnvelope([Kind.Cancel, id]), undefined, false);
  }

  private take(id: number): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined; // A late reply after a timeout or cancel: expected.
    this.pending.delete(id);
    clearTimeout(entry.timer);
    entry.offCancel?.();
    return entry;
  }

  private settle(id: number, result: unknown, payload: Uint8Array | undefined): void {
    const entry = this.take(id);
    if (entry === undefined) return;
    const problem = this.protocol.hasMethod(entry.method) ? this.protocol.checkResult(entry.method, result) : 'method is not in this protocol';
    if (problem !== undefined) {
      entry.reject(new SupervisorError(ErrorCode.INVALID_MESSAGE, `result of '${entry.method}' rejected: ${problem}`));
      return;
    }
    try {
      entry.onResult?.();
    } catch (err) {
      this.report(new SupervisorError(ErrorCode.HANDLER_FAILED, `onResult of '${entry.method}' threw: ${toWire(err).message}`));
    }
    entry.resolve(entry.full ? { result, payload } : result);
  }

  private handleHello(name: string, version: number): void {
    const held = this.held;
    if (held === undefined) {
      this.report(new SupervisorError(ErrorCode.INVALID_MESSAGE, 'duplicate hello ignored'));
      return;
    }
    clearTimeout(this.handshakeTimer);
    const local = this.protocol;
    if (name !== local.name || version !== local.version) {
      const message = `peer speaks '${name}' v${version}, this side '${local.name}' v${local.version}: refusing (stale build?)`;
      this.transport.close(
        new SupervisorError(ErrorCode.PROTOCOL_MISMATCH, message, {
          peer: { protocol: name, version },
          local: { protocol: local.name, version: local.version },
        }),
      );
      return;
    }
    this.held = undefined;
    for (const [header, payload, transfer] of held) this.transport.send(header, payload, transfer);
    this.settleReady();
  }
}

function cancelled(method: string, reason: Error): SupervisorError {
  return new SupervisorError(ErrorCode.REQUEST_CANCELLED, `'${method}' cancelled: ${reason.message}`);
}

/**
 * Per-request state on the serving side, itself the request's CancelSource: a handler that passes
 * the context on as a Cancellation costs nothing; the AbortSignal is built only if it asks for `signal`.
 */
class RequestContext extends CancelSource implements HandlerContext {
  constructor(
    readonly id: number,
    readonly method: string,
    readonly payload: Uint8Array | undefined,
    readonly deadline: number,
  ) {
    super();
  }

  abort(reason: SupervisorError): void {
    this.cancel(reason);
  }
}

/** The serving side. Announces `{protocol, version}` first, then answers requests with `handlers`. */
export class Server<P extends Protocol> extends Endpoint<P> {
  private readonly inflight = new Map<number, RequestContext>();

  constructor(
    transport: Transport,
    protocol: P,
    private readonly handlers: HandlersOf<P>,
  ) {
    super(transport, protocol);
    this.attach();
    this.transport.send(encodeEnvelope([Kind.Hello, protocol.name, protocol.version]));
  }

  protected dispatch(envelope: Envelope, payload: Uint8Array | undefined): void {
    switch (envelope[0]) {
      case Kind.Request:
        return this.handleRequest(envelope[1], envelope[2], envelope[3], envelope[4], payload);
      case Kind.Cancel: {
        const ctx = this.inflight.get(envelope[1]);
        this.inflight.delete(envelope[1]);
        ctx?.abort(new SupervisorError(ErrorCode.REQUEST_CANCELLED, `'${ctx.method}' cancelled by the caller`));
        return;
      }
      case Kind.Event:
        return this.handleEvent(envelope[1], envelope[2], payload);
      default:
        this.report(new SupervisorError(ErrorCode.INVALID_MESSAGE, `a client sent message kind ${envelope[0]}, which only servers send`));
    }
  }

  protected failAll(reason: SupervisorError): void {
    const error = new SupervisorError(ErrorCode.CHANNEL_CLOSED, `channel '${this.protocol.name}' closed: ${reason.message}`);
    for (const ctx of this.inflight.values()) ctx.abort(error);
    this.inflight.clear();
  }

  private handleRequest(id: number, method: string, params: unknown, timeoutMs: number, payload: Uint8Array | undefined): void {
    const handler = (this.handlers as Record<string, unknown>)[method];
    if (!this.protocol.hasMethod(method) || typeof handler !== 'function') {
      this.sendError(id, new SupervisorError(ErrorCode.UNKNOWN_METHOD, `'${this.protocol.name}' v${this.protocol.version} has no method '${method}'`));
      return;
    }
    const problem = this.protocol.checkParams(method, params);
    if (problem !== undefined) {
      this.sendError(id, new SupervisorError(ErrorCode.INVALID_MESSAGE, `params of '${method}' rejected: ${problem}`));
      return;
    }
    const ctx = new RequestContext(id, method, payload, Date.now() + timeoutMs);
    this.inflight.set(id, ctx);
    let out: unknown;
    try {
      out = (handler as (p: unknown, c: HandlerContext) => unknown).call(this.handlers, params, ctx);
    } catch (err) {
      this.fail(ctx, err);
      return;
    }
    if (isThenable(out))
      out.then(
        (value) => this.reply(ctx, value),
        (err: unknown) => this.fail(ctx, err),
      );
    else this.reply(ctx, out);
  }

  private reply(ctx: RequestContext, out: unknown): void {
    // Gone from the map: cancelled, timed out or closed; nobody waits for the answer.
    if (!this.inflight.delete(ctx.id)) return;
    const withBytes = isPayloadReply(out);
    let header: Uint8Array;
    try {
      header = encodeEnvelope([Kind.Result, ctx.id, withBytes ? out.result : out]);
    } catch (err) {
      this.sendError(ctx.id, new SupervisorError(ErrorCode.HANDLER_FAILED, `result of '${ctx.method}' cannot be encoded: ${toWire(err).message}`));
      return;
    }
    this.transport.send(header, withBytes ? out.payload : undefined, withBytes ? out.transfer : false);
  }

  private fail(ctx: RequestContext, err: unknown): void {
    if (this.inflight.delete(ctx.id)) this.sendError(ctx.id, err);
  }

  private sendError(id: number, err: unknown): void {
    const wire = toWire(err);
    let header: Uint8Array;
    try {
      header = encodeEnvelope([Kind.Error, id, wire]);
    } catch {
      // `data` was not encodable; code and message always are, and they are what callers match on.
      header = encodeEnvelope([Kind.Error, id, { code: wire.code, message: wire.message }]);
    }
    this.transport.send(header);
  }
}

/** The calling side of `protocol` over `transport`. Call it in the same tick the transport was made. */
export function connect<P extends Protocol>(transport: Transport, protocol: P, options?: ConnectOptions): Client<P> {
  return new Client(transport, protocol, options);
}

/** Serves `protocol` over `transport` with `handlers` (an object or a class instance; `this` is kept). */
export function serve<P extends Protocol>(transport: Transport, protocol: P, handlers: HandlersOf<P>): Server<P> {
  return new Server(transport, protocol, handlers);
}
