// A pty host that crashed more often than its restart budget allows is a temporary refusal, not a
// server fault: POST /sessions answers 503 with Retry-After (seconds until the next start may
// happen) and the budget's message. A real pty host killed with SIGKILL until the budget is spent,
// behind the real session routes and HTTP server on a unix socket.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { EventBus } from '../../../supervisor/events/eventBus.js';
import { ProcessStarter } from '../../../supervisor/hosts/processStarter.js';
import { PtyHost, PtyHostConstants } from '../../../supervisor/hosts/ptyHost.js';
import { bindUnix, closeUnix, type UnixBinding } from '../../../supervisor/http/listeners.js';
import { HttpServer } from '../../../supervisor/http/server.js';
import { sessionRoutes } from '../../../supervisor/routes/sessions.js';
import { SessionService } from '../../../supervisor/sessions/sessionService.js';
import { testTcpAuth } from '../../helpers/testAuth.js';
import { httpRequest } from '../../helpers/tuicdProcess.js';
import { testEngine } from '../../helpers/httpEngine.js';
import { shellHomeEnv } from '../../helpers/testHome.js';

const PTY_HOST_ENTRY = new URL('../../../workers/pty/main.js', import.meta.url).pathname;
const quiet = { info() {}, warn() {}, error() {} };

describe('pty host past its restart budget', { timeout: 25_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'tuicd-restart-budget-'));
  const host = new PtyHost(new ProcessStarter({ entry: PTY_HOST_ENTRY }), quiet);
  const bus = new EventBus();
  const sessions = new SessionService({
    host,
    bus,
    configDir: work,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...shellHomeEnv(work) },
    maxSessions: () => 50,
    defaultShell: () => '/bin/sh',
  });
  const handlerErrors: unknown[] = [];
  const server = new HttpServer({
    engine: testEngine(),
    routes: sessionRoutes(sessions),
    limits: () => ({ maxBodyBytes: 1024 * 1024, requestTimeoutMs: 10_000 }),
    auth: testTcpAuth(),
    onHandlerError: (err) => handlerErrors.push(err),
  });
  let binding: UnixBinding;
  /** Shells of sessions created here: a SIGKILLed host cannot end them, its closing pty hangs them up. */
  const shellPids: number[] = [];
  const post = (body: object) =>
    httpRequest({ socketPath: binding.path, method: 'POST', path: '/sessions', headers: { 'Content-Type': 'application/json' } }, JSON.stringify(body));

  before(async () => {
    binding = await bindUnix(server.createApp('socket').app, join(work, 's.sock'));
  });
  after(async () => {
    for (const pid of shellPids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Hung up with its host, as it should be.
      }
    }
    closeUnix(binding);
    sessions.dispose();
    await host.stop();
    bus.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  it('POST /sessions answers 201 while the host runs', async () => {
    const r = await post({ cwd: work });
    assert.equal(r.status, 201, r.text);
    shellPids.push(r.json<{ pid: number }>().pid);
  });

  it('after RESTART_BUDGET starts that all crashed, POST /sessions is 503 with Retry-After and the clear message', async () => {
    // The host that serves now is start 1; every crash is followed by the next start, up to the budget.
    for (let start = 1; start <= PtyHostConstants.RESTART_BUDGET; start++) {
      await host.client();
      const pid = host.pid!;
      const exited = new Promise<void>((resolve) => {
        const sub = host.onHostExited(() => (sub.dispose(), resolve()));
      });
      process.kill(pid, 'SIGKILL');
      await exited;
    }
    const refused = await host.client().then(
      () => assert.fail('a start past the budget was allowed'),
      (err: unknown) => err,
    );
    assert.ok(refused instanceof SupervisorError);
    assert.equal(refused.code, ErrorCode.WORKER_EXITED);

    const r = await post({ cwd: work });
    assert.equal(r.status, 503, r.text);
    const retryAfter = Number(r.headers['retry-after']);
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= PtyHostConstants.RESTART_WINDOW_MS / 1000,
      `Retry-After: ${String(r.headers['retry-after'])}`,
    );
    assert.match(
      r.json<{ error: string }>().error,
      new RegExp(`^pty host started ${PtyHostConstants.RESTART_BUDGET} times in the last minute; next try in \\d+s$`),
    );
    assert.deepEqual(handlerErrors, [], 'a spent restart budget is no handler failure');
  });
});
