/** POST/GET /diagnostics/capture: the off-by-default raw PTY capture (every byte in and out, timed, to `.tcap` files), run by the pty host. */
import { isAbsolute, join } from 'node:path';

import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { CaptureStatus } from '../../shared/protocol/pty.js';
import type { PtyHost } from '../hosts/ptyHost.js';
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { SessionService } from '../sessions/sessionService.js';

const TAG = 'sessions';

const CaptureBody = Type.Object({
  enabled: Type.Boolean({ description: 'true starts a capture (each file afresh); false stops it.', errorMessage: 'enabled must be true or false' }),
  session_id: Type.Optional(
    Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
      description: 'The one session to capture (its id, alias or tuic_session); absent or null: every session, new ones too.',
      errorMessage: 'session_id must be a non-empty string',
    }),
  ),
});

/** Overrides `<config dir>/captures`; must be absolute. */
const CAPTURE_DIR_ENV = 'TUIC_CAPTURE_DIR';
const CAPTURE_DIR_NAME = 'captures';
const RELATIVE_DIR_ERROR = `${CAPTURE_DIR_ENV} must be absolute`;

export interface DiagnosticsDeps {
  sessions: SessionService;
  host: PtyHost;
  configDir: string;
  env: NodeJS.ProcessEnv;
}

export function diagnosticsRoutes(deps: DiagnosticsDeps): Route[] {
  /** The capture directory, or null when the override is relative (read per request: the env is fixed, the answer cheap). */
  const captureDir = (): string | null => {
    const override = deps.env[CAPTURE_DIR_ENV];
    if (override === undefined || override === '') return join(deps.configDir, CAPTURE_DIR_NAME);
    return isAbsolute(override) ? override : null;
  };

  const stopped = () => ({ enabled: false, session_id: null, dir: captureDir(), sessions: [] });

  return [
    defineRoute({
      method: 'POST',
      pattern: '/diagnostics/capture',
      tag: TAG,
      summary: 'Start or stop capturing the raw bytes in and out of one session, or of every session',
      description: `Files go to \`<config dir>/${CAPTURE_DIR_NAME}\` or \`$${CAPTURE_DIR_ENV}\` (absolute; a relative one is refused with 400 and \`enabled: false\`).`,
      body: CaptureBody,
      answers: { 200: CaptureStatus },
      handler: async ({ body }) => {
        if (!body.enabled) {
          const client = deps.host.runningClient();
          if (client === null) return json(stopped());
          return json(await client.request('capture', { enabled: false }));
        }
        const dir = captureDir();
        if (dir === null) throw new ApiError('invalid_input', RELATIVE_DIR_ERROR, { extra: { enabled: false } });
        let sessionId: string | undefined;
        if (typeof body.session_id === 'string') {
          // Any of the three addresses (id, alias, tuic_session); the host knows sessions by id.
          const record = deps.sessions.get(body.session_id);
          if (record.exit) throw new ApiError('conflict', `Session has exited (${record.exit.reason})`);
          sessionId = record.session_id;
        }
        const client = await deps.host.client();
        return json(await client.request('capture', { enabled: true, dir, ...(sessionId !== undefined ? { session_id: sessionId } : {}) }));
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/diagnostics/capture',
      tag: TAG,
      summary: 'Whether a raw capture runs, of what, and the files it writes',
      answers: { 200: CaptureStatus },
      handler: async () => {
        const client = deps.host.runningClient();
        if (client === null) return json(stopped());
        return json(await client.request('captureStatus', {}));
      },
    }),
  ];
}
