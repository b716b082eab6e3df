/**
 * @modelcontextprotocol/conformance 0.1.16 server scenarios (Node 22) against a real tuicd,
 * asserting the suite's own verdict per scenario from its checks.json (no FAILURE or WARNING check),
 * not only its exit code. The suite runs twice, whole (`--suite all`: active and pending scenarios),
 * once per target below; each test reads its scenario's checks from one of those runs.
 *
 * Targets. The suite cannot send credentials (no header option), and tuicd's TCP listener asks for
 * them on every route but /health. So:
 * - the protocol scenarios run against the unix socket listener — no auth by design — through a
 *   byte-for-byte TCP→unix forwarder (test/helpers/unixForwarder.ts);
 * - dns-rebinding-protection runs against the TCP listener itself, where Host/Origin validation
 *   lives (the socket has no Host to protect), with `lan_auth_bypass` so a loopback caller needs no
 *   credentials — the "localhost server without authentication" the scenario is written for.
 *
 * The whole suite against the TCP listener (32 scenarios, pinned in the last test) — what else
 * passes and why the rest cannot. This is tuicd's own /mcp with no upstream: the scenarios that
 * call the suite's reference server's tools, resources and prompts pass through the hub instead
 * (throughHub.test.ts).
 * - pass: server-initialize, ping, tools-list, server-sse-multiple-streams (tuicd answers every POST
 *   as JSON unless messages must reach the client first; the suite accepts that, SSE being optional),
 *   dns-rebinding-protection (TCP only: through the socket a foreign Host is accepted, by design — no
 *   Host to protect there), logging-set-level, resources-list and prompts-list (the hub's merged
 *   lists, empty with no upstream), and, vacuously, tools-call-simple-text and tools-call-error: they
 *   call fixture tools (test_simple_text, test_error_handling) and accept tuicd's `Unknown tool …`
 *   isError text as "text content" / "an error".
 * - not applicable, the reference server's fixtures, which tuicd does not have of its own: its
 *   resources (test://static-text, test://static-binary, test://template/{id}/data,
 *   test://watched-resource: "Resource not found", -32002), its prompts (test_simple_prompt…:
 *   prompt names behind tuicd are `{upstream}__{name}`) and completion of their arguments, and its
 *   tools (test_image_content, test_audio_content, test_embedded_resource,
 *   test_multiple_content_types, test_tool_with_logging, test_tool_with_progress, test_sampling,
 *   test_elicitation…): tools-call-image, -audio, -embedded-resource, -mixed-content, -with-logging,
 *   -with-progress, -sampling, -elicitation, elicitation-sep1034-defaults, elicitation-sep1330-enums.
 * - pending scenarios: server-sse-polling passes as "not applicable" (it probes priming events and
 *   Last-Event-ID resumption only on an SSE answer; tuicd answers JSON here); json-schema-2020-12 needs
 *   the fixture tool json_schema_2020_12_tool.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { UnixForwarder } from '../../../helpers/unixForwarder.js';
import { runConformance, verdict, type ConformanceCheck } from './thirdPartyCli.js';

/** Why each scenario tuicd does not pass fails: the suite's error text, pinned, so a failure for another reason shows. */
const NOT_APPLICABLE: Record<string, RegExp> = {
  'tools-call-with-logging': /No log notifications received/,
  'completion-complete': /Unknown prompt 'test_prompt_with_arguments'/,
  'resources-read-text': /Resource not found: test:\/\/static-text/,
  'resources-read-binary': /Resource not found: test:\/\/static-binary/,
  'resources-templates-read': /Resource not found: test:\/\/template\/123\/data/,
  'resources-subscribe': /Resource not found: test:\/\/watched-resource/,
  'resources-unsubscribe': /Resource not found: test:\/\/watched-resource/,
  'prompts-get-simple': /Unknown prompt 'test_simple_prompt'/,
  'prompts-get-with-args': /Unknown prompt 'test_prompt_with_arguments'/,
  'prompts-get-embedded-resource': /Unknown prompt 'test_prompt_with_embedded_resource'/,
  'prompts-get-with-image': /Unknown prompt 'test_prompt_with_image'/,
  'tools-call-image': /No image content found/,
  'tools-call-audio': /No audio content found/,
  'tools-call-embedded-resource': /No resource content found/,
  'tools-call-mixed-content': /Expected multiple content items/,
  'tools-call-with-progress': /No progress notifications received/,
  'tools-call-sampling': /did not request sampling/,
  'tools-call-elicitation': /did not request elicitation/,
  'elicitation-sep1034-defaults': /did not request elicitation/,
  'elicitation-sep1330-enums': /did not request elicitation/,
  'json-schema-2020-12': /Tool 'json_schema_2020_12_tool' not found/,
};
/** Server scenarios in 0.1.16 (`conformance list --server`); a new one must be looked at and classified here. */
const SCENARIO_COUNT = 32;

