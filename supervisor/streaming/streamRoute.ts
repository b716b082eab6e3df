/** WebSocket `/sessions/:id/stream`: any number of viewers per session; sessions outlive them. */
import { type Static, type TObject, Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { PtyConstants } from '../../shared/protocol/pty.js';
import { checker } from '../../shared/schemaCheck.js';
import { nonNegative, outputFormat, SessionRefParams } from '../sessions/sessionSchemas.js';
import type { SessionService } from '../sessions/sessionService.js';
import { LogViewer } from './logViewer.js';
import { RawViewer } from './rawViewer.js';
import type { ViewerData } from './rawViewer.js';
import { type ViewerFlow, ViewerFlowConstants } from './viewerFlow.js';
import type { ViewerPresence } from './viewerPresence.js';
import type { ViewerSocket } from './viewerSocket.js';
import type { WatcherFrames } from './watcherFrames.js';

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
  /** `?client_id=`: the frontend this viewer belongs to, whose output watcher matches it receives. */
  clientId?: string;
}

/** A viewer's socket, with the data its upgrade attached. */
type StreamSocket = ViewerSocket & { getUserData(): StreamData };

/**
 * What streamRoute hands the HTTP layer, which takes it as one of its WebSocket routes (WsRoute):
 * said here in the terms the feature needs, so streaming knows nothing of HTTP's own types.
 */
export interface StreamRoute {
  pattern: string;
  /** Published in GET /openapi.json as a WebSocket upgrade. */
  spec: {
    tag: string;
    summary: string;
    description: string;
    params: TObject;
    query: TObject;
    answers: Readonly<Record<number, { description: string }>>;
  };
  ws: {
    maxBackpressure: number;
    maxPayloadLength: number;
    /** Before the upgrade: throws ApiError to refuse it; returns the socket's data. */
    accept(request: { readonly params: Readonly<Record<string, string>>; readonly query: URLSearchParams }): StreamData;
    open(ws: StreamSocket): void;
    message(ws: StreamSocket, message: ArrayBuffer): void;
    drain(ws: StreamSocket): void;
    close(ws: StreamSocket): void;
  };
}

/** 1013 Try Again Later: the session is alive; the viewer may reconnect once the program reads. */
const INPUT_REFUSED_CLOSE = 1013;
const INPUT_REFUSED_REASON = `input refused: the program has not read ${PtyConstants.INPUT_BACKLOG_BYTES / (1024 * 1024)} MiB of earlier input`;

export const StreamQuery = Type.Object({
  offset: Type.Optional(
    nonNegative('offset', '', 'Where to start: raw mode, an absolute byte offset (absent: all the ring holds); log mode, a line (absent: the last 500).'),
  ),
  format: Type.Optional(outputFormat('`raw` (default): the bytes as written; `log` or `text` (the same here): stripped lines and the screen.')),
  encoding: Type.Optional(
    Type.String({ description: 'Raw mode: `binary` sends output as binary frames of the bytes as written; anything else, JSON `output` frames.' }),
  ),
  client: Type.Optional(Type.String({ description: "`mobile`: the /mobile page's own view of the session (no push for a session on screen)." })),
  client_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: '^[^/]+$',
      description:
        'The frontend this viewer belongs to: the `client_id` of its output watchers (POST /api/plugins/output-watchers), whose matches in this session come as `watcher-lines` frames.',
    }),
  ),
});

const checkQuery = checker(StreamQuery, 'query');

/** The query as the schema sees it: an offset that reads as a number is one (`?offset=abc` stays text and fails). */
function streamQuery(query: URLSearchParams): Static<typeof StreamQuery> {
  const out: Record<string, unknown> = {};
  const offset = query.get('offset');
  if (offset !== null && offset !== '') out['offset'] = Number.isFinite(Number(offset)) ? Number(offset) : offset;
  for (const name of ['format', 'encoding', 'client', 'client_id'] as const) {
    const value = query.get(name);
    if (value !== null) out[name] = value;
  }
  return checkQuery(out) as Static<typeof StreamQuery>;
}

