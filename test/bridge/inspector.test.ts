/**
 * MCP Inspector 2.12's CLI (Node 22, its own HOME) launching tuic-bridge over stdio, as an agent
 * would, against a real tuicd: tools/list and tools/call session action=list, read from its JSON.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../helpers/tuicdProcess.js';
import { runInspectorStdio } from '../supervisor/mcp/conformance/thirdPartyCli.js';
import { BRIDGE_JS } from './bridgeHarness.js';

describe('MCP Inspector CLI through tuic-bridge (stdio)', { timeout: 120_000 }, () => {
  let t: Tuicd;
  let sessionId: string;
  before(async () => {
    t = await Tuicd.start();
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh' }));
    sessionId = created.json().session_id;
  });
  after(() => t?.stop());

  const inspect = (args: string[]) => runInspectorStdio(process.execPath, [BRIDGE_JS], { TUIC_SOCKET: t.socketPath }, args);

  it('tools/list prints the native tools', async () => {
    const r = await inspect(['--method', 'tools/list']);
    assert.equal(r.code, 0, r.stderr);
    const names = (JSON.parse(r.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    assert.ok(names.includes('session'), names.join(', '));
  });

  it('tools/call session action=list lists the live session', async () => {
    const r = await inspect(['--method', 'tools/call', '--tool-name', 'session', '--tool-arg', 'action=list']);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { content: Array<{ text: string }>; isError: boolean };
    assert.equal(result.isError, false);
    assert.ok((JSON.parse(result.content[0]!.text) as Array<{ session_id: string }>).some((row) => row.session_id === sessionId));
  });
});
