/**
 * ui confirm through the real server stack: one client calls `ui action=confirm` with POST /mcp on
 * the socket, another reads `mcp-confirm` from GET /events and answers with POST
 * /mcp/confirm-response. Pins confirm_left_unanswered_resolves_clean_through_the_real_server_stack:
 * an unanswered confirm returns the handler's own body (not a 408) and publishes the resolved event.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';

import { SseClient } from '../../../helpers/sseClient.js';
import { Tuicd } from '../../../helpers/tuicdProcess.js';

/** TUIC_CONFIRM_TIMEOUT_MS for this server: short enough to watch an unanswered confirm resolve, long enough for a loaded box to answer one. */
const CONFIRM_WINDOW_MS = 3000;
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('ui confirm end to end', () => {
  let t: Tuicd;
  let sse: SseClient;
  let work: string;
  let rpcId = 0;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'tuicd-confirm-'));
    t = await Tuicd.start({ env: { SHELL: '/bin/sh', TUIC_CONFIRM_TIMEOUT_MS: String(CONFIRM_WINDOW_MS) } });
    sse = await SseClient.open({ socketPath: t.socketPath, path: '/events' });
  });
  after(async () => {
    sse.close();
    await t.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** initialize as an agent running in a PTY of ours (x-tuic-session), so events carry its origin. */
  async function initialize(tuicSession: string): Promise<string> {
    const r = await t.socket(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++rpcId,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'confirm-test', version: '1' } },
      }),
      { ...MCP_HEADERS, 'x-tuic-session': tuicSession },
    );
    assert.equal(r.status, 200, r.text);
    const sessionId = r.headers['mcp-session-id'];
    assert.equal(typeof sessionId, 'string');
    return sessionId as string;
  }

  function callTool(mcpSession: string, name: string, args: object) {
    return t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } }), {
      ...MCP_HEADERS,
      'Mcp-Session-Id': mcpSession,
    });
  }

  const toolValue = (answer: { status: number; text: string; json(): any }) => {
    assert.equal(answer.status, 200, answer.text);
    const body = answer.json();
    return { isError: body.result.isError as boolean, value: JSON.parse(body.result.content[0].text) };
  };

  const answer = (requestId: string, confirmed: unknown) =>
    t.socket('POST', '/mcp/confirm-response', JSON.stringify({ request_id: requestId, confirmed }), { 'Content-Type': 'application/json' });

  async function boundAgent(): Promise<{ mcp: string; tuic: string; sessionId: string }> {
    const tuic = randomUUID();
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', tuic_session: tuic }));
    assert.equal(r.status, 201, r.text);
    return { mcp: await initialize(tuic), tuic, sessionId: r.json().session_id };
  }

  it('the first answer from another client wins; a second answer is refused; the loop stays responsive', async () => {
    const agent = await boundAgent();
    const pending = callTool(agent.mcp, 'ui', { action: 'confirm', title: 'Deploy?', message: 'to staging' });
    const asked = await sse.waitFor((e) => e.event === 'mcp-confirm' && JSON.parse(e.data).title === 'Deploy?');
    const request = JSON.parse(asked.data);
    assert.deepEqual({ ...request, request_id: 'id' }, { request_id: 'id', title: 'Deploy?', message: 'to staging', origin_session_id: agent.tuic });

    // Blocking work never stalls the loop: /health answers while the confirm waits.
    const health = await t.socket('GET', '/health');
    assert.equal(health.status, 200);

    const bad = await answer(request.request_id, 'yes');
    assert.equal(bad.status, 400);
    assert.match(bad.json().error, /confirmed must be a boolean/);

    const first = await answer(request.request_id, true);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(toolValue(await pending), { isError: false, value: { confirmed: true } });

    // Ignored, not refused: a second viewer answering the same prompt is a normal race.
    const second = await answer(request.request_id, false);
    assert.equal(second.status, 200);
    assert.equal(second.json().ignored, 'already_answered');
    assert.match(second.json().message, /already resolved; only the first answer counts/);
    const unknown = await answer(randomUUID(), true);
    assert.equal(unknown.status, 200);
    assert.equal(unknown.json().ignored, 'unknown');

    const resolved = await sse.waitFor((e) => e.event === 'mcp-confirm-resolved' && JSON.parse(e.data).request_id === request.request_id);
    assert.deepEqual(JSON.parse(resolved.data), { request_id: request.request_id, confirmed: true });
  });

  it('confirm_left_unanswered_resolves_clean_through_the_real_server_stack', async () => {
    const agent = await boundAgent();
    const pending = callTool(agent.mcp, 'ui', { action: 'confirm', title: 'Nobody home?' });
    pending.catch(() => undefined); // observed below; a server stopped mid-wait must not be an unhandled rejection
    const asked = await sse.waitFor((e) => e.event === 'mcp-confirm' && JSON.parse(e.data).title === 'Nobody home?');
    const requestId = JSON.parse(asked.data).request_id;
    // Without the knob the server would hold the call for the full 300 s: fail fast and say why.
    let timer: NodeJS.Timeout | undefined;
    const notWired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `no answer ${CONFIRM_WINDOW_MS + 10_000} ms after a ${CONFIRM_WINDOW_MS} ms window: is TUIC_CONFIRM_TIMEOUT_MS wired into the ConfirmBroker?`,
            ),
          ),
        CONFIRM_WINDOW_MS + 10_000,
      );
    });
    const reply = await Promise.race([pending, notWired]).finally(() => clearTimeout(timer));
    // The handler's own body, not the HTTP layer's 408.
    assert.deepEqual(toolValue(reply), { isError: false, value: { confirmed: false, reason: `no answer within ${CONFIRM_WINDOW_MS / 1000}s` } });
    const resolved = await sse.waitFor((e) => e.event === 'mcp-confirm-resolved' && JSON.parse(e.data).request_id === requestId);
    assert.deepEqual(JSON.parse(resolved.data), { request_id: requestId, confirmed: false, reason: `no answer within ${CONFIRM_WINDOW_MS / 1000}s` });
    // The entry is gone: a late answer is ignored, not applied.
    assert.equal((await answer(requestId, true)).json().ignored, 'already_answered');
  });

  it('a toast from a bound agent carries its session and PTY cwd; progress lands in the journal', async () => {
    const agent = await boundAgent();
    const toast = toolValue(await callTool(agent.mcp, 'ui', { action: 'toast', title: 'Built', level: 'warn', sound: true }));
    assert.deepEqual(toast, { isError: false, value: { ok: true } });
    const ev = await sse.waitFor((e) => e.event === 'mcp-toast' && JSON.parse(e.data).title === 'Built');
    assert.deepEqual(JSON.parse(ev.data), { title: 'Built', level: 'warn', sound: 'warning', origin_session_id: agent.tuic, origin_repo_path: work });

    const reported = toolValue(await callTool(agent.mcp, 'progress', { type: 'done', text: 'e2e step finished' }));
    assert.equal(reported.isError, false);
    const list = await t.socket('GET', `/progress/list?project=${encodeURIComponent(work)}`);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.json().entries.map((e: any) => [e.kind, e.text, e.agent, e.session_id]),
      [['done', 'e2e step finished', agent.tuic, agent.sessionId]],
    );
  });
});
