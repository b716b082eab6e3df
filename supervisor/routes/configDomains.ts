/**
 * GET /config/defaults (what every settings file starts from, for a client's "reset" buttons) and
 * GET|PUT /config/notifications (notifications.json, a client-owned per-domain file like
 * repo-settings.json: any JSON object, replaced whole).
 */
import { Type } from 'typebox';

import { ClientConfigSchema } from '../config/clientSchema.js';
import { defaultConfig } from '../config/normalize.js';
import type { ConfigSnapshot } from '../config/schema.js';
import { redactForClient } from '../config/secrets.js';
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { DomainConfigFile } from '../repos/domainConfigFile.js';
import { ConfigFileSchema, configFileBody, OkAnswer } from '../repos/repoSchemas.js';

const TAG = 'config';

export const NOTIFICATIONS_FILE = 'notifications.json';

const DefaultsAnswer = Type.Object({
  app: ClientConfigSchema,
  notifications: ConfigFileSchema,
  agent_settings: Type.Object(
    {
      intent_tab_title: Type.Null(),
      suggest_followups: Type.Null(),
      progress_tracking: Type.Null(),
      run_configs: Type.Array(Type.Unknown()),
    },
    { description: "One agent's entry in agents.json before it overrides anything (null: inherit the global setting)." },
  ),
  repo_defaults: ConfigFileSchema,
  agents: Type.Object({ agents: Type.Record(Type.String(), Type.Unknown()) }, { description: 'agents.json with no agent in it.' }),
  github_accounts: Type.Array(Type.Unknown(), { description: 'Always empty: GitHub goes through the `gh` CLI and its own accounts.' }),
});

export function configDomainRoutes(notifications: DomainConfigFile): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/config/defaults',
      tag: TAG,
      summary: 'The defaults of every settings file: config.json (secrets as their `*_exists` flags), notifications, an agents.json entry, repo defaults',
      answers: { 200: DefaultsAnswer },
      handler: () =>
        json({
          app: redactForClient(defaultConfig() as ConfigSnapshot),
          notifications: {},
          agent_settings: { intent_tab_title: null, suggest_followups: null, progress_tracking: null, run_configs: [] },
          repo_defaults: {},
          agents: { agents: {} },
          github_accounts: [],
        }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/config/notifications',
      tag: TAG,
      summary: `Notification settings (${NOTIFICATIONS_FILE}), as the client saved them; \`{}\` when there are none`,
      answers: { 200: ConfigFileSchema },
      handler: async () => json(await notifications.read()),
    }),
    defineRoute({
      method: 'PUT',
      pattern: '/config/notifications',
      tag: TAG,
      summary: `Replace ${NOTIFICATIONS_FILE}`,
      body: configFileBody(NOTIFICATIONS_FILE),
      answers: { 200: OkAnswer },
      handler: async ({ body }) => {
        await notifications.write(body);
        return json({ ok: true });
      },
    }),
  ];
}
