/**
 * The /mobile page: the session list (/mobile) and one session (/mobile/session/<id>), switched
 * without reloading. The feed keeps both current; the service worker makes the page installable
 * and keeps it loadable when the link is down.
 */
import '@xterm/xterm/css/xterm.css';
import './style.css';

import { acpConnectPage } from './acpConnect.js';
import { AcpView } from './acpView.js';
import { api } from './api.js';
import { confirmCards } from './confirms.js';
import { h } from './dom.js';
import { Feed } from './feed.js';
import { sessionList } from './list.js';
import { pushAvailable, subscribePush } from './push.js';
import { SessionView } from './sessionView.js';
import { UpstreamCards } from './upstreams.js';
import type { ViewMode } from './sessionView.js';

const root = document.getElementById('app')!;
const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
let view: SessionView | undefined;
let acpView: AcpView | undefined;
let acpConnect: HTMLElement | undefined;
const listSlot = h('div');
const confirmSlot = h('div');
let upstreamsShown = -1;
const pushButton = h('button', { class: 'small', hidden: true }, 'Notify me');
// Its callback reads `feed` only when a card acts, after both exist.
const upstreamCards = new UpstreamCards(() => void feed.refetchUpstreams());
const listPage = h(
  'main',
  { class: 'list' },
  h(
    'header',
    {},
    h('h1', {}, 'tuicd'),
    pushButton,
    h('button', { class: 'small', onclick: () => go('/mobile/acp') }, 'Agents'),
    h('button', { class: 'small', onclick: () => void logout() }, 'Log out'),
  ),
  status,
  confirmSlot,
  upstreamCards.el,
  listSlot,
);

const feed = new Feed(render);

function sessionFromPath(): string | undefined {
  const m = /^\/mobile\/session\/([^/]+)$/.exec(location.pathname);
  return m ? decodeURIComponent(m[1]!) : undefined;
}

/** /mobile/acp (start or pick an agent) and /mobile/acp/<connection> (its conversation). */
function renderAcp(): boolean {
  const m = /^\/mobile\/acp(?:\/([^/]+))?$/.exec(location.pathname);
  if (m === null) {
    acpView?.dispose();
    acpView = undefined;
    acpConnect = undefined;
    return false;
  }
  view?.dispose();
  view = undefined;
  if (m[1] === undefined) {
    acpView?.dispose();
    acpView = undefined;
    acpConnect ??= acpConnectPage(
      (cid) => go(`/mobile/acp/${encodeURIComponent(cid)}`),
      () => go('/mobile'),
    );
    if (root.firstElementChild !== acpConnect) root.replaceChildren(acpConnect);
    return true;
  }
  acpConnect = undefined;
  const cid = decodeURIComponent(m[1]);
  if (acpView?.connectionId !== cid) {
    acpView?.dispose();
    acpView = new AcpView(cid, new URLSearchParams(location.search).get('session'), () => go('/mobile/acp'));
    root.replaceChildren(acpView.el);
  }
  return true;
}

function render(): void {
  if (renderAcp()) return;
  const id = sessionFromPath();
  if (id !== undefined) {
    if (view?.sessionId !== id) {
      view?.dispose();
      const params = new URLSearchParams(location.search);
      const wanted = params.get('view');
      const mode: ViewMode = wanted === 'terminal' || wanted === 'log' ? wanted : innerWidth < 600 ? 'log' : 'terminal';
      view = new SessionView(id, feed.sessions.get(id), mode, params.get('record') === '1', () => go('/mobile'));
      root.replaceChildren(view.el);
    }
    view.update(feed.sessions.get(id), feed.confirms.values());
    return;
  }
  if (view) {
    view.dispose();
    view = undefined;
  }
  if (root.firstElementChild !== listPage) root.replaceChildren(listPage);
  status.textContent = feed.live ? '' : 'Live updates paused — refreshing every 3 s';
  confirmSlot.replaceChildren(confirmCards(feed.confirms.values()) ?? '');
  if (upstreamsShown !== feed.upstreamsRevision) {
    upstreamsShown = feed.upstreamsRevision;
    upstreamCards.update(feed.upstreams);
  }
  listSlot.replaceChildren(sessionList(feed.sessions.values(), (sid) => go(`/mobile/session/${encodeURIComponent(sid)}`)));
  document.title = `tuicd (${feed.sessions.size})`;
}

function go(path: string): void {
  history.pushState(null, '', path);
  render();
}

async function logout(): Promise<void> {
  await api('POST', '/auth/logout');
  location.assign('/mobile/login');
}

addEventListener('popstate', render);
document.addEventListener('visibilitychange', () => {
  view?.visible(document.visibilityState === 'visible');
  acpView?.visible(document.visibilityState === 'visible');
});
// Relative times on the list age without events.
setInterval(() => {
  if (!view) render();
}, 15_000);

// Test and debugging hook: the open session view, its offset, and a way to drop its link.
(window as unknown as Record<string, unknown>)['tuicdMobile'] = {
  feed,
  get view() {
    return view;
  },
  get acp() {
    return acpView;
  },
};

if ('serviceWorker' in navigator) void navigator.serviceWorker.register('/mobile/sw.js', { scope: '/mobile' }).catch(() => undefined);

void (async () => {
  render();
  await feed.start();
  document.body.dataset['ready'] = '1';
  const key = await pushAvailable().catch(() => null);
  if (key !== null) {
    pushButton.hidden = false;
    pushButton.onclick = () =>
      void subscribePush(key).then(
        () => (status.textContent = 'Notifications on'),
        (err: Error) => (status.textContent = `Notifications not on: ${err.message}`),
      );
  }
})().catch((err: Error) => (status.textContent = `Could not load: ${err.message}`));
