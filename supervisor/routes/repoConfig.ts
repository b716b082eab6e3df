/**
 * GET/PUT /config/repositories, /config/repo-settings, /config/repo-defaults: per-domain JSON files
 * owned by the client; PUT replaces the file and answers `{ok:true}`. Saving repositories re-reads
 * the registry (and publishes `repositories-changed`); saving repo-settings reloads the per-project
 * upstream allowlists that live in the same file.
 */
import type { TSchema } from 'typebox';
import { Type } from 'typebox';

import type { RootGate } from '../fs/rootGate.js';
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { DomainConfigFile } from '../repos/domainConfigFile.js';
import { checkRepoPath } from '../repos/repoArgs.js';
import type { RepoRegistry } from '../repos/repoRegistry.js';
import { absolutePath, ConfigFileSchema, configFileBody, OkAnswer, RepositoriesBody } from '../repos/repoSchemas.js';

export interface RepoConfigDeps {
  registry: RepoRegistry;
  /** The root gate the has-custom path passes. */
  gate: RootGate;
  repoSettings: DomainConfigFile;
  repoDefaults: DomainConfigFile;
  /** After repo-settings.json is replaced (ProjectUpstreams reads it too). */
  onRepoSettingsSaved: () => Promise<void>;
}

const TAG = 'repos';

/** GET and PUT of one file. */
function fileRoutes(
  pattern: string,
  fileName: string,
  what: string,
  read: () => Promise<object>,
  save: (value: unknown) => Promise<void>,
  body: TSchema,
): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern,
      tag: TAG,
      summary: `${what} (${fileName}); \`{}\` when there is none`,
      answers: { 200: ConfigFileSchema },
      handler: async () => json(await read()),
    }),
    defineRoute({
      method: 'PUT',
      pattern,
      tag: TAG,
      summary: `Replace ${fileName}`,
      body,
      answers: { 200: OkAnswer },
      handler: async ({ body }) => {
        await save(body);
        return json({ ok: true });
      },
    }),
  ];
}

export function repoConfigRoutes(deps: RepoConfigDeps): Route[] {
  return [
    ...fileRoutes(
      '/config/repositories',
      'repositories.json',
      'The registered repositories',
      () => deps.registry.file.read(),
      (v) => deps.registry.save(v),
      RepositoriesBody,
    ),
    ...fileRoutes(
      '/config/repo-settings',
      'repo-settings.json',
      'Per-repository settings, keyed by repository path',
      () => deps.repoSettings.read(),
      async (v) => {
        await deps.repoSettings.write(v);
        await deps.onRepoSettingsSaved();
      },
      configFileBody('repo-settings.json'),
    ),
    defineRoute({
      method: 'GET',
      pattern: '/config/repo-settings/has-custom',
      tag: TAG,
      summary: 'Whether a repository has settings of its own in repo-settings.json',
      query: Type.Object({ path: absolutePath('path', 'The repository (an existing directory).') }),
      answers: { 200: Type.Object({ has_custom: Type.Boolean() }) },
      handler: async ({ query }) => {
        const path = checkRepoPath(deps.gate, query.path, 'path', 'query');
        const entry = (await deps.repoSettings.read())[path];
        return json({ has_custom: typeof entry === 'object' && entry !== null && Object.keys(entry).some((k) => k !== 'path') });
      },
    }),
    ...fileRoutes(
      '/config/repo-defaults',
      'repo-defaults.json',
      'The settings every repository starts from',
      () => deps.repoDefaults.read(),
      (v) => deps.repoDefaults.write(v),
      configFileBody('repo-defaults.json'),
    ),
  ];
}
