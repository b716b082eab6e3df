/** WebSocket `/sessions/:id/stream`: any number of viewers per session; sessions outlive them. */
import type { EngineSocket } from '../http/engine/types.js';

import { PtyConstants } from '../../shared/protocol/pty.js';
import { HttpError } from '../http/types.js';
import type { RequestContext, WsRoute } from '../http/types.js';
import type { SessionService } from '../sessions/sessionService.js';
import { LogViewer } from './logViewer.js';
import { RawViewer } from './rawViewer.js';
import type { ViewerData } from './rawViewer.js';
import type { ViewerPresence } from './viewerPresence.js';

/** uWS's own per-socket buffer cap; our viewers stop at ViewerConstants.HIGH_WATER_BYTES well before it. */
const MAX_BACKPRESSURE_BYTES = 1024 * 1024;
/** Keystrokes and pastes: generous, but bounded like HTTP bodies. */
const MAX_CLIENT_FRAME_BYTES = 2 * 1024 * 1024;

type Viewer = RawViewer | LogViewer;
interface StreamData extends ViewerData {
  log: boolean;
  active?: Viewer;
  /** Tags this viewer's input, so a refusal reported later finds it (writeFromViewer). */
  inputTag?: number;
  /** `?client=mobile`: the /mobile page's session view, counted in ViewerPresence while open. */
  mobile: boolean;
}

/** 1013 Try Again Later: the session is alive; the viewer may reconnect once the program reads. */
const INPUT_REFUSED_CLOSE = 1013;
const INPUT_REFUSED_REASON = `input refused: the program has not read ${PtyConstants.INPUT_BACKLOG_BYTES / (1024 * 1024)} MiB of earlier input`;

export function streamRoute(sessions: SessionService, presence?: ViewerPresence): WsRoute<StreamData> {
  const viewers = new Map<string, Set<Viewer>>();
  sessions.onLifecycle((event, record) => {
    if (event === 'closed') for (const v of viewers.get(record.session_id) ?? []) v.onSessionClosed(record.exit?.reason ?? 'closed');
  });
  // A viewer can type faster than a program that never reads takes it in, and its reads cannot be
  // paused: its input is refused at the host's backlog limit, and it is closed saying so.
  const typing = new Map<number, EngineSocket<StreamData>>();
  let nextInputTag = 0;
  sessions.onInputRefused((_sessionId, tag) => {
    const ws = tag === undefined ? undefined : typing.get(tag);
    if (ws === undefined) return;
    typing.delete(tag!);
    try {
      ws.end(INPUT_REFUSED_CLOSE, INPUT_REFUSED_REASON);
    } catch {
      // It left first.
    }
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
        return {
          sessionId: record.session_id,
          offset,
          binary: ctx.query.get('encoding') === 'binary',
          log: format !== 'raw',
          mobile: ctx.query.get('client') === 'mobile',
        };
      },
      open(ws: EngineSocket<StreamData>) {
        const d = ws.getUserData();
        const viewer: Viewer = d.log ? new LogViewer(ws, sessions, d.sessionId, d.offset) : new RawViewer(ws, sessions, d.sessionId, d.offset, d.binary);
        d.active = viewer;
        if (d.mobile) presence?.add(d.sessionId);
        let set = viewers.get(d.sessionId);
        if (!set) viewers.set(d.sessionId, (set = new Set()));
        set.add(viewer);
      },
      message(ws: EngineSocket<StreamData>, message: ArrayBuffer) {
        const d = ws.getUserData();
        if (d.inputTag === undefined) typing.set((d.inputTag = nextInputTag++), ws);
        // Closing or stalling a viewer never signals the shell; only what the viewer types reaches it.
        sessions.writeFromViewer(d.sessionId, new Uint8Array(message.slice(0)), d.inputTag);
      },
      drain(ws: EngineSocket<StreamData>) {
        const v = ws.getUserData().active;
        if (v instanceof RawViewer) v.onDrain();
      },
      close(ws: EngineSocket<StreamData>) {
        const d = ws.getUserData();
        if (d.inputTag !== undefined) typing.delete(d.inputTag);
        if (!d.active) return;
        if (d.mobile) presence?.remove(d.sessionId);
        d.active.dispose();
        const set = viewers.get(d.sessionId);
        set?.delete(d.active);
        if (set?.size === 0) viewers.delete(d.sessionId);
      },
    },
  };
}
