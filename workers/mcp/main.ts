/**
 * Entry of the upstream hub worker thread: serves McpHubProtocol to the supervisor on parentPort
 * and reads secrets back through HubHostProtocol on the port passed in workerData (and asks it the
 * upstreams' sampling, elicitation and roots requests). Owns the UpstreamRegistry; pushes the
 * merged tool list whenever it (or the settle state) changes, the merged resources, templates and
 * prompts likewise, and relays the upstreams' notifications for clients.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';

import { connect, serve, withPayload, type Server } from '../../shared/channel.js';
import { HubHostProtocol, McpHubProtocol, type McpHubProtocolT } from '../../shared/protocol/mcpHub.js';
import type { UpstreamServerWire } from '../../shared/protocol/upstreamServer.js';
import { messagePortTransport } from '../../shared/transports/messagePort.js';
import { HttpUpstream } from './httpUpstream.js';
import { UpstreamRegistry, type LogLevel } from './registry.js';
import { StdioUpstream } from './stdioUpstream.js';
import { type UpstreamClient, UpstreamRpcError } from './upstreamClient.js';

interface HubWorkerData {
  hostPort: MessagePort;
  version: string;
  /** Test knobs: a shorter health interval and retry floor. */
  healthIntervalMs?: number;
  minRetryMs?: { http: number; stdio: number };
}

const data = workerData as HubWorkerData;
const host = connect(messagePortTransport(data.hostPort), HubHostProtocol);
let server: Server<McpHubProtocolT> | undefined;

const log = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
  server?.emit('log', fields === undefined ? { level, msg } : { level, msg, fields });
};

function createClient(upstream: UpstreamServerWire): UpstreamClient {
  const scoped = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => log(level, msg, { upstream: upstream.name, ...fields });
  if (upstream.transport.type === 'stdio') return new StdioUpstream({ server: upstream, version: data.version, log: scoped });
  return new HttpUpstream({
    server: upstream,
    version: data.version,
    log: scoped,
    credential: async (account) => (await host.request('credential', { account })).value,
    refreshCredential: async (rejected) => (await host.request('refreshCredential', { upstream: upstream.name, rejected })).value,
  });
}

let revision = 0;
let lastPushed = '';
let lastSettled = false;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Pushes the merged list when it or the settle state changed; the supervisor splices these bytes. */
function pushTools(): void {
  const { json, count } = registry.mergedToolsJson();
  const settled = registry.settled;
  if (json === lastPushed && settled === lastSettled && revision > 0) return;
  lastPushed = json;
  lastSettled = settled;
  revision++;
  server?.emit('tools', { revision, settled, count }, { payload: encoder.encode(json) });
}

/** Only catches a supervisor that never answers: the upstream's own deadline for its request comes first. */
const CLIENT_REQUEST_TIMEOUT_MS = 10 * 60_000;

/** An upstream's request to the client, through the supervisor; its error answer becomes the upstream's. */
async function askClient(upstream: string, method: string, params: Record<string, unknown> | undefined, route: string | undefined): Promise<unknown> {
  const reply = await host.requestWithPayload('clientRequest', route === undefined ? { upstream, method } : { upstream, method, route }, {
    timeout: CLIENT_REQUEST_TIMEOUT_MS,
    ...(params === undefined ? {} : { payload: encoder.encode(JSON.stringify(params)) }),
  });
  const error = reply.result.error;
  if (error !== undefined) throw new UpstreamRpcError(error.code, error.message, error.data);
  return reply.payload === undefined || reply.payload.length === 0 ? {} : JSON.parse(decoder.decode(reply.payload));
}

let listsRevision = 0;
let lastLists = { resources: '', resourceTemplates: '', prompts: '', capabilities: '' };

