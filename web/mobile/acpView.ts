/**
 * An ACP agent on the phone (/mobile/acp/<connection>?session=<id>): pick or start a session, read
 * the conversation as it streams (messages, tool calls and their status, the plan), answer the
 * agent's permission questions with a tap, write a prompt, cancel a turn. The transcript is rebuilt
 * from the connection's journal on every load, and the stream resumes after its last `seq` when the
 * link or the phone comes back.
 */
import { api, ApiError } from './api.js';
import { AcpStream } from './acpStream.js';
import type { AcpFrame, AcpLink } from './acpStream.js';
import { pendingFrom, Transcript } from './acpTranscript.js';
import type { Pending, TranscriptItem } from './acpTranscript.js';
import { h } from './dom.js';

interface Snapshot {
  id: string;
  generation: number;
  state: string;
  reason?: string;
  root: string;
  agentInfo?: { name?: string; title?: string; version?: string } | null;
  sessions: Array<{ sessionId: string; cwd: string; turnId: string | null }>;
  lastSeq: number;
  firstSeq: number;
}

interface ListedSession {
  sessionId: string;
  title?: string | null;
  cwd?: string;
}

/** Frames the page holds at most: the server's journal keeps 10,000. */
const FRAMES_KEPT = 10_000;

const LINK_TEXT: Record<AcpLink, string> = {
  live: '',
  reconnecting: 'Reconnecting…',
  ended: 'The connection has ended',
  gap: 'Some updates are no longer kept',
};

export class AcpView {
  readonly el: HTMLElement;
  private readonly title = h('h1', {}, 'Agent');
  private readonly state = h('span', { class: 'badge' });
  private readonly linkState = h('p', { class: 'link', role: 'status', 'aria-live': 'polite' });
  private readonly picker = h('select', { class: 'acp-sessions', 'aria-label': 'Session' });
  private readonly log = h('div', { class: 'acp-transcript', 'aria-live': 'polite' });
  private readonly questions = h('div', { class: 'confirms' });
  private readonly input = h('textarea', { class: 'acp-input', rows: 2, placeholder: 'Ask the agent…', 'aria-label': 'Prompt' });
  private readonly send = h('button', { class: 'primary', type: 'submit' }, 'Send');
  private readonly cancel = h('button', { type: 'button', hidden: true }, 'Cancel');
  private readonly errorLine = h('p', { class: 'status', role: 'alert' });
  private stream: AcpStream | undefined;
  /** Every frame seen, so switching sessions rebuilds a transcript without refetching. */
  private readonly frames: AcpFrame[] = [];
  /** The oldest frames of this connection are gone (the journal's bound, or this page's). */
  private historyCut = false;
  private renderQueued = false;
  private transcript: Transcript | undefined;
  private snapshot: Snapshot | undefined;

  constructor(
    readonly connectionId: string,
    private sessionId: string | null,
    back: () => void,
  ) {
    const base = `/acp/connections/${encodeURIComponent(connectionId)}`;
    this.base = base;
    this.picker.onchange = () => void this.choose(this.picker.value);
    this.cancel.onclick = () => void this.act(() => api('POST', `${this.sessionPath()}/cancel`, {}));
    const form = h(
      'form',
      { class: 'acp-composer', onsubmit: (e: Event) => (e.preventDefault(), void this.prompt()) },
      this.input,
      h('div', { class: 'row' }, this.send, this.cancel),
    );
    this.el = h(
      'main',
      { class: 'acp' },
      h('header', {}, h('button', { class: 'small', onclick: back, 'aria-label': 'Back' }, '‹'), this.title, this.state),
      this.linkState,
      h('div', { class: 'row' }, this.picker, h('button', { class: 'small', onclick: () => void this.newSession() }, 'New session')),
      this.log,
      this.questions,
      this.errorLine,
      form,
    );
    void this.start();
  }

  private readonly base: string;

  private sessionPath(): string {
    return `${this.base}/sessions/${encodeURIComponent(this.sessionId ?? '')}`;
  }

  dispose(): void {
    this.stream?.stop();
  }

  /** The phone came back: reconnect at once rather than after the backoff. */
  visible(yes: boolean): void {
    if (yes) this.stream?.resume();
  }

  /** Test hook: cut the stream as a network drop would. */
  dropLink(): void {
    this.stream?.drop();
  }

  get lastSeq(): number {
    return this.stream?.lastSeq ?? 0;
  }

  private async start(): Promise<void> {
    try {
      this.snapshot = await api<Snapshot>('GET', this.base);
    } catch (err) {
      this.fail(err);
      this.el.dataset['state'] = 'gone';
      return;
    }
    this.showSnapshot();
    await this.fillPicker();
    if (this.sessionId === null && this.snapshot.sessions.length > 0) this.sessionId = this.snapshot.sessions[this.snapshot.sessions.length - 1]!.sessionId;
    this.openStream(this.snapshot.firstSeq);
    await this.refreshQuestions();
    this.el.dataset['ready'] = '1';
  }

