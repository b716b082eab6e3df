/**
 * The MCP proxy hub: saved upstreams (mcp-upstreams.json) connected from the hub process, the
 * per-project allowlists (repo-settings.json, .tuic.json), and their routes. The allowlists are read
 * before the socket serves, so a project's first tools/list is already narrowed; saved upstreams
 * connect in the background once the listeners are up (nothing waits for a handshake).
 */
import type { Paths } from '../../shared/paths.js';
import { VERSION } from '../../shared/version.js';
import type { EventBus } from '../events/eventBus.js';
import { McpHubHost } from '../hosts/mcpHubHost.js';
import type { Logger } from '../log.js';
import { mcpUpstreamsRoutes } from '../routes/mcpUpstreams.js';
import { upstreamOAuthRoutes } from '../routes/upstreamOAuth.js';
import { OAuthFlows } from '../upstreams/oauth/oauthFlows.js';
import { OAuthStore } from '../upstreams/oauth/oauthStore.js';
import { TokenRefresher } from '../upstreams/oauth/tokenRefresher.js';
import { projectUpstreamsRoutes } from '../routes/projectUpstreams.js';
import type { CredentialStore } from '../secrets/credentialStore.js';
import { ProjectUpstreams } from '../upstreams/projectUpstreams.js';
import { settleTimeoutFromEnv } from '../upstreams/settleTimeout.js';
import { UpstreamStore } from '../upstreams/upstreamStore.js';
import type { Feature } from './feature.js';

export interface HubDeps {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  bus: EventBus;
  log: Logger;
  /** The credential store, once the keyring probe has answered (null before). */
  credentials: () => CredentialStore | null;
  /** Our own port, for the circular-proxy checks. */
  ownPort: () => number;
}

export interface HubFeature extends Feature {
  readonly hub: McpHubHost;
  readonly projects: ProjectUpstreams;
  readonly oauth: OAuthFlows;
}

export function hubFeature(deps: HubDeps): HubFeature {
  const { paths, log, credentials, ownPort } = deps;
  const upstreams = new UpstreamStore({ configDir: paths.configDir, credentials });
  const oauthStore = new OAuthStore(credentials);
  const oauthLog = (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => log[level](fields ?? {}, msg);
  const projects = new ProjectUpstreams({ configDir: paths.configDir, log });
  const hub: McpHubHost = new McpHubHost({
    version: VERSION,
    bus: deps.bus,
    log,
    credential: async (account): Promise<string | null> => {
      const store = credentials();
      if (!store) return null;
      // An upstream's own account may hold an OAuth token set: requests carry its access token, refreshed when due.
      return account.includes('/') ? store.get(account) : refresher.bearer(account);
    },
    refreshCredential: (upstream, rejected) => refresher.afterRejection(upstream, rejected),
    ownPort,
    settleTimeoutMs: settleTimeoutFromEnv(deps.env),
  });
  // The hub's credential reads above reach it only once the hub runs, after this line.
  const refresher: TokenRefresher = new TokenRefresher({
    servers: async () => (await upstreams.read()).servers,
    store: oauthStore,
    read: async (account) => credentials()?.get(account) ?? null,
    // A refused refresh moves the upstream to needs_auth.
    setAuthStatus: (name, status, lastError) => hub.setAuthStatus(name, status, lastError),
    log: oauthLog,
  });
  const oauth = new OAuthFlows({
    servers: async () => (await upstreams.read()).servers,
    store: oauthStore,
    hub: {
      status: async (name) => {
        const row = (await hub.status()).find((r) => r.name === name);
        return row ? { status: row.status, lastError: row.last_error, ...(row.auth_scope !== undefined ? { authScope: row.auth_scope } : {}) } : null;
      },
      setAuthStatus: (name, status, lastError) => hub.setAuthStatus(name, status, lastError),
      reconnect: (name) => hub.reconnect(name),
    },
    onStart: (event) => deps.bus.publish('mcp-oauth-start', event),
    log: oauthLog,
    discovered: (url, found) => refresher.remember(url, found),
  });
  return {
    name: 'hub',
    hub,
    projects,
    oauth,
    routes: [
      ...mcpUpstreamsRoutes({
        store: upstreams,
        control: {
          // A transport that moved takes its OAuth authorization with it: forgotten before the reconnect.
          applyPlan: async (plan) => {
            for (const r of plan.reconnect) if (r.clearStoredAuth && credentials() !== null) await oauthStore.forget(r.before.name);
            await hub.applyPlan(plan);
          },
          reconnect: (name) => hub.reconnect(name),
          status: () => hub.status(),
        },
        credentials,
        ownPort,
        pendingAuthorization: (name) => oauth.pendingUrl(name),
      }),
      ...upstreamOAuthRoutes(oauth),
      ...projectUpstreamsRoutes(projects),
    ],
    prepare: () => projects.load(),
    start: async () => {
      // A corrupt mcp-upstreams.json is named in the log and left alone; the server still comes up.
      const saved = await upstreams.load().catch((err: unknown) => {
        log.error({ err, file: upstreams.path }, 'upstream config not loaded: no upstreams connected');
        return { servers: [] };
      });
      void hub.boot(saved.servers).catch((err: unknown) => log.error({ err }, 'upstream boot failed'));
      oauth.startSweeping();
    },
    dispose: () => {
      oauth.dispose();
      return hub.stop();
    },
  };
}
