/**
 * Where the bridge finds tuicd. `TUIC_SOCKET` wins; otherwise the socket tuicd itself binds for this
 * config dir and instance (shared/paths.ts, so the two can never disagree); for the default
 * instance only, then any `mcp-*.sock` an older build left in the config dir. A named instance never
 * falls back to another instance's socket, and nothing falls back to a named one.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { resolvePaths } from '../shared/paths.js';

export interface EndpointOptions {
  instance?: string | undefined;
  configDir?: string | undefined;
}

/** Socket paths to try, best first. */
export function endpointCandidates(opts: EndpointOptions, env: NodeJS.ProcessEnv = process.env): string[] {
  const explicit = env['TUIC_SOCKET'];
  if (explicit) return [explicit];
  const paths = resolvePaths({ instance: opts.instance, configDir: opts.configDir }, env);
  const candidates = [paths.socketPath];
  if (paths.instance !== null) return candidates;
  let names: string[] = [];
  try {
    names = readdirSync(paths.configDir);
  } catch {
    // No config dir yet: tuicd never ran here.
  }
  for (const name of names.sort()) if (/^mcp-.+\.sock$/.test(name)) candidates.push(join(paths.configDir, name));
  return candidates;
}
