// POST /config/project-mcp-upstreams on a real HttpServer over a unix socket, with the real
// ProjectUpstreams store on real files: what it saves, and every refusal with its code and field.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { bindUnix, closeUnix, type UnixBinding } from '../../../supervisor/http/listeners.js';
import { HttpServer } from '../../../supervisor/http/server.js';
import { projectUpstreamsRoutes } from '../../../supervisor/routes/projectUpstreams.js';
import { ProjectUpstreams, REPO_SETTINGS_FILE } from '../../../supervisor/upstreams/projectUpstreams.js';
import { testEngine } from '../../helpers/httpEngine.js';
import { testTcpAuth } from '../../helpers/testAuth.js';
import { httpRequest, type HttpAnswer } from '../../helpers/tuicdProcess.js';

const PATH = '/config/project-mcp-upstreams';

describe('POST /config/project-mcp-upstreams', () => {
  let dir: string;
  let projects: ProjectUpstreams;
  let unix: UnixBinding;
  let changes = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-project-routes-'));
    projects = new ProjectUpstreams({ configDir: dir, log: { warn: () => undefined } });
    await projects.load();
    projects.onChanged(() => changes++);
    const server = new HttpServer({
      engine: testEngine(),
      routes: projectUpstreamsRoutes(projects),
      limits: () => ({ maxBodyBytes: 1024 * 1024, requestTimeoutMs: 10_000 }),
      auth: testTcpAuth(),
    });
    unix = await bindUnix(server.createApp('socket').app, join(dir, 't.sock'));
  });

  after(() => {
    closeUnix(unix);
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (body?: unknown): Promise<HttpAnswer> => {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers = text === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) };
    return httpRequest({ socketPath: unix.path, method: 'POST', path: PATH, headers }, text);
  };
  const saved = () => {
    const file = join(dir, REPO_SETTINGS_FILE);
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  };

  it('saves the names (deduplicated) or null, answers JSON null, and tells listeners', async () => {
    const ok = await post({ repoPath: '/tmp/repo-a', upstreamNames: ['fs', 'fs', 'github'] });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.text, 'null');
    assert.deepEqual(saved()['/tmp/repo-a'], { path: '/tmp/repo-a', mcp_upstreams: ['fs', 'github'] });
    assert.deepEqual([...(projects.allowlistFor('/tmp/repo-a') ?? [])].sort(), ['fs', 'github']);
    assert.equal((await post({ repoPath: '/tmp/repo-a', upstreamNames: null })).status, 200);
    assert.equal(projects.allowlistFor('/tmp/repo-a'), null);
    assert.equal((await post({ repoPath: '/tmp/repo-a' })).status, 200, 'no names: every upstream');
    assert.equal(saved()['/tmp/repo-a'].mcp_upstreams, null);
    assert.equal(changes, 3);
  });

  it('refuses a wrong-typed or missing field with 400 invalid_input naming it, and saves nothing', async () => {
    const before = JSON.stringify(saved());
    const heldChanges = changes;
    const NAMES = "'upstreamNames' must be an array of upstream names, or null for every upstream";
    const cases: Array<[unknown, string, string]> = [
      [{}, 'repoPath', 'repoPath is required'],
      [undefined, 'repoPath', 'repoPath is required'],
      [{ repoPath: 7 }, 'repoPath', "path is required (missing 'repoPath')"],
      [{ repoPath: '' }, 'repoPath', "path is required (missing 'repoPath')"],
      [{ repoPath: ['/tmp/repo-b'] }, 'repoPath', "path is required (missing 'repoPath')"],
      [{ repoPath: `/${'r'.repeat(5000)}` }, 'repoPath', "'repoPath' must be at most 4096 characters"],
      [{ repoPath: '/tmp/repo-b/../elsewhere' }, 'repoPath', 'Path traversal is not allowed'],
      [{ repoPath: '/tmp/repo-b\u0000hidden' }, 'repoPath', 'Path traversal is not allowed'],
      [{ repoPath: 'relative/repo' }, 'repoPath', `Path must be absolute: 'repoPath' must be an absolute path, got "relative/repo"`],
      [{ repoPath: '/tmp/repo-b', upstreamNames: 'fs' }, 'upstreamNames', NAMES],
      [{ repoPath: '/tmp/repo-b', upstreamNames: { fs: true } }, 'upstreamNames', NAMES],
      [{ repoPath: '/tmp/repo-b', upstreamNames: [''] }, 'upstreamNames[0]', NAMES],
      [{ repoPath: '/tmp/repo-b', upstreamNames: ['fs', 42] }, 'upstreamNames[1]', NAMES],
    ];
    for (const [body, field, error] of cases) {
      const r = await post(body);
      assert.equal(r.status, 400, `${JSON.stringify(body)?.slice(0, 100)}: ${r.text}`);
      assert.deepEqual(r.json(), { error, code: 'invalid_input', field, in: 'body' });
    }
    for (const body of ['[]', '"/tmp/repo-b"', 'null']) {
      const r = await post(body);
      assert.equal(r.status, 400, body);
      assert.equal(r.json().code, 'invalid_input');
      assert.equal(r.json().field, '');
    }
    assert.equal(JSON.stringify(saved()), before);
    assert.equal(changes, heldChanges);
  });
});
