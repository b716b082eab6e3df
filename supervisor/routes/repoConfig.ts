/**
 * GET/PUT /config/repositories, /config/repo-settings, /config/repo-defaults (REFERENCE §1.5):
 * per-domain JSON files owned by the client; PUT replaces the file and answers `{ok:true}`.
 * Saving repositories re-reads the registry (and publishes `repositories-changed`); saving
 * repo-settings reloads the per-project upstream allowlists that live in the same file.
 */
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';
import type { DomainConfigFile } from '../repos/domainConfigFile.js';
import type { RepoRegistry } from '../repos/repoRegistry.js';
import { repoPathArg } from '../repos/repoArgs.js';

export interface RepoConfigDeps {
  registry: RepoRegistry;
  repoSettings: DomainConfigFile;
  repoDefaults: DomainConfigFile;
  /** After repo-settings.json is replaced (ProjectUpstreams reads it too). */
  onRepoSettingsSaved: () => Promise<void>;
}

async function put(ctx: RequestContext, save: (value: unknown) => Promise<void>) {
  const body = parseJsonBody(ctx);
  try {
    await save(body);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    // Only validation reaches here before the write; a failed write says so with 500.
    if ((err as NodeJS.ErrnoException).code === undefined) throw new HttpError(400, (err as Error).message);
    throw err;
  }
  return json({ ok: true });
}

export function repoConfigRoutes(deps: RepoConfigDeps): Route[] {
  return [
    { method: 'GET', pattern: '/config/repositories', handler: async () => json(await deps.registry.file.read()) },
    { method: 'PUT', pattern: '/config/repositories', handler: (ctx) => put(ctx, (v) => deps.registry.save(v)) },
    { method: 'GET', pattern: '/config/repo-settings', handler: async () => json(await deps.repoSettings.read()) },
    {
      method: 'PUT',
      pattern: '/config/repo-settings',
      handler: (ctx) =>
        put(ctx, async (v) => {
          await deps.repoSettings.write(v);
          await deps.onRepoSettingsSaved();
        }),
    },
    {
      method: 'GET',
      pattern: '/config/repo-settings/has-custom',
      handler: async (ctx) => {
        const path = repoPathArg(ctx.query.get('path'), 'path');
        const entry = (await deps.repoSettings.read())[path];
        return json({ has_custom: typeof entry === 'object' && entry !== null && Object.keys(entry).some((k) => k !== 'path') });
      },
    },
    { method: 'GET', pattern: '/config/repo-defaults', handler: async () => json(await deps.repoDefaults.read()) },
    { method: 'PUT', pattern: '/config/repo-defaults', handler: (ctx) => put(ctx, (v) => deps.repoDefaults.write(v)) },
  ];
}
