/** Pending `ui confirm` requests as cards with Allow / Deny: the first answer from any client wins. */
import { api } from './api.js';
import { h } from './dom.js';
import type { Confirm } from './model.js';

export function confirmCards(confirms: Iterable<Confirm>, onlySession?: string): HTMLElement | null {
  const list = [...confirms].filter((c) => onlySession === undefined || c.origin_session_id === onlySession || c.origin_session_id === undefined);
  if (list.length === 0) return null;
  return h(
    'section',
    { class: 'confirms', 'aria-label': 'Pending confirmations' },
    ...list.map((c) => {
      const answer = (confirmed: boolean) => async (e: Event) => {
        (e.currentTarget as HTMLButtonElement).disabled = true;
        await api('POST', '/mcp/confirm-response', { request_id: c.request_id, confirmed });
      };
      return h(
        'div',
        { class: 'confirm', role: 'alertdialog', 'aria-label': c.title, 'data-request': c.request_id },
        h('strong', {}, c.title),
        c.message ? h('p', {}, c.message) : null,
        h('div', { class: 'row' }, h('button', { class: 'primary', onclick: answer(true) }, 'Allow'), h('button', { onclick: answer(false) }, 'Deny')),
      );
    }),
  );
}
