/**
 * What waits to be typed into an agent's terminal, per PTY: one FIFO shared by the user's queued
 * commands (POST /sessions/:id/queue), peers' `[TUIC] …` lines and orchestrator wakes, so neither
 * producer overtakes an entry accepted before it. Listing and clearing select only the user's
 * commands; peer lines and wakes keep their places.
 */
import { randomUUID } from 'node:crypto';

export const TypedQueueConstants = {
  /** Idempotency keys remembered per PTY (`POST /sessions/:id/queue` answers a repeated key as a duplicate). */
  IDEMPOTENCY_KEYS: 128,
  IDEMPOTENCY_KEY_MAX_BYTES: 128,
} as const;

export type TypedEntry =
  | { kind: 'command'; id: string; text: string }
  | { kind: 'peer'; id: string; text: string }
  /** Rendered when it reaches the head: what to type depends on the mail unread by then. */
  | { kind: 'wake'; id: string; recipient: string };

export class TypedQueue {
  private readonly entries: TypedEntry[] = [];
  /** Recent idempotency keys, oldest first, with the command id each accepted. */
  private readonly keys = new Map<string, string>();

  get length(): number {
    return this.entries.length;
  }

  head(): TypedEntry | undefined {
    return this.entries[0];
  }

  /** Drops the head if it is still `entry` (a clear may have removed it meanwhile). */
  shift(entry: TypedEntry): void {
    if (this.entries[0] === entry) this.entries.shift();
  }

  push(entry: TypedEntry): void {
    this.entries.push(entry);
  }

  /** A user command; null when its idempotency key was seen among the last 128. */
  pushCommand(text: string, idempotencyKey?: string): TypedEntry | null {
    if (idempotencyKey !== undefined) {
      if (this.keys.has(idempotencyKey)) return null;
      if (this.keys.size >= TypedQueueConstants.IDEMPOTENCY_KEYS) this.keys.delete(this.keys.keys().next().value as string);
    }
    const entry: TypedEntry = { kind: 'command', id: randomUUID(), text };
    if (idempotencyKey !== undefined) this.keys.set(idempotencyKey, entry.id);
    this.entries.push(entry);
    return entry;
  }

  includes(entry: TypedEntry): boolean {
    return this.entries.includes(entry);
  }

  commands(): { id: string; text: string }[] {
    return this.entries.filter((e) => e.kind === 'command').map((e) => ({ id: e.id, text: (e as { text: string }).text }));
  }

  /** Removes every user command (peer lines and wakes stay, in order); the count removed. */
  clearCommands(): number {
    let removed = 0;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (this.entries[i]!.kind === 'command') {
        this.entries.splice(i, 1);
        removed++;
      }
    }
    return removed;
  }

  removeCommand(id: string): boolean {
    const i = this.entries.findIndex((e) => e.kind === 'command' && e.id === id);
    if (i < 0) return false;
    this.entries.splice(i, 1);
    return true;
  }

  all(): readonly TypedEntry[] {
    return this.entries;
  }
}
