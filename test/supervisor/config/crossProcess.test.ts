import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const WRITER = fileURLToPath(new URL('../../fixtures/configWriter.js', import.meta.url));
const SAVES_PER_PROCESS = 30;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tuicd-config-xproc-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function runWriter(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [WRITER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

test('two processes saving different fields concurrently lose neither', { timeout: 60_000 }, async () => {
  const path = join(dir, 'config.json');
  // Pre-seed one flag per save; each is set once, so any lost update leaves a false behind for good.
  const seed: Record<string, unknown> = { services: { server: { enabled: true } } };
  for (let i = 0; i < SAVES_PER_PROCESS; i++) {
    seed[`a${i}`] = false;
    seed[`b${i}`] = false;
  }
  await writeFile(path, JSON.stringify(seed));

  const startAt = String(Date.now() + 500);
  const count = String(SAVES_PER_PROCESS);
  const [a, b] = await Promise.all([runWriter([path, 'a', count, startAt, 'auth']), runWriter([path, 'b', count, startAt, 'server'])]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);

  const final = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown> & {
    services: { server: { enabled: boolean; port: number }; auth: { username: string } };
  };
  const lost = Object.keys(seed).filter((key) => /^[ab]\d+$/.test(key) && final[key] !== true);
  assert.deepEqual(lost, [], `saves lost: ${lost.join(', ')}`);
  assert.equal(final.services.auth.username, `a${SAVES_PER_PROCESS - 1}`);
  assert.equal(final.services.server.port, 20000 + SAVES_PER_PROCESS - 1);
  assert.equal(final.services.server.enabled, true, 'a field neither process touched must survive');
  assert.deepEqual(await readdir(dir), ['config.json'], 'no temp files or stale lock left behind');
});
