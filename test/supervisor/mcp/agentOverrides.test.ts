/**
 * agents.json per-agent overrides reach the MCP surface of a real tuicd: an agent with
 * `progress_tracking: false` is refused by the `progress` tool and its initialize instructions drop
 * the Progress section; `intent_tab_title` / `suggest_followups` false drop those marker lines for
 * that agent only. The caller's agent comes from its clientInfo.name, through the SDK's own Client.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { Tuicd } from '../../helpers/tuicdProcess.js';

describe('agents.json overrides on the MCP surface', { timeout: 60_000 }, () => {
  let dir: string;
  let t: Tuicd;
  const clients: Client[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-agent-overrides-'));
    writeFileSync(
      join(dir, 'agents.json'),
      JSON.stringify({
        agents: { codex: { progress_tracking: false, intent_tab_title: false, suggest_followups: false }, claude: { suggest_followups: null } },
      }),
    );
    t = await Tuicd.start({ configDir: dir, config: { services: { server: { enabled: true, port: 0 }, auth: { lan_auth_bypass: true } } } });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function connect(name: string): Promise<Client> {
    const client = new Client({ name, version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${t.tcpPort}/mcp`)));
    clients.push(client);
    return client;
  }

  it('an agent with progress_tracking off is refused by progress; another agent is not', async () => {
    const codex = await connect('codex-mcp-client');
    const refused = await codex.callTool({ name: 'progress', arguments: { type: 'done', text: 'finished the parser' } });
    assert.equal(refused.isError, true);
    const body = JSON.parse((refused.content as Array<{ text: string }>)[0]!.text);
    assert.match(body.error, /^progress_tracking_disabled: Progress collection is off for this agent/);
    assert.equal(body.code, 'forbidden');

    const claude = await connect('claude-code');
    const ok = await claude.callTool({ name: 'progress', arguments: { type: 'done', text: 'finished the parser' } });
    assert.equal(ok.isError, false, JSON.stringify(ok));
    assert.equal(JSON.parse((ok.content as Array<{ text: string }>)[0]!.text).ok, true);
  });

  it("initialize's instructions follow the caller's agent: markers and the Progress section", async () => {
    const codex = (await connect('codex-mcp-client')).getInstructions() ?? '';
    const claude = (await connect('claude-code')).getInstructions() ?? '';
    const unknown = (await connect('some-script')).getInstructions() ?? '';
    for (const text of [claude, unknown]) {
      assert.match(text, /## Progress — mandatory/);
      assert.match(text, /`intent: /);
      assert.match(text, /`suggest: \[/);
    }
    assert.doesNotMatch(codex, /## Progress/);
    assert.doesNotMatch(codex, /`intent: /);
    assert.doesNotMatch(codex, /`suggest: /);
    assert.match(codex, /TUICommander v\S+ is connected/, 'the connect marker stays');
  });
});
