/// <reference lib="webworker" />
/**
 * The /mobile service worker: the page's own files come from the cache at once and are refreshed
 * in the background (the page still opens with no link); API calls and streams always go to the
 * network. Push messages become notifications that open the session they are about.
 */
declare const self: ServiceWorkerGlobalScope;

const CACHE = 'tuicd-mobile-v1';
const SHELL = ['/mobile', '/mobile/app.js', '/mobile/app.css', '/mobile/manifest.webmanifest', '/mobile/icon-192.png'];

self.addEventListener('install', (e) => {
  e.waitUntil(
    caches
      .open(CACHE)
      .then((c) => c.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== 'GET' || url.origin !== location.origin) return;
  const isShell = url.pathname.startsWith('/mobile/session/') || (SHELL.includes(url.pathname) && url.pathname !== '/mobile/login');
  if (!isShell) return;
  const key = url.pathname.startsWith('/mobile/session/') ? '/mobile' : url.pathname;
  e.respondWith(
    caches.open(CACHE).then(async (cache) => {
      const cached = await cache.match(key);
      const fresh = fetch(e.request).then((res) => {
        // Only a real page goes in the cache, never the login redirect.
        if (res.ok && !res.redirected) void cache.put(key, res.clone());
        return res;
      });
      if (cached) {
        fresh.catch(() => undefined);
        return cached;
      }
      return fresh;
    }),
  );
});

self.addEventListener('push', (e) => {
  const msg = (e.data?.json() ?? {}) as { title?: string; body?: string; url?: string; tag?: string };
  e.waitUntil(
    self.registration.showNotification(msg.title ?? 'tuicd', {
      body: msg.body ?? '',
      tag: msg.tag ?? 'tuicd',
      data: { url: msg.url ?? '/mobile' },
      icon: '/mobile/icon-192.png',
    }),
  );
});

self.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const url = (e.notification.data as { url?: string } | undefined)?.url ?? '/mobile';
  e.waitUntil(
    self.clients.matchAll({ type: 'window' }).then((list) => {
      const open = list.find((c) => new URL(c.url).pathname.startsWith('/mobile'));
      return open ? open.navigate(url).then((c) => c?.focus()) : self.clients.openWindow(url);
    }),
  );
});
