/**
 * POST /config/project-mcp-upstreams `{repoPath, upstreamNames?}`: sets which upstream servers MCP
 * sessions working in that repository may list and call; no names (or null) means every upstream.
 * Saved to repo-settings.json; open GET /mcp streams hear notifications/tools/list_changed.
 * Guarded like the other config routes (see mcpUpstreams.ts).
 */
import { isAbsolute } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { defineRoute } from '../http/routeSpec.js';
import type { Reply, Route } from '../http/types.js';
import type { ProjectUpstreams } from '../upstreams/projectUpstreams.js';
import { NullAnswer, ProjectUpstreamsBody } from '../upstreams/upstreamSchemas.js';

const JSON_NULL: Reply = { status: 200, headers: { 'Content-Type': 'application/json' }, body: 'null' };

/**
 * The path rules beyond its shape, in this order: no traversal, absolute. `..` would otherwise be
 * resolved away and save the allowlist under another repository; a NUL would be saved as a key no
 * file system path can match.
 */
function checkRepoPath(value: string): void {
  const field = { extra: { field: 'repoPath', in: 'body' } };
  if (value.includes('..') || value.includes('\0')) throw new ApiError('invalid_input', 'Path traversal is not allowed', field);
  if (!isAbsolute(value))
    throw new ApiError('invalid_input', `Path must be absolute: 'repoPath' must be an absolute path, got ${quoteClientInput(value)}`, field);
}

export function projectUpstreamsRoutes(projects: ProjectUpstreams): Route[] {
  return [
    defineRoute({
      method: 'POST',
      pattern: '/config/project-mcp-upstreams',
      tag: 'hub',
      summary: 'Set which upstreams MCP sessions working in a repository may list and call',
      description:
        "Saved to repo-settings.json, where it wins over the repository's own `.tuic.json`; open GET /mcp streams hear `notifications/tools/list_changed`.",
      body: ProjectUpstreamsBody,
      emptyBody: {},
      answers: { 200: NullAnswer },
      handler: async ({ body }) => {
        checkRepoPath(body.repoPath);
        await projects.set(body.repoPath, body.upstreamNames ?? null);
        return JSON_NULL;
      },
    }),
  ];
}
