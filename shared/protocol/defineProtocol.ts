/**
 * A channel contract declared once (typebox schemas) and imported by both sides: the types of
 * every request, result and event derive from it, and the receiving side checks with its compiled
 * validators.
 */

import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { Cancellation } from '../cancellation.js';

export interface RequestSpec {
  readonly params: TSchema;
  readonly result: TSchema;
}

export interface ProtocolSpec {
  /** Announced in the handshake; a peer with another name is refused. */
  readonly name: string;
  /** Bump on any incompatible change; a peer with another version is refused. */
  readonly version: number;
  readonly requests: Readonly<Record<string, RequestSpec>>;
  /** One-way messages; either side may emit any of them. */
  readonly events: Readonly<Record<string, TSchema>>;
}

/** Returns undefined when `value` conforms, else a short reason naming the first failing path. */
type Checker = (value: unknown) => string | undefined;

function compileChecker(schema: TSchema): Checker {
  const validator = Compile(schema);
  return (value) => {
    if (validator.Check(value)) return undefined;
    // Errors() is slow; it only runs for a message we are about to reject.
    const first = validator.Errors(value)[0];
    return first === undefined ? 'does not match its schema' : `${first.instancePath || '/'} ${first.message}`;
  };
}

/**
 * The runtime side of a contract. Validators compile lazily on first use, so each side only
 * pays for what it receives (a client never compiles params checks, a server never result checks).
 */
export class Protocol<S extends ProtocolSpec = ProtocolSpec> {
  private readonly checkers = new Map<string, Checker>();

  constructor(readonly spec: S) {}

  get name(): string {
    return this.spec.name;
  }

  get version(): number {
    return this.spec.version;
  }

  hasMethod(method: string): boolean {
    return Object.hasOwn(this.spec.requests, method);
  }

  hasEvent(event: string): boolean {
    return Object.hasOwn(this.spec.events, event);
  }

  /** Call only after `hasMethod(method)`. */
  checkParams(method: string, value: unknown): string | undefined {
    return this.checker('p:', method, () => this.spec.requests[method]!.params)(value);
  }

  /** Call only after `hasMethod(method)`. */
  checkResult(method: string, value: unknown): string | undefined {
    return this.checker('r:', method, () => this.spec.requests[method]!.result)(value);
  }

  /** Call only after `hasEvent(event)`. */
  checkEvent(event: string, value: unknown): string | undefined {
    return this.checker('e:', event, () => this.spec.events[event]!)(value);
  }

  private checker(prefix: string, name: string, schema: () => TSchema): Checker {
    const key = prefix + name;
    let checker = this.checkers.get(key);
    if (checker === undefined) {
      checker = compileChecker(schema());
      this.checkers.set(key, checker);
    }
    return checker;
  }
}

/** Declares a channel contract. Put one per boundary in `shared/protocol/<name>.ts`. */
export function defineProtocol<S extends ProtocolSpec>(spec: S): Protocol<S> {
  if (!Number.isInteger(spec.version) || spec.version < 0) throw new TypeError(`protocol '${spec.name}': version must be a non-negative integer`);
  return new Protocol(spec);
}

// --- derived types: never hand-write an API type for a channel ---------------------------------

type SpecOf<P extends Protocol> = P extends Protocol<infer S> ? S : never;

export type MethodOf<P extends Protocol> = keyof SpecOf<P>['requests'] & string;
export type EventNameOf<P extends Protocol> = keyof SpecOf<P>['events'] & string;
export type ParamsOf<P extends Protocol, M extends MethodOf<P>> = Static<SpecOf<P>['requests'][M]['params']>;
export type ResultOf<P extends Protocol, M extends MethodOf<P>> = Static<SpecOf<P>['requests'][M]['result']>;
export type EventOf<P extends Protocol, E extends EventNameOf<P>> = Static<SpecOf<P>['events'][E]>;

/** The request side of a contract as plain async functions (for fakes and for documentation). */
export type ApiOf<P extends Protocol> = {
  [M in MethodOf<P>]: (params: ParamsOf<P, M>) => Promise<ResultOf<P, M>>;
};

/** An event listener: the validated event data, and the bytes that came beside it. */
export type EventListener<P extends Protocol, E extends EventNameOf<P>> = (data: EventOf<P, E>, payload: Uint8Array | undefined) => void;

/** A result with the binary payload that came beside it (`Client.requestWithPayload`). */
export interface Reply<R> {
  result: R;
  payload: Uint8Array | undefined;
}

/**
 * A request as its handler sees it. It is itself the request's Cancellation: pass `ctx` on to
 * work that should stop with the request, and that costs nothing unless the request is cancelled.
 */
export interface HandlerContext extends Cancellation {
  readonly id: number;
  /** Bytes the caller sent beside the params; a view you should copy if you keep it long. */
  readonly payload: Uint8Array | undefined;
  /** `Date.now()` value after which the caller has given up. */
  readonly deadline: number;
  /** Aborts when the caller cancels or times out, or the channel closes; built on first use. */
  readonly signal: AbortSignal;
}

const PAYLOAD_REPLY = Symbol('tuicd.payloadReply');

/** What a handler returns to answer with bytes beside the result. */
export interface PayloadReply<R> {
  result: R;
  payload: Uint8Array;
  transfer: boolean;
  readonly [PAYLOAD_REPLY]: true;
}

/**
 * Builds a `{result, payload}` reply; branded so a result that merely looks like one is never
 * mistaken for it. `transfer` (default false) lets a MessagePort move the payload's buffer.
 */
export function withPayload<R>(result: R, payload: Uint8Array, options: { transfer?: boolean } = {}): PayloadReply<R> {
  return { result, payload, transfer: options.transfer ?? false, [PAYLOAD_REPLY]: true };
}

export function isPayloadReply(value: unknown): value is PayloadReply<unknown> {
  return typeof value === 'object' && value !== null && PAYLOAD_REPLY in value;
}

export type HandlerResult<R> = R | PayloadReply<R> | Promise<R | PayloadReply<R>>;

/** The serving side of a contract: one function per request, `this` kept when it is a class instance. */
export type HandlersOf<P extends Protocol> = {
  [M in MethodOf<P>]: (params: ParamsOf<P, M>, ctx: HandlerContext) => HandlerResult<ResultOf<P, M>>;
};
