/**
 * Atomic submission (`session action=submit`): one call
 * types a command and presses Enter into a confirmed-idle session with an empty composer, never
 * queues, never interleaves with another writer, and answers with a receipt saying exactly how far
 * the write got and whether the terminal moved afterwards.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import type { Disposable } from '../../shared/disposable.js';
import { foregroundJobRuns, foregroundOf } from './foreground.js';
import type { ComposerState } from './inputLineBuffer.js';
import type { SessionInput } from './sessionInput.js';
import { agentState, type SessionRecord } from './sessionRecord.js';
import type { SessionService } from './sessionService.js';
import { shellFamily } from './shellFamily.js';

export const SubmitConstants = {
  ACK_TIMEOUT_DEFAULT_MS: 3_000,
  ACK_TIMEOUT_MIN_MS: 250,
  ACK_TIMEOUT_MAX_MS: 10_000,
  /** INJECT_ENTER_GAP: raw-mode apps (Ink) read text and Enter in one chunk as a paste unless they arrive apart. */
  ENTER_GAP_MS: 50,
  /** How much recent output is searched for the application's bracketed-paste switch. */
  PASTE_PROBE_BYTES: 64 * 1024,
} as const;

const CTRL_U = '\x15';
const ENTER = Buffer.from('\r');
const PASTE_ON = Buffer.from('\x1b[?2004h', 'latin1');
const PASTE_OFF = Buffer.from('\x1b[?2004l', 'latin1');

/** not_started: no byte was written; complete: text and Enter were both written; uncertain: bytes may have been written. */
export type WriteState = 'not_started' | 'complete' | 'uncertain';

export interface SubmitReceipt {
  submission_id: string;
  submitted: boolean;
  write_state: WriteState;
  acknowledged: boolean;
  retry_safe: boolean;
  turn_epoch: number;
  composer_state: ComposerState | 'cleared';
  /** Evidence the terminal moved: output offsets around the Enter. */
  acknowledgement?: { enter_offset: number; output_offset: number };
  reason?: string;
}

/** Why a submit refused before writing (each leaves retry_safe true). */
export type RejectReason =
  | 'session_not_found'
  | 'session_exited'
  | 'shell_state_unconfirmed'
  | 'turn_in_flight'
  | 'shell_busy'
  | 'confident_dialog'
  | 'agent_busy'
  | 'foreground_job_running'
  | 'composer_partial'
  | 'composer_unknown'
  /** Older commands wait in the session's typed queue (POST /sessions/:id/queue): a submit never goes ahead of them. */
  | 'queued_commands_pending';

/** Why a written submit is not acknowledged (each leaves retry_safe false). */
export type UnacknowledgedReason = 'ack_timeout' | 'session_exited_after_write' | 'superseded' | 'request_aborted';

/** timeout_ms for the acknowledgement: default 3000, clamped to 250–10000. */
export function clampAckTimeout(raw: unknown): number {
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw <= 0) return SubmitConstants.ACK_TIMEOUT_DEFAULT_MS;
  return Math.min(SubmitConstants.ACK_TIMEOUT_MAX_MS, Math.max(SubmitConstants.ACK_TIMEOUT_MIN_MS, Math.floor(raw)));
}

/** The command as typed: trailing newlines dropped (submit presses Enter itself). */
export function commandText(input: string): string {
  return input.replace(/[\r\n]+$/, '');
}

/**
 * Why the session cannot take a command now, or null when it can. `queueHead`: the caller types the
 * head of the session's own typed queue, the one writer the queued commands do not hold back.
 */
