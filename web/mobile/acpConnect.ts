/**
 * /mobile/acp: start an ACP agent (the `ego_executable` setting, in a directory the phone names) or
 * go back to one started earlier from this phone (remembered here; ones tuicd no longer knows are
 * dropped, ones it could not be asked about right now are kept).
 */
import { ApiError, api } from './api.js';
import { h } from './dom.js';

const STORE_KEY = 'tuicd.acp.connections';
const REMEMBERED_MAX = 10;

interface Remembered {
  id: string;
  root: string;
}

function remembered(): Remembered[] {
  try {
    const v = JSON.parse(localStorage.getItem(STORE_KEY) ?? '[]') as unknown;
    return Array.isArray(v) ? (v as Remembered[]).filter((r) => typeof r?.id === 'string' && typeof r.root === 'string') : [];
  } catch {
    return [];
  }
}

function remember(list: Remembered[]): void {
  localStorage.setItem(STORE_KEY, JSON.stringify(list.slice(0, REMEMBERED_MAX)));
}

export function acpConnectPage(open: (connectionId: string) => void, back: () => void): HTMLElement {
  const root = h('input', {
    type: 'text',
    name: 'root',
    placeholder: '/home/you/project',
    'aria-label': 'Directory',
    required: true,
    autocapitalize: 'off',
    spellcheck: false,
  });
  const error = h('p', { class: 'status', role: 'alert' });
  const earlier = h('ul', { class: 'sessions', 'aria-label': 'Agents started earlier' });
  const connect = async (): Promise<void> => {
    error.textContent = 'Starting the agent…';
    try {
      const snap = await api<{ id: string; root: string }>('POST', '/acp/connections', { root: root.value.trim() });
      remember([{ id: snap.id, root: snap.root }, ...remembered().filter((r) => r.id !== snap.id)]);
      open(snap.id);
    } catch (err) {
      error.textContent = err instanceof Error ? err.message : String(err);
    }
  };
  void (async () => {
    const kept: Remembered[] = [];
    const rows: HTMLElement[] = [];
    for (const r of remembered()) {
      let state: string;
      let name = 'Agent';
      try {
        const snap = await api<{ state: string; agentInfo?: { name?: string; title?: string } | null }>('GET', `/acp/connections/${encodeURIComponent(r.id)}`);
        state = snap.state;
        name = snap.agentInfo?.title ?? snap.agentInfo?.name ?? name;
      } catch (err) {
        // Ended or forgotten since (deleted, tuicd restarted): drop it. No network or a server
        // error says nothing about it: keep it for the next look.
        if (err instanceof ApiError && err.status === 404) continue;
        state = 'unreachable';
      }
      kept.push(r);
      rows.push(
        h(
          'li',
          {},
          h(
            'button',
            { class: 'session', onclick: () => open(r.id) },
            h('span', { class: 'top' }, h('span', { class: 'name' }, name), h('span', { class: 'badge' }, state)),
            h('span', { class: 'detail' }, r.root),
          ),
        ),
      );
    }
    remember(kept);
    earlier.replaceChildren(...rows);
    earlier.dataset['loaded'] = '1';
  })();
  return h(
    'main',
    { class: 'acp-connect' },
    h('header', {}, h('button', { class: 'small', onclick: back, 'aria-label': 'Back' }, '‹'), h('h1', {}, 'Agents (ACP)')),
    h(
      'form',
      { class: 'row', onsubmit: (e: Event) => (e.preventDefault(), void connect()) },
      root,
      h('button', { class: 'primary', type: 'submit' }, 'Start agent'),
    ),
    error,
    earlier,
  );
}
