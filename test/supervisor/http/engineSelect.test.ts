/**
 * Which HTTP engine tuicd runs on, and why, as a user sees it: the start line, /health, the
 * --http-engine flag and its environment twin, on this machine's Node and on Node 24 (where no
 * uWS build loads on this glibc and tuicd serves on node:http + ws).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { dualProtocolEngine, loadUws, parseEngineName, platformLabel, selectEngine } from '../../../supervisor/http/engine/select.js';
import { UwsEngine } from '../../../supervisor/http/engine/uwsEngine.js';
import { nodeBinary } from '../../helpers/node22.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const START_LINE_ENGINE = /\(http engine (uws|node): ([^)]+(?:\([^)]*\)[^)]*)*)\)$/m;

async function engineOf(t: Tuicd): Promise<{ name: string; detail: string }> {
  const health = (await t.socket('GET', '/health')).json<{ http_engine: { name: string; detail: string } }>();
  const line = START_LINE_ENGINE.exec(t.stdout);
  assert.ok(line, `start line names the engine: ${t.stdout}`);
  assert.equal(line[1], health.http_engine.name, 'start line and /health agree');
  return health.http_engine;
}

describe('HTTP engine selection', { timeout: 120_000 }, () => {
  it('engine names are uws or node; anything else is refused by name', () => {
    assert.equal(parseEngineName(undefined, 'x'), undefined);
    assert.equal(parseEngineName('', 'x'), undefined);
    assert.equal(parseEngineName('node', 'x'), 'node');
    assert.throws(() => parseEngineName('fast', '--http-engine'), /--http-engine must be uws or node, got "fast"/);
    assert.equal(selectEngine('node').name, 'node');
    assert.match(selectEngine('node').detail, /forced/);
  });

  it('a TLS listener stays on the node engine, and moves off uWS, which cannot serve TLS beside plain HTTP on one port', () => {
    const node = selectEngine('node');
    assert.equal(node.servesDualProtocol, true);
    assert.equal(dualProtocolEngine(node), node);
    const uws = loadUws();
    if (!uws.ok) return;
    const engine = new UwsEngine(uws.module, uws.label);
    assert.equal(engine.servesDualProtocol, false);
    const forTls = dualProtocolEngine(engine);
    assert.equal(forTls.name, 'node');
    assert.match(forTls.detail, /for the TLS listener \(uws cannot serve TLS and plain HTTP on one port\)/);
    assert.throws(() => engine.createApp({ tls: { cert: Buffer.alloc(0), key: Buffer.alloc(0) } }), /uWS engine serves no TLS/);
  });

  it('uWS loads on this Node 20 (the @trufflesuite build), and is the default', {
    skip: process.versions.modules !== '115' && 'the machine Node is not 20',
  }, () => {
    const uws = loadUws();
    assert.ok(uws.ok, uws.ok ? '' : uws.why);
    const engine = selectEngine();
    assert.equal(engine.name, 'uws');
    assert.match(engine.detail, /@trufflesuite build\) on Node 20 ABI 115/);
  });

  for (const name of ['uws', 'node'] as const) {
    const skip = name === 'uws' && !loadUws().ok && 'no uWS build loads on this Node';
    it(`--http-engine ${name} serves on ${name}, and says so`, { skip }, async () => {
      const t = await Tuicd.start({ args: ['--http-engine', name], env: { TUIC_HTTP_ENGINE: '' } });
      try {
        assert.equal((await engineOf(t)).name, name);
      } finally {
        await t.stop();
      }
    });
  }

  it('TUIC_HTTP_ENGINE picks the engine when the flag is absent; a bad value fails the start by name', async () => {
    const t = await Tuicd.start({ env: { TUIC_HTTP_ENGINE: 'node' } });
    try {
      assert.equal((await engineOf(t)).name, 'node');
    } finally {
      await t.stop();
    }
    const bad = await Tuicd.runToExit(['--config-dir', '/nonexistent-never-created'], { TUIC_HTTP_ENGINE: 'quick' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /TUIC_HTTP_ENGINE must be uws or node, got "quick"/);
  });

  describe('on Node 24', () => {
    const node24 = nodeBinary(24);
    const onGlibc = platformLabel().includes('glibc');

    it('serves on the node engine and says why uWS is not used', async () => {
      const t = await Tuicd.start({ node: node24, env: { TUIC_HTTP_ENGINE: '' } });
      try {
        const engine = await engineOf(t);
        const health = (await t.socket('GET', '/health')).json<{ build: { node: string } }>();
        assert.match(health.build.node, /^v24\./);
        // Which build misses depends on the libc; this machine's glibc predates what @btc-vision needs.
        if (engine.name === 'node') {
          assert.match(engine.detail, /^uWS unavailable for Node 24 ABI 137 on /);
          assert.match(engine.detail, /@trufflesuite\/uws-js-unofficial has no uws_linux_x64_137\.node/);
          if (onGlibc) assert.match(engine.detail, /@btc-vision\/uwebsockets\.js needs glibc ≥ 2\.\d+/);
        } else assert.match(engine.detail, /@btc-vision build\) on Node 24/);
      } finally {
        await t.stop();
      }
    });

    it('--http-engine uws where no uWS build loads fails the start and says why', async (t) => {
      if (selectEngineOn24IsUws) return t.skip('a uWS build loads on Node 24 here');
      const r = await Tuicd.runToExit(['--config-dir', '/nonexistent-never-created', '--http-engine', 'uws'], { TUIC_HTTP_ENGINE: '' }, node24);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /--http-engine uws: uWS unavailable for Node 24 ABI 137/);
    });
  });
});

/** glibc ≥ 2.38 would let the @btc-vision build load on Node 24. */
const selectEngineOn24IsUws = (() => {
  const m = /glibc (\d+)\.(\d+)/.exec(platformLabel());
  return m !== null && (Number(m[1]) > 2 || Number(m[2]) >= 38);
})();