  private showSnapshot(): void {
    const s = this.snapshot;
    if (s === undefined) return;
    const info = s.agentInfo;
    this.title.textContent = info?.title ?? info?.name ?? 'Agent';
    this.state.textContent = s.state;
    this.state.className = `badge ${s.state === 'ready' ? 'completed' : s.state === 'failed' ? 'errored' : ''}`;
    this.el.dataset['connection'] = s.state;
  }

  private async fillPicker(): Promise<void> {
    const known = new Map<string, string>();
    for (const s of this.snapshot?.sessions ?? []) known.set(s.sessionId, s.cwd);
    try {
      const listed = await api<{ sessions?: ListedSession[] } | ListedSession[]>('GET', `${this.base}/sessions`);
      for (const s of Array.isArray(listed) ? listed : (listed.sessions ?? [])) if (!known.has(s.sessionId)) known.set(s.sessionId, s.title ?? s.cwd ?? '');
    } catch {
      // An agent without session/list: the attached sessions are all there is.
    }
    if (this.sessionId !== null && !known.has(this.sessionId)) known.set(this.sessionId, '');
    this.picker.replaceChildren(
      h('option', { value: '', disabled: true, selected: this.sessionId === null }, known.size === 0 ? 'No session yet' : 'Pick a session'),
      ...[...known].map(([id, label]) => h('option', { value: id, selected: id === this.sessionId }, label ? `${label} (${id.slice(0, 8)})` : id)),
    );
  }

  private async newSession(): Promise<void> {
    await this.act(async () => {
      const created = await api<{ sessionId: string }>('POST', `${this.base}/sessions`, {});
      this.sessionId = created.sessionId;
      this.snapshot = await api<Snapshot>('GET', this.base);
      await this.fillPicker();
      this.rebuild();
      this.remember();
    });
  }

  /** A session this connection has not attached yet is loaded first: its history arrives on the stream. */
  private async choose(sessionId: string): Promise<void> {
    if (sessionId === '' || sessionId === this.sessionId) return;
    this.sessionId = sessionId;
    this.rebuild();
    this.remember();
    if (!(this.snapshot?.sessions ?? []).some((s) => s.sessionId === sessionId)) {
      await this.act(async () => {
        await api('POST', `${this.sessionPath()}/load`, {});
        this.snapshot = await api<Snapshot>('GET', this.base);
      });
    }
  }

  private remember(): void {
    const q = this.sessionId === null ? '' : `?session=${encodeURIComponent(this.sessionId)}`;
    history.replaceState(null, '', `/mobile/acp/${encodeURIComponent(this.connectionId)}${q}`);
  }

  private async prompt(): Promise<void> {
    const text = this.input.value.trim();
    if (text === '') return;
    await this.act(async () => {
      if (this.sessionId === null) {
        const created = await api<{ sessionId: string }>('POST', `${this.base}/sessions`, {});
        this.sessionId = created.sessionId;
        await this.fillPicker();
        this.rebuild();
        this.remember();
      }
      await api('POST', `${this.sessionPath()}/prompt`, { prompt: [{ type: 'text', text }] });
      this.input.value = '';
    });
  }

  private async answer(q: Pending, optionId: string | null): Promise<void> {
    await this.act(async () => {
      try {
        await api('POST', `${this.base}/permissions/${encodeURIComponent(q.requestId)}/response`, optionId === null ? { cancelled: true } : { optionId });
      } catch (err) {
        // Answered elsewhere first (another phone, a desktop): the settled frame removes it here too.
        if (!(err instanceof ApiError && err.status === 409)) throw err;
      }
      this.transcript?.pending.delete(q.requestId);
      this.render();
    });
  }

  /** Questions raised before the oldest kept frame are not in the journal: the list route has them all. */
  private async refreshQuestions(): Promise<void> {
    try {
      const { interactions } = await api<{ interactions: unknown[] }>('GET', `${this.base}/interactions`);
      for (const i of interactions) {
        const p = pendingFrom(i);
        if (p.sessionId === this.sessionId || p.sessionId === null) this.transcript?.pending.set(p.requestId, p);
      }
      this.render();
    } catch {
      // Shown again with the next frame.
    }
  }

  /**
   * Streams from the oldest frame the journal keeps (`firstSeq`), so a reload shows the conversation
   * again; what the journal dropped before it is marked as such at the top of the transcript.
   */
  private openStream(firstSeq: number): void {
    this.stream?.stop();
    this.frames.length = 0;
    this.historyCut = firstSeq > 1;
    this.rebuild();
    this.stream = new AcpStream(this.connectionId, { frame: (f) => this.onFrame(f), status: (s) => this.onLink(s) }, Math.max(0, firstSeq - 1));
  }

