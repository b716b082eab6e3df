/**
 * `plugin_dev_guide`: no properties, returns `{content: <guide>}`. tuicd has no
 * plugin system; the guide says so and points at the extension points that do exist, so an agent
 * asked to "write a plugin" builds against something real.
 */
import { defineTool } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

/** Kept under ~2 KB: it is read by agents, every byte is context. */
export const PLUGIN_DEV_GUIDE = `# Extending tuicd

tuicd (headless TUICommander) has no in-process plugin system: nothing is loaded into the daemon.
Build on its public surfaces instead, from any language.

## HTTP API (unix socket, or TCP with Basic Auth when services.server.enabled)
- GET /health, /stats, /metrics — liveness and counters.
- GET/POST /sessions, /sessions/:id/write|resize|pause|resume|output, DELETE /sessions/:id — terminals.
  A session is addressed by its id, its tuic_session or its alias (e.g. tu-1).
- WebSocket /sessions/:id/stream — live output (raw bytes or clean log lines).
- GET/PUT /config — settings (secrets shown only as *_exists flags; PUT merges a partial object).
- GET /progress/list?project=&limit= — the agents' progress journal, newest first.

## Events: GET /events (Server-Sent Events)
One stream of everything the daemon publishes: session lifecycle, config-changed, mcp-toast,
ui-tab, mcp-confirm / mcp-confirm-resolved, progress-recorded, … Filter with ?types=a,b.
A client that renders mcp-confirm answers with POST /mcp/confirm-response {request_id, confirmed};
the first answer wins.

## MCP: /mcp (Streamable HTTP)
Native tools: session, task, progress, ui, plugin_dev_guide (config and debug are off by default,
see disabled_native_tools). Agents in a tuicd terminal reach it through the tuic-bridge stdio sidecar.

## Plugin state and output watchers
- GET/POST /api/plugins/<id>/data/<path> — a plugin's own files (config dir plugins/<id>/data/).
- POST /api/plugins/output-watchers {client_id, seq, watchers:[{id, pattern, flags}]} — regexes run
  on every session's output lines; matches arrive as plugin-watcher-lines on /events and as
  watcher-lines frames on /sessions/:id/stream?client_id=<client_id>.

## Adding tools: upstream MCP servers
To give agents new tools, run them as your own MCP server (stdio or HTTP) and list it in
mcp-upstreams.json in the config dir; tuicd proxies its tools as <upstream>__<tool>.
`;

export function createPluginDevGuideTool(): NativeTool {
  return defineTool({
    name: 'plugin_dev_guide',
    summary: 'How to extend tuicd: its HTTP API, the /events stream, the /mcp tools and upstream MCP servers (there is no in-process plugin system).',
    properties: {},
    handler: () => ({ content: PLUGIN_DEV_GUIDE }),
  });
}
