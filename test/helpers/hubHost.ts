/**
 * A supervisor-side MCP hub host with the real hub worker for tests: its log lines collected, and it
 * (and its event bus) stopped after the test. Also fails the test on any unhandled rejection seen
 * while it ran: the host's error paths must settle every promise they start.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';

import { EventBus } from '../../supervisor/events/eventBus.js';
import { McpHubHost, type McpHubHostOptions } from '../../supervisor/hosts/mcpHubHost.js';

export function startHubHost(t: TestContext, extra: Partial<McpHubHostOptions> = {}): { host: McpHubHost; bus: EventBus; lines: string[] } {
  const bus = new EventBus();
  const lines: string[] = [];
  const push = (_obj: object, msg: string) => void lines.push(msg);
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const host = new McpHubHost({
    version: 'test',
    bus,
    log: { info: push, warn: push, error: push },
    credential: async () => null,
    ownPort: () => null,
    ...extra,
  });
  t.after(async () => {
    await host.stop();
    bus.dispose();
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
  });
  return { host, bus, lines };
}
