/**
 * Entry of the upstream hub worker thread: serves McpHubProtocol to the supervisor on parentPort
 * and reads secrets back through HubHostProtocol on the port passed in workerData. Owns the
 * UpstreamRegistry; pushes the merged tool list whenever it (or the settle state) changes.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';

import { connect, serve, withPayload, type Server } from '../../shared/channel.js';
import { HubHostProtocol, McpHubProtocol, type McpHubProtocolT } from '../../shared/protocol/mcpHub.js';
import type { UpstreamServerWire } from '../../shared/protocol/upstreamServer.js';
import { messagePortTransport } from '../../shared/transports/messagePort.js';
import { HttpUpstream } from './httpUpstream.js';
import { UpstreamRegistry, type LogLevel } from './registry.js';
import { StdioUpstream } from './stdioUpstream.js';
import type { UpstreamClient } from './upstreamClient.js';

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

let pushQueued = false;
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
    log,
  },
  ...(data.healthIntervalMs !== undefined ? { healthIntervalMs: data.healthIntervalMs } : {}),
  ...(data.minRetryMs !== undefined ? { minRetryMs: data.minRetryMs } : {}),
});

const decoder = new TextDecoder();

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
  call: async ({ upstream, tool }, ctx) => {
    const args = ctx.payload && ctx.payload.length > 0 ? (JSON.parse(decoder.decode(ctx.payload)) as Record<string, unknown>) : {};
    const outcome = await registry.call(upstream, tool, args, ctx);
    return withPayload({ upstream_error: outcome.upstreamError }, encoder.encode(outcome.json), { transfer: true });
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
