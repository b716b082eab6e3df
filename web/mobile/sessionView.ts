/**
 * One session: its output (a real terminal, xterm.js, or the log view that reads better on a narrow
 * screen), quick replies (Yes / No / Enter / Esc / Ctrl-C, the choice prompt's options, `suggest:`
 * items), free text, and the confirms that came from it.
 */
import { Terminal } from '@xterm/xterm';

import { writeToSession } from './api.js';
import { confirmCards } from './confirms.js';
import { h } from './dom.js';
import { attentionOf, BADGE_TEXT } from './model.js';
import type { Confirm, SessionRow } from './model.js';
import { SessionStream } from './stream.js';

const CHIPS: Array<[string, string]> = [
  ['Yes', 'y'],
  ['No', 'n'],
  ['Enter', '\r'],
  ['Esc', '\x1b'],
  ['Ctrl-C', '\x03'],
];
const LOG_MAX_LINES = 3000;
/** With `?record=1` the bytes written to the terminal are kept, so a test can compare them with the session's output. */
const RECORD_MAX_BYTES = 16 * 1024 * 1024;

export type ViewMode = 'terminal' | 'log';

/** The longest k with the last k of `tail` equal to the first k of `rows` (blank rows match a ' ' line). */
function overlap(tail: string[], rows: string[]): number {
  const same = (a: string, b: string) => a.trim() === b.trim();
  for (let k = Math.min(tail.length, rows.length); k > 0; k--) {
    let ok = true;
    for (let i = 0; i < k && ok; i++) ok = same(tail[tail.length - k + i]!, rows[i]!);
    if (ok) return k;
  }
  return 0;
}

export class SessionView {
  readonly el: HTMLElement;
  private readonly replies = h('div', { class: 'replies' });
  private readonly confirmSlot = h('div');
  private readonly badge = h('span', { class: 'badge' });
  private readonly linkState = h('span', { class: 'link', role: 'status', 'aria-live': 'polite' });
  private readonly output = h('div', { class: 'output' });
  private term: Terminal | undefined;
  private stream: SessionStream | undefined;
  private readonly logLines = h('div', { class: 'log-lines' });
  private readonly logScreen = h('div', { class: 'log-screen' });
  private replyKey = '';
  readonly recorded: Uint8Array[] = [];
  private recordedBytes = 0;

  constructor(
    readonly sessionId: string,
    row: SessionRow | undefined,
    private mode: ViewMode,
    private readonly record: boolean,
    back: () => void,
  ) {
    const input = h('input', {
      type: 'text',
      name: 'reply',
      placeholder: 'Type a reply…',
      autocomplete: 'off',
      enterkeyhint: 'send',
      'aria-label': 'Reply text',
    });
    const form = h(
      'form',
      {
        class: 'say',
        onsubmit: (e: Event) => {
          e.preventDefault();
          const text = input.value;
          input.value = '';
          void this.send(`${text}\r`);
        },
      },
      input,
      h('button', { type: 'submit', class: 'primary' }, 'Send'),
    );
    const toggle = h(
      'button',
      { class: 'toggle', onclick: () => this.setMode(this.mode === 'terminal' ? 'log' : 'terminal') },
      this.mode === 'terminal' ? 'Log view' : 'Terminal',
    );
    this.el = h(
      'main',
      { class: 'view', 'data-session': sessionId },
      h(
        'header',
        {},
        h('button', { class: 'back', onclick: back, 'aria-label': 'Back to the session list' }, '‹'),
        h('h1', {}, row?.display_name || row?.alias || sessionId),
        this.badge,
        toggle,
      ),
      this.linkState,
      this.confirmSlot,
      this.output,
      this.replies,
      form,
    );
    this.update(row, []);
    this.start(row);
  }

