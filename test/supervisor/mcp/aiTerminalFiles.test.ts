/**
 * The ai_terminal_* file tools and run_command against a real tuicd, confined to the session's
 * sandbox (its repository): reads paged and redacted, binary and oversized files refused, globs and
 * regex searches that honour .gitignore; and every path outside refused before anyone is asked —
 * `..`, an absolute path elsewhere, a symlink out (read, list, search, write, edit, cwd), git's own
 * files — while a search never reads through a tracked symlink to a file outside.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { mcpSocketClient, type McpSocketClient } from '../../helpers/mcpSocket.js';
import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const FAKE_OPENAI_KEY = ['sk', 'proj', 'Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3'].join('-');

describe('ai_terminal file tools in the session sandbox', () => {
  let sb: GitSandbox;
  let repo: string;
  let outside: string;
  let plain: string;
  let t: Tuicd;
  let sse: SseClient;
  let mcp: McpSocketClient;
  let sessionId: string;
  let plainSession: string;

  const create = async (cwd: string): Promise<string> => {
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd, shell: '/bin/sh' }));
    assert.equal(r.status, 201, r.text);
    return r.json().session_id as string;
  };

  before(async () => {
    sb = gitSandbox();
    const lines = Array.from({ length: 450 }, (_, i) => `line ${i + 1}`).join('\n');
    repo = sb.initRepo('files-proj', {
      '.gitignore': 'ignored/\n*.log\n',
      'README.md': '# files\nneedle in the readme\n',
      'src/main.ts': 'const a = 1;\nconst b = 2;\n// needle here\nconst c = 3;\nconst d = 4;\n',
      'src/util.ts': 'export const needle = true;\n',
      'docs/guide.md': 'needle in the docs\n',
      'long.txt': `${lines}\n`,
      'env.sample': `OPENAI_API_KEY=${FAKE_OPENAI_KEY}\n`,
    });
    mkdirSync(join(repo, 'ignored'));
    writeFileSync(join(repo, 'ignored', 'hidden.ts'), 'needle ignored\n');
    writeFileSync(join(repo, 'debug.log'), 'needle in a log\n');
    writeFileSync(join(repo, 'blob.bin'), Buffer.from([0x6e, 0x65, 0, 1, 2, 3]));
    writeFileSync(join(repo, 'huge.txt'), '');
    truncateSync(join(repo, 'huge.txt'), 11 * 1024 * 1024);

    outside = mkdtempSync(join(tmpdir(), 'tuicd-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'TOPSECRET needle\n');
    symlinkSync(outside, join(repo, 'link-out'));
    symlinkSync(join(outside, 'secret.txt'), join(repo, 'leak.txt'));
    sb.git(repo, 'add', 'leak.txt', 'link-out');
    sb.git(repo, 'commit', '-qm', 'links');

    plain = mkdtempSync(join(tmpdir(), 'tuicd-plain-'));
    mkdirSync(join(plain, 'sub'));
    writeFileSync(join(plain, 'sub', 'notes.md'), 'plain needle\n');

    t = await Tuicd.start({ config: { ai_terminal_mcp_enabled: true }, env: { ...sb.env, SHELL: '/bin/sh' } });
    sse = await SseClient.open({ socketPath: t.socketPath, path: '/events' });
    mcp = await mcpSocketClient(t);
    // A session started in a subdirectory: its sandbox is the whole repository.
    sessionId = await create(join(repo, 'src'));
    plainSession = await create(plain);
  });
  after(async () => {
    sse?.close();
    await t?.stop();
    sb?.cleanup();
    if (outside) rmSync(outside, { recursive: true, force: true });
    if (plain) rmSync(plain, { recursive: true, force: true });
  });

  it('read_file pages by lines from the repository root, redacts secrets, refuses binary and oversized files', async () => {
    const first = await mcp.callTool('ai_terminal_read_file', { session_id: sessionId, file_path: 'long.txt' });
    assert.equal(first.isError, false, JSON.stringify(first.value));
    assert.deepEqual(
      { lines: first.value.lines, total: first.value.total_lines, next: first.value.next_offset, path: first.value.file_path },
      { lines: 200, total: 450, next: 200, path: 'long.txt' },
    );
    assert.ok(first.value.content.startsWith('line 1\nline 2\n'));
    const last = await mcp.callTool('ai_terminal_read_file', { session_id: sessionId, file_path: join(repo, 'long.txt'), offset: 440, limit: 50 });
    assert.equal(last.value.content, Array.from({ length: 10 }, (_, i) => `line ${441 + i}`).join('\n'));
    assert.equal(last.value.next_offset, undefined);
    const env = await mcp.callTool('ai_terminal_read_file', { session_id: sessionId, file_path: 'env.sample' });
    assert.match(env.value.content, /^OPENAI_API_KEY=\[REDACTED:\w+\]$/);
    const binary = await mcp.callTool('ai_terminal_read_file', { session_id: sessionId, file_path: 'blob.bin' });
    assert.match(binary.value.error, /'file_path' is a binary file/);
    const huge = await mcp.callTool('ai_terminal_read_file', { session_id: sessionId, file_path: 'huge.txt' });
    assert.equal(huge.value.code, 'payload_too_large');
    const missing = await mcp.callTool('ai_terminal_read_file', { session_id: sessionId, file_path: 'nope.txt' });
    assert.equal(missing.value.code, 'not_found');
    const over = await mcp.callTool('ai_terminal_read_file', { session_id: sessionId, file_path: 'long.txt', limit: 2001 });
    assert.match(over.value.error, /'limit' must be an integer between 1 and 2000/);
  });

  it('list_files matches globs over what git shows (.gitignore honoured); a plain directory is walked', async () => {
    const ts = await mcp.callTool('ai_terminal_list_files', { session_id: sessionId, pattern: '*.ts' });
    assert.deepEqual(ts.value, { files: ['src/main.ts', 'src/util.ts'], total: 2, truncated: false });
    const md = await mcp.callTool('ai_terminal_list_files', { session_id: sessionId, pattern: '**/*.{md,txt}', path: 'docs' });
    assert.deepEqual(md.value.files, ['docs/guide.md']);
    const logs = await mcp.callTool('ai_terminal_list_files', { session_id: sessionId, pattern: '*.log' });
    assert.deepEqual(logs.value.files, []);
    const walked = await mcp.callTool('ai_terminal_list_files', { session_id: plainSession, pattern: '*.md' });
    assert.deepEqual(walked.value.files, ['sub/notes.md']);
  });

  it('search_files finds regex matches with context, within path and glob, never in ignored files or through a symlink out', async () => {
    const all = await mcp.callTool('ai_terminal_search_files', { session_id: sessionId, pattern: 'needle', context_lines: 1 });
    assert.equal(all.isError, false, JSON.stringify(all.value));
    const where = all.value.matches.map((m: { path: string; line: number }) => `${m.path}:${m.line}`).sort();
    assert.deepEqual(where, ['README.md:2', 'docs/guide.md:1', 'src/main.ts:3', 'src/util.ts:1']);
    const main = all.value.matches.find((m: { path: string }) => m.path === 'src/main.ts');
    assert.deepEqual(
      { before: main.before, text: main.text, after: main.after },
      { before: ['const b = 2;'], text: '// needle here', after: ['const c = 3;'] },
    );
    assert.ok(!JSON.stringify(all.value).includes('TOPSECRET'), 'the tracked symlink to a file outside is not read');

    const scoped = await mcp.callTool('ai_terminal_search_files', { session_id: sessionId, pattern: 'need+le', path: 'src', glob: 'u*.ts', context_lines: 0 });
    assert.deepEqual(scoped.value.matches, [{ path: 'src/util.ts', line: 1, text: 'export const needle = true;', before: [], after: [] }]);
    const plainHit = await mcp.callTool('ai_terminal_search_files', { session_id: plainSession, pattern: 'needle' });
    assert.deepEqual(
      plainHit.value.matches.map((m: { path: string }) => m.path),
      ['sub/notes.md'],
    );
    const bad = await mcp.callTool('ai_terminal_search_files', { session_id: sessionId, pattern: '(' });
    assert.match(bad.value.error, /'pattern' is not a valid regular expression/);
  });

  it('every path outside the sandbox is refused, by every file tool, before anyone is asked', async () => {
    const confirmsBefore = sse.events.filter((e) => e.event === 'mcp-confirm').length;
    const escapes: Array<[string, RegExp]> = [
      ['../../etc/passwd', /contains '\.\.' \(path traversal\)/],
      ['src/../README.md', /contains '\.\.' \(path traversal\)/],
      ['/etc/passwd', /outside the session's sandbox/],
      [join(outside, 'secret.txt'), /outside the session's sandbox/],
      ['link-out/secret.txt', /outside the session's sandbox/],
      ['leak.txt', /outside the session's sandbox/],
    ];
    for (const [path, message] of escapes) {
      const calls: Array<[string, Record<string, unknown>]> = [
        ['ai_terminal_read_file', { file_path: path }],
        ['ai_terminal_write_file', { file_path: path, content: 'x' }],
        ['ai_terminal_edit_file', { file_path: path, old_string: 'needle', new_string: 'pin' }],
        ['ai_terminal_list_files', { pattern: '*', path }],
        ['ai_terminal_search_files', { pattern: 'needle', path }],
        ['ai_terminal_run_command', { command: 'cat secret.txt', cwd: path }],
      ];
      for (const [tool, args] of calls) {
        const r = await mcp.callTool(tool, { session_id: sessionId, ...args });
        const what = `${tool} ${path}: ${JSON.stringify(r.value)}`;
        assert.equal(r.isError, true, what);
        assert.equal(r.value.code, 'forbidden', what);
        assert.match(r.value.error, message, what);
        assert.ok(!JSON.stringify(r.value).includes('TOPSECRET'), what);
      }
    }
    const gitConfig = await mcp.callTool('ai_terminal_write_file', { session_id: sessionId, file_path: '.git/config', content: '[core]\n' });
    assert.equal(gitConfig.value.code, 'forbidden');
    assert.match(gitConfig.value.error, /inside a repository's \.git directory/);
    assert.equal(sse.events.filter((e) => e.event === 'mcp-confirm').length, confirmsBefore, 'no confirm was asked for a path outside');
  });
});
