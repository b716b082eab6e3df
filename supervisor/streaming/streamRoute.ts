/** WebSocket `/sessions/:id/stream`: any number of viewers per session; sessions outlive them. */
import type { EngineSocket } from '../http/engine/types.js';

import { HttpError } from '../http/types.js';
import type { RequestContext, WsRoute } from '../http/types.js';
import type { SessionService } from '../sessions/sessionService.js';
import { LogViewer } from './logViewer.js';
import { RawViewer } from './rawViewer.js';
import type { ViewerData } from './rawViewer.js';

/** uWS's own per-socket buffer cap; our viewers stop at ViewerConstants.HIGH_WATER_BYTES well before it. */
const MAX_BACKPRESSURE_BYTES = 1024 * 1024;
/** Keystrokes and pastes: generous, but bounded like HTTP bodies. */
const MAX_CLIENT_FRAME_BYTES = 2 * 1024 * 1024;

type Viewer = RawViewer | LogViewer;
interface StreamData extends ViewerData {
  log: boolean;
  active?: Viewer;
}

export function streamRoute(sessions: SessionService): WsRoute<StreamData> {
  const viewers = new Map<string, Set<Viewer>>();
  sessions.onLifecycle((event, record) => {
    if (event === 'closed') for (const v of viewers.get(record.session_id) ?? []) v.onSessionClosed(record.exit?.reason ?? 'closed');
  });
  return {
    pattern: '/sessions/:id/stream',
    ws: {
      maxBackpressure: MAX_BACKPRESSURE_BYTES,
      maxPayloadLength: MAX_CLIENT_FRAME_BYTES,
      accept(ctx: RequestContext): StreamData {
        const record = sessions.resolve(ctx.params['id']!);
        if (!record) throw new HttpError(404, 'Session not found');
        const rawOffset = ctx.query.get('offset');
        let offset: number | undefined;
        if (rawOffset !== null && rawOffset !== '') {
          offset = Number(rawOffset);
          if (!Number.isInteger(offset) || offset < 0) throw new HttpError(400, `offset must be a non-negative integer, got ${rawOffset}`);
        }
        const format = ctx.query.get('format') ?? 'raw';
        if (!['raw', 'text', 'log'].includes(format)) throw new HttpError(400, `format must be raw, text or log, got ${format}`);
        return { sessionId: record.session_id, offset, binary: ctx.query.get('encoding') === 'binary', log: format !== 'raw' };
      },
      open(ws: EngineSocket<StreamData>) {
        const d = ws.getUserData();
        const viewer: Viewer = d.log ? new LogViewer(ws, sessions, d.sessionId, d.offset) : new RawViewer(ws, sessions, d.sessionId, d.offset, d.binary);
        d.active = viewer;
        let set = viewers.get(d.sessionId);
        if (!set) viewers.set(d.sessionId, (set = new Set()));
        set.add(viewer);
      },
      message(ws: EngineSocket<StreamData>, message: ArrayBuffer) {
        const d = ws.getUserData();
        // Closing or stalling a viewer never signals the shell; only what the viewer types reaches it.
        sessions.writeFromViewer(d.sessionId, new Uint8Array(message.slice(0)));
      },
      drain(ws: EngineSocket<StreamData>) {
        const v = ws.getUserData().active;
        if (v instanceof RawViewer) v.onDrain();
      },
      close(ws: EngineSocket<StreamData>) {
        const d = ws.getUserData();
        if (!d.active) return;
        d.active.dispose();
        const set = viewers.get(d.sessionId);
        set?.delete(d.active);
        if (set?.size === 0) viewers.delete(d.sessionId);
      },
    },
  };
}
