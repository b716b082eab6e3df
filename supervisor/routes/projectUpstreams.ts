/**
 * POST /config/project-mcp-upstreams `{repoPath, upstreamNames?}` (REFERENCE §1.6): sets which
 * upstream servers MCP sessions working in that repository may list and call; no names (or null)
 * means every upstream. Saved to repo-settings.json; open GET /mcp streams hear
 * notifications/tools/list_changed. Guarded like the other config routes (see mcpUpstreams.ts).
 */
import { isAbsolute } from 'node:path';

import { HttpError, parseJsonBody } from '../http/types.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import { isPlainObject } from '../config/merge.js';
import type { ProjectUpstreams } from '../upstreams/projectUpstreams.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';

const JSON_NULL: Reply = { status: 200, headers: { 'Content-Type': 'application/json' }, body: 'null' };

function namesOf(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string' && name !== '')) {
    throw new HttpError(400, "'upstreamNames' must be an array of upstream names, or null for every upstream");
  }
  return value as string[];
}

/**
 * REFERENCE §1 `validate_path_string` (HTTP variant: 400), in its order: required, no traversal,
 * absolute. `..` would otherwise be resolved away and save the allowlist under another repository;
 * a NUL would be saved as a key no file system path can match.
 */
const MAX_PATH_CHARS = 4096;

function validRepoPath(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new HttpError(400, "path is required (missing 'repoPath')");
  if (value.includes('..') || value.includes('\0')) throw new HttpError(400, 'Path traversal is not allowed');
  if (!isAbsolute(value)) throw new HttpError(400, `Path must be absolute: 'repoPath' must be an absolute path, got ${quoteClientInput(value)}`);
  // PATH_MAX: no longer path names a repository on Linux; a longer one would only grow the saved file.
  if (value.length > MAX_PATH_CHARS) throw new HttpError(400, `'repoPath' must be at most ${MAX_PATH_CHARS} characters`);
  return value;
}

export function projectUpstreamsRoutes(projects: ProjectUpstreams): Route[] {
  const set = async (ctx: RequestContext) => {
    const body = ctx.body.length === 0 ? {} : parseJsonBody(ctx);
    if (!isPlainObject(body)) throw new HttpError(400, 'request body must be a JSON object');
    const repoPath = validRepoPath(body['repoPath']);
    await projects.set(repoPath, namesOf(body['upstreamNames']));
    return JSON_NULL;
  };
  return [{ method: 'POST', pattern: '/config/project-mcp-upstreams', handler: set }];
}
