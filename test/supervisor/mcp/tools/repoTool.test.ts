/**
 * The `repo` tool over MCP with the SDK's own Client (over TCP, Basic Auth): list, status,
 * worktree_create with spawn_session (a live shell in the new worktree, and cc_agent_hint only for a
 * Claude Code client), worktree_list, worktree_remove, and the clear errors for bad input and no gh.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { gitSandbox, type GitSandbox } from '../../../helpers/gitRepo.js';
import { Tuicd } from '../../../helpers/tuicdProcess.js';

const USER = 'repo-tool';
const PASSWORD = 'repo tool password';
const AUTHORIZATION = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');

function payload(r: CallToolResult): Record<string, any> {
  const item = r.content[0] as { type: string; text: string };
  assert.equal(item.type, 'text');
  return JSON.parse(item.text);
}

describe('MCP repo tool through the SDK client', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  const clients: Client[] = [];

  async function connect(name: string): Promise<Client> {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${t.tcpPort}/mcp`), { requestInit: { headers: { Authorization: AUTHORIZATION } } }),
    );
    clients.push(client);
    return client;
  }
  const call = async (client: Client, args: Record<string, unknown>) => (await client.callTool({ name: 'repo', arguments: args })) as CallToolResult;

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('tool-repo', { 'a.txt': 'a\n' });
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    const ghConfig = mkdtempSync(join(tmpdir(), 'tuicd-gh-'));
    t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } } },
      env: { ...sb.env, GH_CONFIG_DIR: ghConfig, GH_TOKEN: '', GITHUB_TOKEN: '' },
    });
    await t.registerRepos(repo);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await t?.stop();
    sb?.cleanup();
  });

  it('is listed, and list/status describe the registered repository', async () => {
    const client = await connect('plain-client');
    const { tools } = await client.listTools();
    assert.ok(
      tools.some((tool) => tool.name === 'repo'),
      'repo is in tools/list',
    );
    assert.match(client.getInstructions() ?? '', new RegExp(`- ${repo}`));
    const list = payload(await call(client, { action: 'list' }));
    assert.deepEqual(list.repos, [{ path: repo, name: 'tool-repo', registered: true }]);
    sb.write(repo, { 'b.txt': 'b\n' });
    const status = await call(client, { action: 'status', path: repo });
    assert.notEqual(status.isError, true, JSON.stringify(status.content));
    assert.equal(payload(status).branch, 'main');
    assert.equal(payload(status).status, 'dirty');
    assert.deepEqual(payload(status).changed_files, [{ path: 'b.txt', status: 'untracked', additions: 1, deletions: 0 }]);
  });

  it('worktree_create with spawn_session starts a shell there; cc_agent_hint only for Claude Code', async () => {
    const cc = await connect('claude-code');
    const created = await call(cc, { action: 'worktree_create', path: repo, branch: 'mcp-agent', spawn_session: true });
    assert.notEqual(created.isError, true, JSON.stringify(created.content));
    const body = payload(created);
    assert.equal(body.worktree_path, `${repo}__wt/mcp-agent`);
    assert.equal(body.branch, 'mcp-agent');
    assert.ok(existsSync(join(body.worktree_path, 'a.txt')));
    assert.equal(body.cc_agent_hint.worktree_path, body.worktree_path);
    assert.match(body.cc_agent_hint.suggested_prompt, /absolute paths/);
    const sessions = (await t.socket('GET', '/sessions')).json() as Array<{ session_id: string; cwd: string }>;
    assert.equal(sessions.find((s) => s.session_id === body.session_id)?.cwd, body.worktree_path);
    await t.socket('DELETE', `/sessions/${body.session_id}`);

    const plain = await connect('plain-client-2');
    const other = payload(await call(plain, { action: 'worktree_create', path: repo, branch: 'plain-agent' }));
    assert.equal(other.cc_agent_hint, undefined);
    assert.equal(other.session_id, undefined);
    const listed = payload(await call(plain, { action: 'worktree_list', path: repo }));
    assert.deepEqual(listed.worktrees.map((w: { workspace_id: string }) => w.workspace_id).sort(), ['mcp-agent', 'plain-agent']);
  });

  it('worktree_remove removes a clean worktree and its branch; errors are plain', async () => {
    const client = await connect('remover');
    const removed = await call(client, { action: 'worktree_remove', path: repo, workspace_id: 'mcp-agent' });
    assert.notEqual(removed.isError, true, JSON.stringify(removed.content));
    assert.deepEqual(payload(removed), { ok: true, removal_rule: 'in_sync' });
    assert.equal(existsSync(`${repo}__wt/mcp-agent`), false);
    assert.equal(sb.git(repo, 'branch', '--list', 'mcp-agent').trim(), '');

    sb.write(`${repo}__wt/plain-agent`, { 'dirty.txt': 'd\n' });
    const dirty = await call(client, { action: 'worktree_remove', path: repo, workspace_id: 'plain-agent' });
    assert.equal(dirty.isError, true);
    assert.match(payload(dirty).error, /uncommitted work.*force=true/);

    const unknown = await call(client, { action: 'worktree_remove', path: repo, workspace_id: 'nope' });
    assert.equal(unknown.isError, true);
    assert.match(payload(unknown).error, /no worktree 'nope'|no worktree "nope"|no worktree nope/);
    const noPath = await call(client, { action: 'worktree_create' });
    assert.match(payload(noPath).error, /requires 'path'/);
    const prs = await call(client, { action: 'prs', path: repo });
    assert.equal(prs.isError, true);
    assert.match(payload(prs).error, /GitHub CLI \(gh\)|gh auth login/);
    const badInput = await call(client, { action: 'progress_list', path: repo, input: { bogus: 1 } });
    assert.match(payload(badInput).error, /^progress_invalid_request: unknown input field/);
  });

  it('a path outside every root is forbidden for every action that takes one, naming nothing outside', async () => {
    const client = await connect('gate-client');
    const stranger = sb.initRepo('stranger-repo', { 's.txt': 's\n' });
    for (const args of [
      { action: 'status', path: stranger },
      { action: 'status', path: '/etc' },
      { action: 'worktree_list', path: stranger },
      { action: 'worktree_create', path: stranger, branch: 'nope' },
      { action: 'progress_list', path: '/' },
    ]) {
      const r = await call(client, args);
      assert.equal(r.isError, true, JSON.stringify(args));
      const body = payload(r);
      assert.equal(body.code, 'forbidden', JSON.stringify(body));
      assert.doesNotMatch(body.error, /stranger|etc/);
    }
    assert.equal(existsSync(`${stranger}__wt/nope`), false);
  });
});
