/**
 * The ACP stream route's bookkeeping when a socket ends inside its own open: the first catch-up can
 * end the socket (a `gap`), and uWS runs the close callback inside that end, before open returns.
 * The viewer and its presence are recorded before that catch-up, so the close undoes both. The
 * journal dropping frames between the upgrade's check and the open cannot be timed from a client:
 * the route is driven here with a socket that closes the way uWS does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { AcpConnection, type AcpConnectionDeps } from '../../../supervisor/acp/acpConnection.js';
import { AcpJournalLimits } from '../../../supervisor/acp/acpJournal.js';
import { acpPresenceKey } from '../../../supervisor/acp/acpPresence.js';
import type { AcpRegistry } from '../../../supervisor/acp/acpRegistry.js';
import type { EngineSocket } from '../../../supervisor/http/engine/types.js';
import { acpStreamRoute } from '../../../supervisor/routes/acp.js';
import { ViewerPresence } from '../../../supervisor/streaming/viewerPresence.js';

describe('ACP stream route: a socket ended during its first catch-up', () => {
  it('is forgotten by its connection and by presence', () => {
    // Never started: only its journal and viewers are used.
    const connection = new AcpConnection({} as AcpConnectionDeps, '/');
    for (let i = 0; i <= AcpJournalLimits.MAX_FRAMES; i++) connection.journal.append((seq) => JSON.stringify({ kind: 'event', seq }));
    assert.equal(connection.journal.covers(0), false, 'the journal dropped the first frame');
    const registry = { find: () => connection, get: () => connection } as unknown as AcpRegistry;
    const presence = new ViewerPresence();
    const route = acpStreamRoute(registry, presence);

    const userData: Record<string, unknown> = { connectionId: connection.id, after: 0, mobile: true };
    const sent: string[] = [];
    let closed = 0;
    const socket: EngineSocket<any> = {
      send: (message) => (sent.push(String(message)), 1),
      cork: (cb) => (cb(), socket),
      getBufferedAmount: () => 0,
      getUserData: () => userData,
      // As uWS: the close callback runs inside end().
      end: () => {
        closed++;
        route.ws.close?.(socket, 1000);
      },
    };
    route.ws.open?.(socket);

    assert.equal(closed, 1);
    assert.equal(JSON.parse(sent[0]!).kind, 'gap');
    assert.equal(connection.viewers.count, 0);
    assert.equal(presence.watched(acpPresenceKey(connection.id)), false, 'presence released');
  });
});
