/**
 * The MCP conformance suite (0.1.16, `--suite all`, Node 22) against a server seen through tuicd's
 * hub: our conformance fixture (test/fixtures/upstreams/conformanceServer.ts, which passes all 32
 * server scenarios straight, conformanceServer.test.ts) runs as the stdio upstream `conf` of a real
 * tuicd, and the suite talks to tuicd's /mcp through the namespacing forwarder
 * (test/helpers/namespacingForwarder.ts): the suite calls the fixture's own names, the forwarder
 * turns them into the hub's (`conf__<name>`, `tuic://conf/<uri>`) and back. The socket listener is
 * the target, as in serverScenarios.test.ts: the suite cannot send credentials.
 *
 * An MCP server must work through the hub exactly as it does directly, so every scenario must pass
 * but those in BY_DESIGN, each failing for its pinned reason.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { NamespacingForwarder } from '../../../helpers/namespacingForwarder.js';
import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { stdioServer, writeUpstreams } from '../../../helpers/upstreamServers.js';
import { type ConformanceCheck, runConformance, verdict } from './thirdPartyCli.js';

const CONFORMANCE_SERVER_JS = new URL('../../../fixtures/upstreams/conformanceServer.js', import.meta.url).pathname;
const UPSTREAM = 'conf';

/** Server scenarios in 0.1.16 (`conformance list --server`); a new one must be looked at here. */
const SCENARIOS = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'completion-complete',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'elicitation-sep1330-enums',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
] as const;

/** Scenarios that cannot pass on this path, with the suite's error text pinned, so a failure for another reason shows. */
const BY_DESIGN: Partial<Record<(typeof SCENARIOS)[number], { why: string; failure: RegExp }>> = {
  'dns-rebinding-protection': {
    why: 'the socket listener has no Host to protect, so it accepts a foreign Host by design; Host/Origin validation lives on the TCP listener, where serverScenarios.test.ts runs this scenario',
    failure: /Expected HTTP 4xx for invalid Host\/Origin headers, got 2\d\d/,
  },
};

type SuiteRun = Awaited<ReturnType<typeof runConformance>>;

async function waitUntilReady(t: Tuicd): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await t.socket('GET', '/mcp/upstream-status');
    const row =
      answer.status === 200
        ? answer.json<{ upstreams: { name: string; status: string; last_error: string | null }[] }>().upstreams.find((r) => r.name === UPSTREAM)
        : undefined;
    if (row?.status === 'ready') return;
    if (Date.now() > deadline) throw new Error(`upstream ${UPSTREAM} never got ready: ${answer.text}\n${t.stderr.slice(-1500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('MCP conformance suite 0.1.16 through the hub: the fixture as a stdio upstream', () => {
  let configDir: string;
  let t: Tuicd | undefined;
  let forwarder: NamespacingForwarder | undefined;
  let suite: SuiteRun;

  before(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'tuicd-conf-hub-'));
    writeUpstreams(configDir, [stdioServer(UPSTREAM, [CONFORMANCE_SERVER_JS, '--stdio'])]);
    t = await Tuicd.start({ configDir });
    await waitUntilReady(t);
    forwarder = await NamespacingForwarder.start(t.socketPath, UPSTREAM);
    suite = await runConformance(forwarder.url, { suite: 'all' });
  });
  after(async () => {
    await forwarder?.stop();
    await t?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  const checksOf = (name: string): ConformanceCheck[] => {
    const checks = suite.checks.get(name);
    assert.ok(checks && checks.length > 0, `no checks.json for ${name} (suite exit ${suite.code}): ${suite.stdout.slice(-800)} ${suite.stderr.slice(-800)}`);
    return checks;
  };

  it('runs every server scenario of 0.1.16 (pass count printed)', () => {
    assert.deepEqual([...suite.checks.keys()].sort(), [...SCENARIOS].sort(), `suite exit ${suite.code}: ${suite.stderr.slice(-800)}`);
    const passed = SCENARIOS.filter((name) => verdict(checksOf(name)).passed);
    const applicable = SCENARIOS.length - Object.keys(BY_DESIGN).length;
    process.stdout.write(
      `# conformance suite through the hub: ${passed.length}/${SCENARIOS.length} scenarios pass (${applicable} applicable; failing: ${SCENARIOS.filter((n) => !passed.includes(n)).join(', ') || 'none'})\n`,
    );
  });

  for (const name of SCENARIOS) {
    const excluded = BY_DESIGN[name];
    if (excluded) {
      it(`${name} cannot pass here, by design: ${excluded.why}`, () => {
        const v = verdict(checksOf(name));
        assert.ok(!v.passed, `${name} passes now: drop it from BY_DESIGN`);
        assert.ok(
          v.problems.some((p) => excluded.failure.test(p)),
          `${name} fails for another reason than ${excluded.failure}: ${v.problems.join(' | ')}`,
        );
      });
    } else {
      it(`${name} passes through the hub`, () => {
        const v = verdict(checksOf(name));
        assert.ok(v.passed, `${name} did not pass:\n${v.problems.join('\n')}`);
      });
    }
  }
});
