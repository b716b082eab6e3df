/** POST/GET /diagnostics/capture (REFERENCE §1.3): the off-by-default raw PTY capture, run by the pty host. */
import { isAbsolute, join } from 'node:path';

import type { PtyHost } from '../hosts/ptyHost.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { SessionService } from '../sessions/sessionService.js';

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

  return [
    {
      method: 'POST',
      pattern: '/diagnostics/capture',
      handler: async (ctx) => {
        const body = parseJsonBody<{ enabled?: unknown; session_id?: unknown }>(ctx);
        if (typeof body !== 'object' || body === null || typeof body.enabled !== 'boolean') throw new HttpError(400, 'enabled must be true or false');
        if (body.session_id !== undefined && body.session_id !== null && (typeof body.session_id !== 'string' || body.session_id === '')) {
          throw new HttpError(400, 'session_id must be a non-empty string');
        }
        if (!body.enabled) {
          const client = deps.host.runningClient();
          if (client === null) return json({ enabled: false, session_id: null, dir: captureDir(), sessions: [] });
          return json(await client.request('capture', { enabled: false }));
        }
        const dir = captureDir();
        if (dir === null) return json({ enabled: false, error: RELATIVE_DIR_ERROR }, 400);
        let sessionId: string | undefined;
        if (typeof body.session_id === 'string') {
          // Any of the three addresses (id, alias, tuic_session); the host knows sessions by id.
          const record = deps.sessions.get(body.session_id);
          if (record.exit) throw new HttpError(409, `Session has exited (${record.exit.reason})`);
          sessionId = record.session_id;
        }
        const client = await deps.host.client();
        return json(await client.request('capture', { enabled: true, dir, ...(sessionId !== undefined ? { session_id: sessionId } : {}) }));
      },
    },
    {
      method: 'GET',
      pattern: '/diagnostics/capture',
      handler: async () => {
        const client = deps.host.runningClient();
        if (client === null) return json({ enabled: false, session_id: null, dir: captureDir(), sessions: [] });
        return json(await client.request('captureStatus', {}));
      },
    },
  ];
}
