/** The session list: attention first, with agent type, intent or question, last activity and a badge. */
import { h } from './dom.js';
import { ago, attentionOf, BADGE_TEXT, sortForList } from './model.js';
import type { SessionRow } from './model.js';

export function sessionList(rows: Iterable<SessionRow>, open: (id: string) => void): HTMLElement {
  const sorted = sortForList([...rows]);
  if (sorted.length === 0) return h('p', { class: 'empty' }, 'No sessions. Start one with tuicd or an agent.');
  return h(
    'ul',
    { class: 'sessions', 'aria-label': 'Sessions' },
    ...sorted.map((row) => {
      const att = attentionOf(row);
      const s = row.state;
      const detail = s.choice_prompt?.title ?? s.question_text ?? s.agent_intent ?? s.last_error ?? row.cwd;
      return h(
        'li',
        {},
        h(
          'button',
          { class: `session ${att}`, 'data-session': row.session_id, 'data-attention': att, onclick: () => open(row.session_id) },
          h('span', { class: 'top' }, h('span', { class: 'name' }, row.display_name || row.alias), h('span', { class: `badge ${att}` }, BADGE_TEXT[att])),
          h('span', { class: 'meta' }, `${s.agent_type ?? 'shell'} · ${row.alias} · ${ago(s.last_activity_ms)}`),
          h('span', { class: 'detail' }, detail),
        ),
      );
    }),
  );
}