/** Pushes the merged lists when any changed; `changed` names those a list_changed is due for. */
function pushLists(): void {
  const merged = registry.mergedListsJson();
  const capabilities = JSON.stringify(merged.capabilities);
  const changed: Array<'resources' | 'prompts'> = [];
  if (merged.resources !== lastLists.resources || merged.resourceTemplates !== lastLists.resourceTemplates) changed.push('resources');
  if (merged.prompts !== lastLists.prompts) changed.push('prompts');
  if (changed.length === 0 && capabilities === lastLists.capabilities && listsRevision > 0) return;
  lastLists = { resources: merged.resources, resourceTemplates: merged.resourceTemplates, prompts: merged.prompts, capabilities };
  listsRevision++;
  const json = `{"resources":${merged.resources},"resourceTemplates":${merged.resourceTemplates},"prompts":${merged.prompts},"capabilities":${capabilities}}`;
  server?.emit('lists', { revision: listsRevision, changed }, { payload: encoder.encode(json) });
}

let pushQueued = false;
let listsQueued = false;
const registry = new UpstreamRegistry({
  createClient,
  events: {
    status: (name, status, lastError) => server?.emit('status', { name, status, last_error: lastError }),
    // Coalesced: one connect changes status and tools in the same tick.
    toolsChanged: () => {
      if (pushQueued) return;
      pushQueued = true;
      queueMicrotask(() => {
        pushQueued = false;
        pushTools();
      });
    },
    listsChanged: () => {
      if (listsQueued) return;
      listsQueued = true;
      queueMicrotask(() => {
        listsQueued = false;
        pushLists();
      });
    },
    notification: (upstream, method, params, route) =>
      server?.emit(
        'notification',
        route === undefined ? { upstream, method } : { upstream, method, route },
        params === undefined ? undefined : { payload: encoder.encode(JSON.stringify(params)) },
      ),
    clientRequest: askClient,
    log,
  },
  ...(data.healthIntervalMs !== undefined ? { healthIntervalMs: data.healthIntervalMs } : {}),
  ...(data.minRetryMs !== undefined ? { minRetryMs: data.minRetryMs } : {}),
});

server = serve(messagePortTransport(parentPort!), McpHubProtocol, {
  connect: ({ server: upstream, own_port }) => {
    registry.connect(upstream, own_port);
    return {};
  },
  disconnect: ({ name }) => {
    registry.disconnect(name);
    return {};
  },
  reconnect: ({ name }) => {
    registry.reconnect(name);
    return {};
  },
  authStatus: ({ name, status, last_error }) => {
    registry.setAuthStatus(name, status, last_error);
    return {};
  },
  initialConnectComplete: () => {
    registry.markInitialConnectComplete();
    return {};
  },
  call: async ({ upstream, tool, route, progress_token }, ctx) => {
    const args = ctx.payload && ctx.payload.length > 0 ? (JSON.parse(decoder.decode(ctx.payload)) as Record<string, unknown>) : {};
    const outcome = await registry.call(upstream, tool, args, ctx, { route, progressToken: progress_token });
    return withPayload({ upstream_error: outcome.upstreamError }, encoder.encode(outcome.json), { transfer: true });
  },
  request: async ({ upstream, method, route, progress_token }, ctx) => {
    const params = ctx.payload && ctx.payload.length > 0 ? (JSON.parse(decoder.decode(ctx.payload)) as Record<string, unknown>) : undefined;
    const outcome = await registry.forward(upstream, method, params, { route, progressToken: progress_token, cancellation: ctx });
    if ('error' in outcome) return { error: outcome.error };
    return withPayload({}, encoder.encode(outcome.json), { transfer: true });
  },
  setLogLevel: ({ level }) => {
    registry.setLogLevel(level);
    return {};
  },
  notifyUpstreams: ({ method }, ctx) => {
    const params = ctx.payload && ctx.payload.length > 0 ? (JSON.parse(decoder.decode(ctx.payload)) as Record<string, unknown>) : undefined;
    registry.notifyUpstreams(method, params);
    return {};
  },
  status: () => ({ upstreams: registry.statusRows() }),
  ping: () => ({}),
  shutdown: async () => {
    await registry.dispose();
    return {};
  },
});

// The supervisor went away: nobody is left to call these upstreams; stop their processes.
server.onClose(() => {
  void registry.dispose().finally(() => {
    host.dispose();
    process.exit(0);
  });
});