  /** New state from the feed: the badge, confirms and reply buttons follow; the output does not move. */
  update(row: SessionRow | undefined, confirms: Iterable<Confirm>): void {
    if (row) {
      const att = attentionOf(row);
      this.badge.className = `badge ${att}`;
      this.badge.textContent = BADGE_TEXT[att];
    }
    this.confirmSlot.replaceChildren(confirmCards(confirms, this.sessionId) ?? '');
    const s = row?.state;
    const choice = s?.choice_prompt;
    const suggest = s?.suggested_actions ?? [];
    // Rebuilt only when what it shows changed, so a tap is never lost to a re-render under the finger.
    const key = JSON.stringify([choice, suggest, s?.question_text]);
    if (key === this.replyKey) return;
    this.replyKey = key;
    const chip = (label: string, data: string, cls = 'chip') => h('button', { class: cls, type: 'button', onclick: () => void this.send(data) }, label);
    this.replies.replaceChildren(
      s?.question_text && !choice ? h('p', { class: 'question' }, s.question_text) : '',
      choice ? h('p', { class: 'question' }, choice.title) : '',
      choice
        ? h(
            'div',
            { class: 'options', role: 'group', 'aria-label': 'Choices' },
            ...choice.options.map((o) => chip(`${o.key}. ${o.label}`, o.key, o.destructive ? 'option destructive' : 'option')),
          )
        : '',
      suggest.length > 0
        ? h('div', { class: 'options', role: 'group', 'aria-label': 'Suggestions' }, ...suggest.map((t) => chip(t, `${t}\r`, 'option suggest')))
        : '',
      h('div', { class: 'chips', role: 'group', 'aria-label': 'Quick replies' }, ...CHIPS.map(([label, data]) => chip(label, data))),
    );
  }

  /** The page went to the background (stop: no push is held back for a screen nobody sees) or came back. */
  visible(yes: boolean): void {
    if (yes) this.stream?.resume();
    else this.stream?.drop();
  }

  dispose(): void {
    this.stream?.stop();
    this.term?.dispose();
  }

  /** Test hook: the link drops as a phone's would. */
  dropLink(): void {
    this.stream?.drop();
  }

  get offset(): number | undefined {
    return this.stream?.offset;
  }

  private async send(data: string): Promise<void> {
    try {
      await writeToSession(this.sessionId, data);
    } catch (err) {
      this.linkState.textContent = `not sent: ${(err as Error).message}`;
    }
  }

  private setMode(mode: ViewMode): void {
    const url = new URL(location.href);
    url.searchParams.set('view', mode);
    location.replace(url);
  }

  private start(row: SessionRow | undefined): void {
    const status = (st: 'live' | 'reconnecting' | 'ended') => {
      this.linkState.textContent = st === 'live' ? '' : st === 'reconnecting' ? 'Link lost — reconnecting…' : 'Session ended';
      this.el.dataset['link'] = st;
    };
    if (this.mode === 'terminal') {
      const dark = matchMedia('(prefers-color-scheme: dark)').matches;
      const term = (this.term = new Terminal({
        cols: row?.cols ?? 80,
        rows: row?.rows ?? 24,
        scrollback: 5000,
        fontSize: 12,
        theme: dark
          ? { background: '#111418', foreground: '#e6e6e6' }
          : { background: '#ffffff', foreground: '#1b1f24', cursor: '#1b1f24', selectionBackground: '#b3d4fc' },
      }));
      term.open(this.output.appendChild(h('div', { class: 'term' })));
      term.onData((d) => {
        if (!this.stream?.send(d)) void this.send(d);
      });
      // From offset 0: a ring that moved on answers with `resync` and where it starts now.
      this.stream = new SessionStream(
        this.sessionId,
        'raw',
        {
          bytes: (b) => {
            term.write(b);
            if (this.record && this.recordedBytes + b.length <= RECORD_MAX_BYTES) {
              this.recorded.push(b.slice());
              this.recordedBytes += b.length;
            }
          },
          frame: (f) => {
            if (f['type'] === 'resync' && f['from'] !== 0) term.write(`\r\n\x1b[2m[${f['missed']} bytes no longer buffered]\x1b[0m\r\n`);
          },
          status,
        },
        0,
      );
    } else {
      this.output.append(h('div', { class: 'log' }, this.logLines, this.logScreen));
      this.stream = new SessionStream(this.sessionId, 'log', {
        frame: (f) => {
          if (f['type'] !== 'log') return;
          for (const l of (f['lines'] as Array<{ text: string }>) ?? []) this.logLines.append(h('div', {}, l.text || ' '));
          while (this.logLines.childElementCount > LOG_MAX_LINES) this.logLines.firstElementChild?.remove();
          if (Array.isArray(f['screen'])) {
            const rows = (f['screen'] as Array<{ text: string }>).map((r) => r.text);
            // The screen's top rows are often the log's last lines: shown once, in the log.
            const skip = overlap(
              [...this.logLines.children].slice(-rows.length).map((d) => d.textContent ?? ''),
              rows,
            );
            const shown = rows.slice(skip);
            while (shown.length > 0 && shown[shown.length - 1]!.trim() === '') shown.pop();
            this.logScreen.replaceChildren(...shown.map((r) => h('div', {}, r || ' ')));
          }
          this.output.scrollTop = this.output.scrollHeight;
        },
        status,
      });
    }
  }
}