  /** The journal dropped frames this page had not seen: start again from what it keeps now. */
  private async reopenAfterGap(): Promise<void> {
    try {
      this.snapshot = await api<Snapshot>('GET', this.base);
      this.openStream(this.snapshot.firstSeq);
    } catch (err) {
      this.fail(err);
    }
  }

  private onFrame(frame: AcpFrame): void {
    this.frames.push(frame);
    // The page keeps no more than the journal does.
    if (this.frames.length > FRAMES_KEPT) {
      this.frames.splice(0, this.frames.length - FRAMES_KEPT);
      this.historyCut = true;
    }
    if (frame.kind === 'event') {
      if (frame.event.type === 'state') {
        if (this.snapshot !== undefined) this.snapshot.state = String(frame.event['state']);
        this.showSnapshot();
      }
      if (this.transcript?.apply(frame.event)) this.scheduleRender();
    } else if (frame.kind === 'gap') {
      void this.reopenAfterGap();
    } else {
      this.transcript?.items.push({ kind: 'notice', text: `The connection ended: ${frame.reason}` });
      this.scheduleRender();
    }
  }

  private onLink(link: AcpLink): void {
    this.linkState.textContent = LINK_TEXT[link];
    this.el.dataset['link'] = link;
    if (link === 'live') void this.refreshQuestions();
  }

  private rebuild(): void {
    this.transcript = this.sessionId === null ? undefined : new Transcript(this.sessionId);
    if (this.historyCut) this.transcript?.items.push({ kind: 'notice', text: 'Earlier updates are no longer kept here (a session load replays its history).' });
    for (const f of this.frames) if (f.kind === 'event') this.transcript?.apply(f.event);
    this.render();
  }

  /** A streaming turn sends hundreds of chunks a second: the page redraws at most once a frame. */
  private scheduleRender(): void {
    if (this.renderQueued) return;
    this.renderQueued = true;
    requestAnimationFrame(() => {
      this.renderQueued = false;
      this.render();
    });
  }

  private render(): void {
    const t = this.transcript;
    this.el.dataset['session'] = this.sessionId ?? '';
    this.el.dataset['turn'] = t?.turnRunning ? 'running' : 'idle';
    this.cancel.hidden = !t?.turnRunning;
    const atBottom = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 40;
    this.log.replaceChildren(...(t === undefined ? [h('p', { class: 'empty' }, 'Start a session, then write to the agent below.')] : t.items.map(itemView)));
    if (atBottom) this.log.scrollTop = this.log.scrollHeight;
    const pending = t === undefined ? [] : [...t.pending.values()];
    this.questions.replaceChildren(
      ...pending.map((q) =>
        h(
          'div',
          { class: 'confirm acp-question', 'data-request': q.requestId },
          h('p', {}, h('strong', {}, q.kind === 'permission' ? 'Allow? ' : 'The agent asks: '), q.title),
          q.kind === 'permission'
            ? h(
                'div',
                { class: 'options' },
                ...q.options.map((o) =>
                  h(
                    'button',
                    { class: o.kind.startsWith('allow') ? 'primary' : '', 'data-option': o.optionId, onclick: () => void this.answer(q, o.optionId) },
                    o.name,
                  ),
                ),
                h('button', { onclick: () => void this.answer(q, null) }, 'Dismiss'),
              )
            : h('p', { class: 'meta' }, 'Answer this form from a desktop client.'),
        ),
      ),
    );
  }

  private async act(fn: () => Promise<unknown>): Promise<void> {
    this.errorLine.textContent = '';
    try {
      await fn();
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    this.errorLine.textContent = err instanceof Error ? err.message : String(err);
  }
}

function itemView(item: TranscriptItem): HTMLElement {
  switch (item.kind) {
    case 'user':
      return h('div', { class: 'msg user' }, item.text);
    case 'agent':
      return h('div', { class: 'msg agent' }, item.text);
    case 'thought':
      return h('details', { class: 'msg thought' }, h('summary', {}, 'Thinking'), item.text);
    case 'tool':
      return h(
        'div',
        { class: `tool ${item.status}`, 'data-tool': item.toolCallId, 'data-status': item.status },
        h('span', { class: 'name' }, item.title),
        h('span', { class: 'badge' }, item.status),
      );
    case 'plan':
      return h(
        'ol',
        { class: 'plan' },
        ...item.entries.map((e) => h('li', { 'data-status': e.status }, `${e.status === 'completed' ? '✓ ' : ''}${e.content}`)),
      );
    case 'turn-end':
      return h('p', { class: 'turn-end' }, item.error ? `Turn failed: ${item.error}` : item.stopReason === 'end_turn' ? 'Done' : `Stopped: ${item.stopReason}`);
    default:
      return h('p', { class: 'notice' }, item.text);
  }
}
