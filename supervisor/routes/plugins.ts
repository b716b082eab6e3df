/**
 * Plugins: the guide (GET /plugins/docs), the manifests under plugins/ (GET /plugins/list), each
 * plugin's data files (GET|POST /api/plugins/:plugin_id/data/*path) and the output watchers
 * (POST /api/plugins/output-watchers).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Type } from 'typebox';

import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { PLUGIN_DEV_GUIDE } from '../mcp/tools/pluginDevGuide.js';
import { PLUGIN_ID_PATTERN, type PluginData, PluginDataLimits } from '../plugins/pluginData.js';
import { type OutputWatcherRegistry, WatcherLimits } from '../plugins/outputWatcherRegistry.js';
import { WatcherPatternLimits } from '../../shared/watcherPatterns.js';

const TAG = 'plugins';
const MANIFEST_FILE = 'manifest.json';

const DataParams = Type.Object({
  plugin_id: Type.String({ pattern: PLUGIN_ID_PATTERN, description: 'Letters, digits, `.`, `_` and `-`, starting with a letter or digit.' }),
  path: Type.String({
    minLength: 1,
    maxLength: PluginDataLimits.PATH_CHARS,
    description: "Relative to the plugin's data directory; may hold `/`. `..`, `.`, empty segments, absolute paths and links out of the directory are refused.",
  }),
});

const WatchersBody = Type.Object({
  client_id: Type.String({ minLength: 1, maxLength: WatcherLimits.ID_CHARS, description: 'The frontend whose set this replaces; must not contain `/`.' }),
  seq: Type.Integer({ minimum: 0, description: 'Grows with every post of this client; a post with a seq not above the last applied one is not applied.' }),
  watchers: Type.Array(
    Type.Object({
      id: Type.String({ minLength: 1, maxLength: WatcherLimits.ID_CHARS }),
      pattern: Type.String({ minLength: 1, maxLength: WatcherPatternLimits.PATTERN_CHARS, description: 'A JavaScript regular expression.' }),
      flags: Type.Optional(Type.String({ maxLength: 8, description: 'Any of `i`, `m`, `s`.' })),
    }),
    { maxItems: WatcherLimits.WATCHERS_PER_CLIENT, description: 'The whole set: it replaces the previous one (empty: none).' },
  ),
});

const WatchersAnswer = Type.Object({
  applied: Type.Boolean({ description: 'false: a stale `seq`, the set is unchanged.' }),
  rejected: Type.Array(Type.String(), { description: 'Ids of watchers not set here (the client may match them itself).' }),
  reasons: Type.Record(Type.String(), Type.String(), { description: 'Why each rejected id was refused.' }),
});

export interface PluginRouteDeps {
  data: PluginData;
  pluginsDir: string;
  watchers: OutputWatcherRegistry;
}

export function pluginRoutes(deps: PluginRouteDeps): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/plugins/docs',
      tag: TAG,
      summary: "How to extend tuicd (the `plugin_dev_guide` tool's text)",
      answers: { 200: Type.Object({ content: Type.String() }) },
      handler: () => json({ content: PLUGIN_DEV_GUIDE }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/plugins/list',
      tag: TAG,
      summary: 'The plugin manifests found in the config dir (`plugins/<id>/manifest.json`)',
      description: 'Each manifest as written, with `id` set to its directory name; a directory without a readable JSON object manifest is left out.',
      answers: { 200: Type.Array(Type.Object({ id: Type.String() }, { additionalProperties: true })) },
      handler: async () => {
        const manifests: object[] = [];
        for (const id of await deps.data.ids()) {
          try {
            const manifest: unknown = JSON.parse(await readFile(join(deps.pluginsDir, id, MANIFEST_FILE), 'utf8'));
            if (typeof manifest === 'object' && manifest !== null && !Array.isArray(manifest)) manifests.push({ ...manifest, id });
          } catch {
            // Not a plugin directory (yet).
          }
        }
        return json(manifests);
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/api/plugins/:plugin_id/data/*path',
      tag: TAG,
      summary: "Read a plugin's data file",
      description: `From \`plugins/<plugin_id>/data/\` in the config dir: \`application/json\` when the content starts with \`{\` or \`[\`, else \`text/plain\`. 404 when missing, 413 over ${PluginDataLimits.READ_BYTES / (1024 * 1024)} MiB.`,
      params: DataParams,
      answers: { 200: { description: 'The file as stored.', contentType: 'text/plain' } },
      handler: async ({ params }) => {
        const bytes = await deps.data.read(params.plugin_id, params.path);
        const first = bytes.toString('utf8', 0, Math.min(bytes.length, 64)).trimStart()[0];
        const type = first === '{' || first === '[' ? 'application/json' : 'text/plain; charset=utf-8';
        return { status: 200, headers: { 'content-type': type }, body: bytes };
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/api/plugins/:plugin_id/data/*path',
      tag: TAG,
      summary: "Write a plugin's data file",
      description:
        'The body, as sent, replaces the file (atomically; directories on the way are created inside the data directory). ' +
        'On TCP the Content-Type must still say JSON (the cross-site guard); the bytes are stored whatever they are.',
      params: DataParams,
      answers: { 200: Type.Object({ ok: Type.Literal(true) }) },
      handler: async ({ params }, ctx) => {
        await deps.data.write(params.plugin_id, params.path, ctx.body);
        return json({ ok: true });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/api/plugins/output-watchers',
      tag: TAG,
      summary: "Replace one client's output watchers: patterns matched against every session's output lines",
      description:
        `Per client (a frontend: one set for all its plugins), at most ${WatcherLimits.CLIENTS} clients (the least recently posted is dropped) ` +
        `and ${WatcherLimits.WATCHERS_PER_CLIENT} watchers each. Re-post every 30 s to stay among them: a set not posted for ${WatcherLimits.IDLE_MS / 1000} s is dropped. ` +
        'Matching runs in the pty host on each stripped line; matched lines come as `watcher-lines` frames to the viewers that opened ' +
        '`/sessions/:id/stream?client_id=<client_id>`, and as `plugin-watcher-lines` on GET /events, with ids `<client_id>/<watcher_id>`. ' +
        'A pattern the linear-time engine cannot run (backreferences, lookaround, large counted repetitions) or with flags other than ' +
        '`i`, `m`, `s` is not set: its id comes back in `rejected`.',
      body: WatchersBody,
      answers: { 200: WatchersAnswer },
      handler: ({ body }) => json(deps.watchers.apply(body.client_id, body.seq, body.watchers)),
    }),
  ];
}
