/**
 * Upstream MCP servers waiting for an OAuth authorization, as cards with an Authorize button. It
 * starts a flow that comes back to this same tuicd address when it can (`redirect: listener`), opens
 * the authorization page in a new tab, and offers a box for the address the browser ended on, for
 * when it could not come back by itself (the flow's loopback callback is on tuicd's machine).
 */
import { api } from './api.js';
import { h } from './dom.js';

export interface UpstreamRow {
  name: string;
  status: string;
  last_error: string | null;
  authorization_url?: string;
}

interface StartAnswer {
  authorization_url: string;
  as_origin: string;
  cross_domain_as: boolean;
}

export const needsAuthorization = (row: UpstreamRow): boolean => row.status === 'needs_auth' || row.status === 'authenticating';

async function start(name: string): Promise<StartAnswer> {
  try {
    return await api<StartAnswer>('POST', '/mcp/upstreams/oauth/start', { name, redirect: 'listener' });
  } catch {
    // Not on the TCP listener (a forwarded unix socket): the loopback callback, then the paste box.
    return api<StartAnswer>('POST', '/mcp/upstreams/oauth/start', { name });
  }
}

function card(row: UpstreamRow, onChange: () => void): HTMLElement {
  const note = h('p', { class: 'hint', role: 'status' });
  const pasted = h('input', {
    type: 'url',
    placeholder: 'Paste the address the browser ended on',
    'aria-label': `Redirect address for ${row.name}`,
  }) as HTMLInputElement;
  const finish = h(
    'button',
    {
      onclick: async () => {
        try {
          await api('POST', '/mcp/upstreams/oauth/callback', { url: pasted.value.trim() });
          note.textContent = 'Authorized.';
          onChange();
        } catch (err) {
          note.textContent = (err as Error).message;
        }
      },
    },
    'Finish',
  );
  const pasteBox = h('div', { class: 'row', hidden: row.status !== 'authenticating' }, pasted, finish);
  const authorize = h(
    'button',
    {
      class: 'primary',
      onclick: async (e: Event) => {
        const button = e.currentTarget as HTMLButtonElement;
        button.disabled = true;
        try {
          const started = await start(row.name);
          const warning = started.cross_domain_as ? ` (on another domain than the server: ${started.as_origin})` : '';
          note.textContent = `Sign in at ${started.as_origin}${warning}; if the browser does not come back here by itself, paste the address it ends on.`;
          pasteBox.hidden = false;
          open(started.authorization_url, '_blank', 'noopener');
        } catch (err) {
          note.textContent = (err as Error).message;
        } finally {
          button.disabled = false;
        }
      },
    },
    row.status === 'authenticating' ? 'Authorize again' : 'Authorize',
  );
  const cancel = h(
    'button',
    {
      hidden: row.status !== 'authenticating',
      onclick: async () => {
        await api('POST', '/mcp/upstreams/oauth/cancel', { name: row.name }).catch(() => undefined);
        onChange();
      },
    },
    'Cancel',
  );
  return h(
    'div',
    { class: 'confirm upstream-auth', 'data-upstream': row.name },
    h('strong', {}, `${row.name} needs authorization`),
    row.last_error ? h('p', {}, row.last_error) : null,
    h('div', { class: 'row' }, authorize, cancel),
    note,
    pasteBox,
  );
}

/**
 * The section of cards. A card is rebuilt only when its own row changed: another upstream's news
 * must not wipe an address being pasted into this one.
 */
export class UpstreamCards {
  readonly el = h('section', { class: 'confirms', 'aria-label': 'Upstreams waiting for authorization', hidden: true });
  private readonly cards = new Map<string, { key: string; el: HTMLElement }>();

  constructor(private readonly onChange: () => void) {}

  update(rows: Iterable<UpstreamRow>): void {
    const waiting = [...rows].filter(needsAuthorization);
    const next = new Map<string, { key: string; el: HTMLElement }>();
    for (const row of waiting) {
      const key = JSON.stringify(row);
      const kept = this.cards.get(row.name);
      next.set(row.name, kept !== undefined && kept.key === key ? kept : { key, el: card(row, this.onChange) });
    }
    this.cards.clear();
    for (const [name, entry] of next) this.cards.set(name, entry);
    this.el.replaceChildren(...[...next.values()].map((entry) => entry.el));
    this.el.hidden = waiting.length === 0;
  }
}
