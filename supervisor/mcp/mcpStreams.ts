/**
 * GET /mcp server-to-client streams (MCP's Streamable HTTP transport): one SSE stream per protocol
 * session carrying notifications/tools/list_changed and per-session messages, with a generation
 * guard. Each session has a channel (the set of its open streams); a stream's
 * teardown releases the session's has_sse_stream flag and channel only while it still holds the
 * session's latest generation, so a half-open stream that a reconnect replaced cannot close the
 * replacement. Generations come from one process-wide counter: a DELETE can retire an id while
 * its stream drains, and the next GET recreates that id from scratch — a per-session counter
 * would hand the replacement the very number the old stream still holds.
 */
import type { EngineResponse } from '../http/engine/types.js';
import type { LiveStream } from '../http/types.js';

import { DRAIN_NUDGE_BYTES, PING_BYTES, SSE_KEEP_ALIVE_MS, writeSseHead } from '../http/sse.js';
import type { McpSessionStore } from './protocolSessions.js';

/** A client that stops reading is dropped once this much is queued behind uWS's own buffer. */
const MAX_QUEUED_BYTES = 1024 * 1024;

/** Process-wide, never per session (see the file comment). */
let lastGeneration = 0;

export interface McpStreamOptions {
  keepAliveMs?: number;
}

interface OpenStream extends LiveStream {
  readonly sessionId: string;
  readonly generation: number;
  send(frame: Buffer): void;
}

/** `event: message` frame; a data line per text line, so a message can never break the framing. */
export function messageFrame(json: string): Buffer {
  const data =
    json.includes('\n') || json.includes('\r')
      ? json
          .split(/\r\n|\r|\n/)
          .map((l) => `data: ${l}`)
          .join('\n')
      : `data: ${json}`;
  return Buffer.from(`event: message\n${data}\n\n`);
}

export class McpStreams {
  /** Session id → its open streams (the per-session messaging channel). */
  private readonly channels = new Map<string, Set<OpenStream>>();
  private readonly keepAliveMs: number;

  constructor(
    private readonly sessions: McpSessionStore,
    opts: McpStreamOptions = {},
  ) {
    this.keepAliveMs = opts.keepAliveMs ?? SSE_KEEP_ALIVE_MS;
  }

  /** Open streams across all sessions. */
  get openCount(): number {
    let n = 0;
    for (const channel of this.channels.values()) n += channel.size;
    return n;
  }

  /**
   * Takes over `res` as the session's stream. Must run synchronously inside the uWS handler (it
   * registers onAborted and writes the headers in the handler's corked section). An unknown id is
   * recreated: a stream reconnecting after a restart or a reap is served, not refused.
   */
  open(res: EngineResponse, sessionId: string, extraHeaders: Record<string, string> = {}): OpenStream {
    const { meta } = this.sessions.touch(sessionId);
    const generation = ++lastGeneration;
    meta.sse_generation = generation;
    meta.has_sse_stream = true;

    let open = true;
    let blocked = false;
    const queue: Buffer[] = [];
    let queuedBytes = 0;
    let timer: NodeJS.Timeout | undefined;
    const closeListeners: Array<() => void> = [];

    const teardown = (): void => {
      if (!open) return;
      open = false;
      clearInterval(timer);
      this.release(stream);
      for (const listener of closeListeners.splice(0)) listener();
    };
    const stream: OpenStream = {
      sessionId,
      generation,
      send: (frame) => {
        if (!open) return;
        if (blocked) {
          queue.push(frame);
          queuedBytes += frame.length;
          if (queuedBytes > MAX_QUEUED_BYTES) stream.close();
          return;
        }
        res.cork(() => {
          blocked = !res.write(frame);
        });
      },
      close: () => {
        if (!open) return;
        teardown();
        res.cork(() => res.end());
      },
      onClose: (listener) => {
        if (open) closeListeners.push(listener);
        else listener();
      },
    };

    res.onAborted(teardown);
    let channel = this.channels.get(sessionId);
    if (!channel) this.channels.set(sessionId, (channel = new Set()));
    channel.add(stream);

    writeSseHead(res, { 'Mcp-Session-Id': sessionId, ...extraHeaders });

    // Returning false tells uWS this attempt did not finish; it calls again when writable.
    res.onWritable(() => {
      if (!open) return true;
      blocked = false;
      if (queue.length === 0) return res.write(DRAIN_NUDGE_BYTES);
      while (queue.length > 0 && !blocked) {
        const frame = queue.shift()!;
        queuedBytes -= frame.length;
        blocked = !res.write(frame);
      }
      return !blocked;
    });

    timer = setInterval(() => stream.send(PING_BYTES), this.keepAliveMs);
    // The listen socket keeps the process alive; a keep-alive timer must not.
    timer.unref();
    return stream;
  }

  /** Sends one JSON-RPC message to every open stream of a session; false when it has none. */
  push(sessionId: string, message: string | object): boolean {
    const channel = this.channels.get(sessionId);
    if (!channel || channel.size === 0) return false;
    const frame = messageFrame(typeof message === 'string' ? message : JSON.stringify(message));
    for (const stream of [...channel]) stream.send(frame);
    return true;
  }

  /** Sends one JSON-RPC message to every open stream; returns how many got it. */
  broadcast(message: string | object): number {
    const frame = messageFrame(typeof message === 'string' ? message : JSON.stringify(message));
    let n = 0;
    for (const channel of [...this.channels.values()]) {
      for (const stream of [...channel]) {
        stream.send(frame);
        n++;
      }
    }
    return n;
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const channel of [...this.channels.values()]) for (const stream of [...channel]) stream.close();
    this.channels.clear();
  }

  /**
   * The guard. A retired session (DELETE, reaper) has no generation to compare: its channel goes
   * outright. A live one is released only by the stream holding its latest generation; releasing
   * the channel ends whatever older streams still hang on it.
   */
  private release(stream: OpenStream): void {
    const channel = this.channels.get(stream.sessionId);
    channel?.delete(stream);
    const meta = this.sessions.get(stream.sessionId);
    if (meta && meta.sse_generation !== stream.generation) {
      // Superseded: a newer stream owns the session; leave its flag and channel alone.
      if (channel && channel.size === 0) this.channels.delete(stream.sessionId);
      return;
    }
    if (meta) meta.has_sse_stream = false;
    if (!channel) return;
    this.channels.delete(stream.sessionId);
    for (const other of [...channel]) other.close();
  }
}