export function readiness(record: SessionRecord, input: SessionInput, queueHead = false): RejectReason | null {
  if (record.exit) return 'session_exited';
  if (record.shell_state === null) return 'shell_state_unconfirmed';
  if (input.claimed) return 'turn_in_flight';
  if (!queueHead && record.queued_commands > 0) return 'queued_commands_pending';
  // An agent's open approval or choice prompt would take the text as its answer: refused while one shows.
  if (record.signals.question?.confident === true || record.signals.choice !== null) return 'confident_dialog';
  if (record.shell_state === 'busy') return 'shell_busy';
  if (agentState(record) === 'working') return 'agent_busy';
  if (foregroundJobRuns(foregroundOf(record.pid))) return 'foreground_job_running';
  const composer = input.composer.state;
  if (composer === 'partial') return 'composer_partial';
  // Ctrl-U clears an unknown line on a posix shell; elsewhere nothing may be wiped blindly.
  if (composer === 'unknown' && shellFamily(record.shell) !== 'posix') return 'composer_unknown';
  return null;
}

export interface SubmitOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The session's typed queue types its head: the queued commands behind it do not refuse it. */
  queueHead?: boolean;
}

export async function submitCommand(sessions: SessionService, ref: string, text: string, opts: SubmitOptions): Promise<SubmitReceipt> {
  const submissionId = randomUUID();
  const refused = (reason: RejectReason, epoch: number, composer: ComposerState): SubmitReceipt => ({
    submission_id: submissionId,
    submitted: false,
    write_state: 'not_started',
    acknowledged: false,
    retry_safe: true,
    turn_epoch: epoch,
    composer_state: composer,
    reason,
  });
  const record = sessions.resolve(ref);
  if (!record) return refused('session_not_found', 0, 'unknown');
  const input = sessions.inputOf(record);

  // The whole framed write holds the writer lock; a peer queued behind it sees the claim and refuses.
  const written = await input.lock.run(async () => {
    const reason = readiness(record, input, opts.queueHead === true);
    if (reason) return refused(reason, input.turnEpoch, input.composer.state);
    input.takeClaim();
    return writeFramed(sessions, record, input, text, submissionId);
  });
  if ('submission_id' in written) return written;
  const receipt = await awaitAcknowledgement(record, input, written, submissionId, opts);
  // An unacknowledged submit released its claim without a shell-state change: waiters re-check now.
  if (!receipt.acknowledged) sessions.notifyReadiness(record);
  return receipt;
}

interface Written {
  enterOffset: number;
  epoch: number;
  ack: AckWatch;
}

async function writeFramed(
  sessions: SessionService,
  record: SessionRecord,
  input: SessionInput,
  text: string,
  submissionId: string,
): Promise<Written | SubmitReceipt> {
  const first = await framedLine(sessions, record, commandText(text));
  let ack: AckWatch | undefined;
  let textWritten = false;
  try {
    await sessions.writeHeld(record, first);
    textWritten = true;
    input.lastInputMs = Date.now();
    await sleep(SubmitConstants.ENTER_GAP_MS);
    if (record.exit) throw new Error('session exited before Enter');
    // Captured just before Enter, and watched from before the write: the Enter's echo cannot be missed.
    const enterOffset = record.total_written;
    ack = watchAcknowledgement(sessions, record, enterOffset);
    await sessions.writeHeld(record, ENTER, () => input.noteSubmitted(commandText(text)));
    return { enterOffset, epoch: input.turnEpoch, ack };
  } catch (err) {
    ack?.dispose();
    input.releaseClaim();
    if (textWritten) input.composer.feed(first); // what we typed is in the line now
    return {
      submission_id: submissionId,
      submitted: false,
      write_state: 'uncertain',
      acknowledged: false,
      retry_safe: false,
      turn_epoch: input.turnEpoch,
      composer_state: textWritten ? input.composer.state : 'unknown',
      reason: `write_failed: ${(err as Error).message}`,
    };
  }
}

/**
 * What goes before the Enter of a framed line: Ctrl-U on posix shells to clear the
 * line, then the text, as one bracketed paste when it is multi-line and the application asked for paste mode.
 */
