/**
 * One tuicd per suite for the end-to-end session tests: started before the suite with /bin/sh as
 * its shell, an /events reader and a scratch cwd, all torn down after; plus the REST calls they share.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';

import type { HttpAnswer } from './tuicdProcess.js';
import { SseClient } from './sseClient.js';
import { Tuicd } from './tuicdProcess.js';

export interface CreatedSession {
  session_id: string;
  alias: string;
  tuic_session: string;
}

export interface SessionSuite {
  /** Set once the suite's `before` ran. */
  t: Tuicd;
  sse: SseClient;
  work: string;
  /** POST /sessions running /bin/sh in `work`; asserts 201. */
  create(body?: object): Promise<CreatedSession>;
  /** POST /sessions/:ref/write. */
  write(ref: string, data: string): Promise<HttpAnswer>;
  /** GET /sessions/:ref/output of up to 64 KiB, parsed. */
  raw(ref: string): Promise<any>;
}

export function sessionSuite(prefix: string): SessionSuite {
  const path = (ref: string, tail: string) => `/sessions/${encodeURIComponent(ref)}/${tail}`;
  const suite = {
    work: mkdtempSync(join(tmpdir(), prefix)),
    async create(body: object = {}) {
      const r = await suite.t.socket('POST', '/sessions', JSON.stringify({ cwd: suite.work, shell: '/bin/sh', ...body }));
      assert.equal(r.status, 201, r.text);
      return r.json() as CreatedSession;
    },
    write: (ref: string, data: string) => suite.t.socket('POST', path(ref, 'write'), JSON.stringify({ data })),
    raw: async (ref: string) => (await suite.t.socket('GET', path(ref, 'output?limit=65536'))).json(),
  } as SessionSuite;
  before(async () => {
    suite.t = await Tuicd.start({ env: { SHELL: '/bin/sh' } });
    suite.sse = await SseClient.open({ socketPath: suite.t.socketPath, path: '/events' });
  });
  after(async () => {
    suite.sse?.close();
    await suite.t?.stop();
    rmSync(suite.work, { recursive: true, force: true });
  });
  return suite;
}