/** Scenarios that must pass through the socket listener. */
const SOCKET_SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'server-sse-multiple-streams',
  'server-sse-polling',
  'logging-set-level',
  'resources-list',
  'prompts-list',
] as const;

type SuiteRun = Awaited<ReturnType<typeof runConformance>>;

function checksOf(run: SuiteRun, name: string): ConformanceCheck[] {
  const checks = run.checks.get(name);
  assert.ok(checks && checks.length > 0, `no checks.json for ${name} (suite exit ${run.code}): ${run.stdout.slice(-800)} ${run.stderr.slice(-800)}`);
  return checks;
}

function assertPassed(name: string, checks: readonly ConformanceCheck[]): void {
  const v = verdict(checks);
  assert.ok(v.passed, `${name} did not pass:\n${v.problems.join('\n')}`);
}

describe('MCP conformance suite 0.1.16: server scenarios', () => {
  let t: Tuicd;
  let forwarder: UnixForwarder;
  let socketRun: Promise<SuiteRun> | undefined;
  let tcpRun: Promise<SuiteRun> | undefined;
  /** Each whole-suite run starts with the first test that needs it and is shared by the others. */
  const socketSuite = (): Promise<SuiteRun> => (socketRun ??= runConformance(`http://127.0.0.1:${forwarder.port}/mcp`, { suite: 'all' }));
  const tcpSuite = (): Promise<SuiteRun> => (tcpRun ??= runConformance(`http://127.0.0.1:${t.tcpPort}/mcp`, { suite: 'all' }));

  before(async () => {
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 }, auth: { lan_auth_bypass: true } } } });
    forwarder = await UnixForwarder.start(t.socketPath);
  });
  after(async () => {
    // A run still going when a test failed early must end before the server goes away.
    await Promise.allSettled([socketRun, tcpRun]);
    await forwarder?.stop();
    await t?.stop();
  });

  for (const name of SOCKET_SCENARIOS) {
    it(`${name} passes (socket listener)`, async () => {
      const checks = checksOf(await socketSuite(), name);
      assertPassed(name, checks);
      if (name === 'server-sse-polling') {
        // The suite only probes priming events and Last-Event-ID resumption on an SSE answer; tuicd
        // answers a POST in the body as JSON, which it records as not applicable.
        const contentType = checks.find((c) => c.id === 'server-sse-content-type');
        const sse = checks.find((c) => c.id === 'server-sse-priming-event');
        assert.ok(contentType || sse, `neither the JSON nor the SSE branch ran: ${checks.map((c) => c.id).join(', ')}`);
      } else {
        assert.ok(
          checks.some((c) => c.status === 'SUCCESS'),
          `${name}: no SUCCESS check`,
        );
      }
    });
  }

  it('dns-rebinding-protection passes (TCP listener): a foreign Host/Origin gets 4xx, a localhost one 2xx', async () => {
    const checks = checksOf(await tcpSuite(), 'dns-rebinding-protection');
    assertPassed('dns-rebinding-protection', checks);
    const status = (id: string) => checks.find((c) => c.id === id)?.status;
    assert.equal(status('localhost-host-rebinding-rejected'), 'SUCCESS');
    assert.equal(status('localhost-host-valid-accepted'), 'SUCCESS');
  });

  it('the whole suite (TCP listener): every scenario passes but those not applicable, each failing for its known reason', async (test) => {
    const run = await tcpSuite();
    const passed = [...run.checks.values()].filter((checks) => verdict(checks).passed).length;
    test.diagnostic(`conformance server suite on tuicd's own /mcp: ${passed} of ${run.checks.size} scenarios pass`);
    assert.equal(run.checks.size, SCENARIO_COUNT, `scenarios run: ${[...run.checks.keys()].join(', ')}`);
    const surprises: string[] = [];
    for (const [name, checks] of run.checks) {
      const v = verdict(checks);
      const reason = NOT_APPLICABLE[name];
      if (!reason && !v.passed) surprises.push(`${name} fails: ${v.problems.join(' | ')}`);
      if (reason && v.passed) surprises.push(`${name} passes now: drop it from NOT_APPLICABLE and the table above`);
      if (reason && !v.passed && !v.problems.some((p) => reason.test(p)))
        surprises.push(`${name} fails for another reason than ${reason}: ${v.problems.join(' | ')}`);
    }
    assert.deepEqual(surprises, []);
  });
});
