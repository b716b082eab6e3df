/**
 * Plugins: the guide and manifests, each plugin's data files under `plugins/<id>/data/` in the
 * config dir, and output watchers: the sets clients post go to the pty host (matching runs there),
 * its matches come back to the viewers of the client that set them and to GET /events.
 */
import { join } from 'node:path';

import type { EventBus } from '../events/eventBus.js';
import type { PtyHost } from '../hosts/ptyHost.js';
import { clientOf, OutputWatcherRegistry } from '../plugins/outputWatcherRegistry.js';
import { PluginData } from '../plugins/pluginData.js';
import { pluginRoutes } from '../routes/plugins.js';
import type { WatcherFrames } from '../streaming/watcherFrames.js';
import type { Feature } from './feature.js';

/** How often sets of clients that stopped re-posting are looked for (they re-post every 30 s). */
const WATCHER_SWEEP_MS = 30_000;

export interface PluginsDeps {
  configDir: string;
  bus: EventBus;
  ptyHost: PtyHost;
  watcherFrames: WatcherFrames;
}

export function pluginsFeature(deps: PluginsDeps): Feature {
  const { bus, ptyHost, watcherFrames } = deps;
  const pluginsDir = join(deps.configDir, 'plugins');
  const data = new PluginData(pluginsDir);
  // A host not running yet gets the list when it starts (onStarted), before its first session.
  const watchers = new OutputWatcherRegistry((all) => ptyHost.runningClient()?.emit('outputWatchers', { watchers: all }));
  const sweep = setInterval(() => watchers.expire(), WATCHER_SWEEP_MS);
  sweep.unref();
  const subscriptions = [
    ptyHost.onStarted((client) => {
      const all = watchers.all();
      if (all.length > 0) client.emit('outputWatchers', { watchers: all });
    }),
    ptyHost.on('watcherLines', ({ session_id, lines }) => {
      bus.publish('plugin-watcher-lines', { session_id, lines });
      for (const client of watcherFrames.clientsOf(session_id)) {
        const prefix = `${client}/`;
        const mine = lines.filter((l) => l.matched_ids.some((id) => id.startsWith(prefix)));
        if (mine.length > 0)
          watcherFrames.send(client, {
            type: 'watcher-lines',
            session_id,
            lines: mine.map((l) => ({ text: l.text, matched_ids: l.matched_ids.filter((id) => clientOf(id) === client) })),
          });
      }
    }),
  ];
  return {
    name: 'plugins',
    routes: pluginRoutes({ data, pluginsDir, watchers }),
    dispose: () => {
      clearInterval(sweep);
      for (const s of subscriptions) s.dispose();
    },
  };
}
