/**
 * Bad input to the monitoring and per-project allowlist routes is the client's mistake: a 400 with
 * a message naming what is wrong, never a 500 and never a saved entry.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../helpers/tuicdProcess.js';

const JSON_HEADERS = { 'Content-Type': 'application/json' };

describe('route input review', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start();
  });
  after(async () => {
    await t.stop();
  });

  it('hash-password answers 400 "password is required" for a JSON body that is not an object', async () => {
    for (const path of ['/config/hash-password', '/auth/hash-password']) {
      for (const body of ['null', '42', '"pw"', '[]']) {
        const r = await t.socket('POST', path, body, JSON_HEADERS);
        assert.equal(r.status, 400, `${path} ${body}: ${r.text}`);
        assert.deepEqual(r.json(), { error: 'password is required', code: 'invalid_input', field: '', in: 'body' });
      }
    }
  });

  it('project-mcp-upstreams validates repoPath like validate_path_string and saves nothing it refuses', async () => {
    const settingsFile = join(t.configDir, 'repo-settings.json');
    const cases: [unknown, string][] = [
      [undefined, 'repoPath is required'],
      ['', 'path is required'],
      [7, 'path is required'],
      ['/tmp/repo/../elsewhere', 'Path traversal is not allowed'],
      ['/tmp/repo\u0000hidden', 'Path traversal is not allowed'],
      ['relative/repo', 'Path must be absolute'],
    ];
    for (const [repoPath, message] of cases) {
      const r = await t.socket('POST', '/config/project-mcp-upstreams', JSON.stringify({ repoPath, upstreamNames: ['everything'] }), JSON_HEADERS);
      assert.equal(r.status, 400, `${JSON.stringify(repoPath)}: ${r.text}`);
      const error = r.json<{ error: string }>().error;
      assert.ok(error.startsWith(message), `${JSON.stringify(repoPath)}: ${error}`);
    }
    const saved = existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : '{}';
    assert.deepEqual(JSON.parse(saved), {}, 'a refused path is not saved');

    const ok = await t.socket('POST', '/config/project-mcp-upstreams', JSON.stringify({ repoPath: '/tmp/repo', upstreamNames: ['everything'] }), JSON_HEADERS);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(settingsFile, 'utf8'))), ['/tmp/repo']);
  });
});
