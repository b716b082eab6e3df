/**
 * Intent markers become progress-journal `intent` entries (the journal's third kind is
 * observed, never claimed by an agent): one per change of a session's intent, redacted and bounded by the
 * journal, only while progress tracking is on.
 */
import type { EventBus } from '../events/eventBus.js';
import type { Logger } from '../log.js';
import type { SessionRecord } from '../sessions/sessionRecord.js';
import type { ProgressJournal } from './progressJournal.js';

export class IntentRecorder {
  /** The newest intent recorded per session: an identical one is not written again. */
  private readonly newest = new Map<string, string>();

  constructor(
    private readonly journal: ProgressJournal,
    private readonly bus: EventBus,
    /** Progress tracking for this session's agent (global AND agents.json). */
    private readonly enabled: (session: SessionRecord) => boolean,
    private readonly log: Logger,
  ) {}

  record(session: SessionRecord, text: string): void {
    if (!this.enabled(session) || this.newest.get(session.session_id) === text) return;
    this.newest.set(session.session_id, text);
    this.journal
      .append({ kind: 'intent', project: session.cwd, agent: session.tuic_session, text, session_id: session.session_id })
      .then((entry) => this.bus.publish('progress-recorded', { entry }))
      .catch((err: unknown) => this.log.warn({ err: String(err), session_id: session.session_id }, 'could not record an intent in the progress journal'));
  }

  /** The session is gone: its newest intent need not be remembered. */
  forget(sessionId: string): void {
    this.newest.delete(sessionId);
  }
}