export async function framedLine(sessions: SessionService, record: SessionRecord, text: string): Promise<Buffer> {
  const paste = text.includes('\n') && (await pasteModeOn(sessions, record));
  return Buffer.from((shellFamily(record.shell) === 'posix' ? CTRL_U : '') + (paste ? `\x1b[200~${text}\x1b[201~` : text), 'utf8');
}

/** True when the application last switched bracketed paste on (DECSET 2004): only then is a paste frame understood. */
async function pasteModeOn(sessions: SessionService, record: SessionRecord): Promise<boolean> {
  const { bytes } = await sessions.readRaw(record.session_id, undefined, SubmitConstants.PASTE_PROBE_BYTES);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buf.lastIndexOf(PASTE_ON) > buf.lastIndexOf(PASTE_OFF);
}

interface AckWatch extends Disposable {
  /** Resolves with the first output offset past Enter, 'exit', or never (the caller races it with its timeout). */
  readonly outcome: Promise<{ outputOffset: number } | 'exit'>;
}

function watchAcknowledgement(sessions: SessionService, record: SessionRecord, enterOffset: number): AckWatch {
  let settle: (v: { outputOffset: number } | 'exit') => void = () => {};
  const outcome = new Promise<{ outputOffset: number } | 'exit'>((resolve) => (settle = resolve));
  const output = sessions.onActivity(record.session_id, (offset, bytes) => {
    if (offset + bytes > enterOffset) settle({ outputOffset: offset + bytes });
  });
  const lifecycle = sessions.onLifecycle((event, r) => {
    if (event === 'closed' && r === record) settle('exit');
  });
  return {
    outcome,
    dispose() {
      output.dispose();
      lifecycle.dispose();
    },
  };
}

async function awaitAcknowledgement(
  record: SessionRecord,
  input: SessionInput,
  written: Written,
  submissionId: string,
  opts: SubmitOptions,
): Promise<SubmitReceipt> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<'timeout' | 'aborted'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), opts.timeoutMs);
    onAbort = () => resolve('aborted');
    if (opts.signal?.aborted) resolve('aborted');
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
  const outcome = await Promise.race([written.ack.outcome, deadline]);
  clearTimeout(timer);
  if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
  written.ack.dispose();

  const receipt: SubmitReceipt = {
    submission_id: submissionId,
    submitted: true,
    write_state: 'complete',
    acknowledged: false,
    retry_safe: false,
    turn_epoch: written.epoch,
    composer_state: 'cleared',
  };
  if (typeof outcome === 'object') {
    input.acknowledgeClaim();
    receipt.acknowledged = true;
    receipt.acknowledgement = { enter_offset: written.enterOffset, output_offset: outcome.outputOffset };
    return receipt;
  }
  input.releaseClaim();
  let reason: UnacknowledgedReason;
  if (outcome === 'exit' || record.exit) reason = 'session_exited_after_write';
  else if (outcome === 'aborted') reason = 'request_aborted';
  else reason = input.turnEpoch !== written.epoch ? 'superseded' : 'ack_timeout';
  receipt.reason = reason;
  return receipt;
}

/**
 * A client's submit, the one both faces share (the `session` tool's `submit`, POST
 * /sessions/:id/submit): the receipt of submitCommand with the acknowledgement wait clamped, and the
 * orchestrator's description set once bytes were written (undefined keeps, null or '' clears).
 */
export async function clientSubmit(
  sessions: SessionService,
  ref: string,
  text: string,
  opts: { timeoutMs?: unknown; description?: string | null; signal?: AbortSignal },
): Promise<SubmitReceipt> {
  const receipt = await submitCommand(sessions, ref, text, { timeoutMs: clampAckTimeout(opts.timeoutMs), ...(opts.signal ? { signal: opts.signal } : {}) });
  if (opts.description !== undefined && receipt.write_state !== 'not_started' && sessions.resolve(ref)) sessions.setDescription(ref, opts.description);
  return receipt;
}
