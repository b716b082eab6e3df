// Node 20's `node --test` does not expand globs: collect the compiled test files ourselves.
// Then the suites that reach tuicd over HTTP run a second time on the other HTTP engine
// (the node engine where uWS is the default), so both engines pass the same tests, not copies.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../dist/test/', import.meta.url).pathname;
const only = process.argv.slice(2);

/** Routes, limits, auth, guards, SSE, WebSocket viewers, MCP transport and the hub over HTTP. */
const ENGINE_SUITES = [
  'supervisor/http/',
  'supervisor/streaming/',
  'supervisor/events/',
  'supervisor/mcp/transport/',
  'supervisor/upstreams/',
  'supervisor/sessions/sessions.test',
  'supervisor/sessions/review_',
  'supervisor/sessions/viewerInput.test',
  'supervisor/sessions/monitorPage.test',
  'supervisor/mobile/mobileLogin.test',
  'supervisor/mcp/conformance/sdkClient.test',
  'supervisor/lifecycle.test',
  'supervisor/review_lifecycle.test',
  'supervisor/review_routes_input.test',
  'supervisor/configRoutes.test',
  'supervisor/acp/acpStream.test',
];

function collect(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) {
      if (name !== 'fixtures') found.push(...collect(full));
    } else if (name.endsWith('.test.js')) found.push(full);
  }
  return found;
}

function run(files, env, label) {
  process.stdout.write(`\n# ${label}: ${files.length} test files on ${process.version}\n`);
  const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit', env });
  return result.status ?? 1;
}

const files = collect(root)
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}

const { loadUws } = await import('../dist/supervisor/http/engine/select.js');
const forced = process.env.TUIC_HTTP_ENGINE;
const uws = loadUws();
const firstEngine = forced || (uws.ok ? 'uws' : 'node');
let status = run(files, process.env, `all suites, http engine ${firstEngine}`);

const engineFiles = files.filter((f) => ENGINE_SUITES.some((s) => f.includes(`/dist/test/${s}`)));
if (forced) process.stdout.write(`# TUIC_HTTP_ENGINE=${forced}: no second engine pass\n`);
else if (!uws.ok) process.stdout.write(`# uWS unavailable here (${uws.why}): every suite ran on the node engine\n`);
else if (engineFiles.length > 0)
  status = run(engineFiles, { ...process.env, TUIC_HTTP_ENGINE: 'node' }, 'HTTP-facing suites again, http engine node') || status;
process.exit(status);