const FRAMES_DESCRIPTION = [
  'Upgrades to a WebSocket that streams one session to one viewer; sessions outlive their viewers, and any number may watch.',
  '',
  '**Raw mode** (`format=raw`, the default): the ring buffer from `offset` (absent: all it holds), then live output, never skipping a byte. ' +
    'Output comes as JSON text frames `{"type":"output","data","total_written"?}` (UTF-8 decoded; `total_written` on catch-up frames), ' +
    "or with `encoding=binary` as binary frames of the bytes as written. The session's program is slowed to the pace of its slowest live raw viewer, " +
    `which is caught up from the ring when its socket drains; a viewer whose socket takes nothing for ${ViewerFlowConstants.STALL_MS / 1000} s stops holding the session, and bytes the ring ` +
    'no longer holds when it reads again are announced as `{"type":"resync","from","to","missed"}`. Also `{"type":"parsed","event"}` ' +
    '(the output parser\'s events) and `{"type":"error","error"}` if the ring cannot be read.',
  '',
  'With `client_id` (either mode): `{"type":"watcher-lines","session_id","lines":[{"text","matched_ids"}]}` when that client\'s output watchers ' +
    'match lines of this session (ids as `<client_id>/<watcher_id>`).',
  '',
  '**Log mode** (`format=log` or `text`): `{"type":"log","lines":[{"text"}],"offset","total_lines","input_line"?,"screen"?}` with stripped, ' +
    'redacted scrollback lines from line `offset` in batches of 500, then every 200 ms the new lines, the unfinished line (`input_line`) and the screen rows, ' +
    'each only when it changed; `{"type":"state","state"}` (SessionState) when the state changes.',
  '',
  'When the session ends: `{"type":"exit","session_id"}` (raw mode), `{"type":"closed","session_id","reason"}`, then a close frame 1000 ' +
    '`session closed: <reason>`.',
  '',
  'What the viewer sends (text or binary frames) is typed into the session as it is, in order with other writers. ' +
    'Closing the socket never signals the program. A viewer that types more than the program reads ' +
    `(${PtyConstants.INPUT_BACKLOG_BYTES / (1024 * 1024)} MiB unread) is closed with 1013 (try again later); the session goes on.`,
].join('\n');

export function streamRoute(sessions: SessionService, presence?: ViewerPresence, watcherFrames?: WatcherFrames, flow?: ViewerFlow): StreamRoute {
  const viewers = new Map<string, Set<Viewer>>();
  sessions.onLifecycle((event, record) => {
    if (event === 'closed') for (const v of viewers.get(record.session_id) ?? []) v.onSessionClosed(record.exit?.reason ?? 'closed');
  });
  // A viewer can type faster than a program that never reads takes it in, and its reads cannot be
  // paused: its input is refused at the host's backlog limit, and it is closed saying so.
  const typing = new Map<number, ViewerSocket>();
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
    spec: {
      tag: 'streaming',
      summary: "A session's output, live, over a WebSocket: raw bytes or clean log lines; what the viewer sends is typed in",
      description: FRAMES_DESCRIPTION,
      params: SessionRefParams,
      query: StreamQuery,
      answers: { 101: { description: 'Switching Protocols: the WebSocket is open; frames as described above.' } },
    },
    ws: {
      maxBackpressure: MAX_BACKPRESSURE_BYTES,
      maxPayloadLength: MAX_CLIENT_FRAME_BYTES,
      accept(ctx) {
        const record = sessions.resolve(ctx.params['id']!);
        if (!record) throw new ApiError('not_found', 'Session not found');
        const query = streamQuery(ctx.query);
        return {
          sessionId: record.session_id,
          offset: query.offset,
          binary: query.encoding === 'binary',
          log: (query.format ?? 'raw') !== 'raw',
          mobile: query.client === 'mobile',
          ...(query.client_id === undefined ? {} : { clientId: query.client_id }),
        };
      },
      open(ws) {
        const d = ws.getUserData();
        const viewer: Viewer = d.log ? new LogViewer(ws, sessions, d.sessionId, d.offset) : new RawViewer(ws, sessions, d.sessionId, d.offset, d.binary, flow);
        d.active = viewer;
        if (d.mobile) presence?.add(d.sessionId);
        if (d.clientId !== undefined) watcherFrames?.add(d.sessionId, d.clientId, ws);
        let set = viewers.get(d.sessionId);
        if (!set) viewers.set(d.sessionId, (set = new Set()));
        set.add(viewer);
      },
      message(ws, message) {
        const d = ws.getUserData();
        if (d.inputTag === undefined) typing.set((d.inputTag = nextInputTag++), ws);
        // Closing or stalling a viewer never signals the shell; only what the viewer types reaches it.
        // uWS reuses the message's memory after this callback: copied, into Node's pool for a keystroke
        // (a fresh ArrayBuffer per key cost twice as much on the echo path).
        sessions.writeFromViewer(d.sessionId, Buffer.copyBytesFrom(new Uint8Array(message)), d.inputTag);
      },
      drain(ws) {
        const v = ws.getUserData().active;
        if (v instanceof RawViewer) v.onDrain();
      },
      close(ws) {
        const d = ws.getUserData();
        if (d.inputTag !== undefined) typing.delete(d.inputTag);
        if (!d.active) return;
        if (d.mobile) presence?.remove(d.sessionId);
        if (d.clientId !== undefined) watcherFrames?.remove(d.sessionId, d.clientId, ws);
        d.active.dispose();
        const set = viewers.get(d.sessionId);
        set?.delete(d.active);
        if (set?.size === 0) viewers.delete(d.sessionId);
      },
    },
  };
}
