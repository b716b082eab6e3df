import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { EditUnverified, ParseRefusal, removeEntry, setEntry } from '../../../supervisor/installBridge/editor.js';
import type { ConfigEditor } from '../../../supervisor/installBridge/editor.js';
import { jsonEditor } from '../../../supervisor/installBridge/jsonEditor.js';
import { tomlEditor } from '../../../supervisor/installBridge/tomlEditor.js';
import { yamlEditor } from '../../../supervisor/installBridge/yamlEditor.js';
import { CODEX_TOML, GOOSE_YAML, OPENCODE_JSONC, VSCODE_JSONC, ZED_JSONC } from './fixture.js';

const ENTRY = { type: 'stdio', command: '/cfg dir/it\'s "here"/tuic-bridge', args: [], env: {} };

/** Install then uninstall: the entry is there with exactly this value, and then the original bytes are back. */
function roundTrip(ed: ConfigEditor, src: string, parent: string, value: unknown = ENTRY): string {
  const hadParent = ed.parse(src)[parent] !== undefined;
  const out = setEntry(ed, src, parent, 'tuicommander', value);
  assert.deepEqual((ed.parse(out)[parent] as Record<string, unknown>)['tuicommander'], value);
  assert.equal(removeEntry(ed, out, parent, 'tuicommander', !hadParent), src);
  return out;
}

describe('JSON/JSONC editor', () => {
  it('adds the entry after the last server, in the file indentation, keeping comments and trailing commas', () => {
    const out = roundTrip(jsonEditor, VSCODE_JSONC, 'servers');
    assert.ok(
      out.startsWith(
        '{\n  // my servers\n  "servers": {\n    "gh": { "type": "http", "url": "https://example.invalid/mcp" },\n    "tuicommander": {\n      "type": "stdio",',
      ),
      out,
    );
    assert.ok(out.includes('}, // GitHub\n  },\n  "inputs": [],\n}\n'), out);
  });

  it('adds a missing parent with the entry, and takes both out again', () => {
    const out = roundTrip(jsonEditor, ZED_JSONC, 'context_servers');
    assert.ok(out.includes('"vim_mode": false,\n  "context_servers": {\n    "tuicommander": {\n'), out);
    assert.ok(out.startsWith('// Zed settings\n//\n'), out);
  });

  it('keeps tabs, CRLF, one-line files and a missing final newline as they are', () => {
    const tabs = roundTrip(jsonEditor, '{\n\t"a": 1\n}\n', 'mcpServers');
    assert.ok(tabs.includes('\n\t"mcpServers": {\n\t\t"tuicommander": {\n\t\t\t"type"'), tabs);
    const crlf = roundTrip(jsonEditor, '{\r\n  "a": 1\r\n}\r\n', 'mcpServers');
    assert.ok(!/[^\r]\n/.test(crlf), 'only CRLF line ends');
    assert.equal(roundTrip(jsonEditor, '{"a":1}', 'mcpServers'), `{"a":1,"mcpServers":{"tuicommander":${JSON.stringify(ENTRY)}}}`);
    roundTrip(jsonEditor, '{\n  "a": 1\n}', 'mcpServers');
    roundTrip(jsonEditor, '{}', 'mcpServers');
    roundTrip(jsonEditor, '{\n  "mcpServers": {}\n}\n', 'mcpServers');
    roundTrip(jsonEditor, '{\n  "mcpServers": { // none yet\n  }\n}\n', 'mcpServers');
    roundTrip(jsonEditor, '{\n  "amp.mcpServers": {\n    "x": { "command": "y" } // mine\n  }\n}\n', 'amp.mcpServers');
  });

  it('replaces an entry that differs where it stands', () => {
    const src = '{\n  "mcpServers": {\n    "tuicommander": { "command": "/old" },\n    "z": {}\n  }\n}\n';
    const out = setEntry(jsonEditor, src, 'mcpServers', 'tuicommander', ENTRY);
    assert.ok(out.includes('"mcpServers": {\n    "tuicommander": {\n      "type": "stdio",'), out);
    assert.ok(out.endsWith('},\n    "z": {}\n  }\n}\n'), out);
  });

  it('removes an entry without the comments around it', () => {
    const src = '{\n  "mcpServers": {\n    "a": 1, // about a\n    "tuicommander": {"command": "x"}\n  }\n}\n';
    assert.equal(removeEntry(jsonEditor, src, 'mcpServers', 'tuicommander', false), '{\n  "mcpServers": {\n    "a": 1 // about a\n  }\n}\n');
    const first = '{\n  "mcpServers": {\n    "tuicommander": {"command": "x"},\n    "a": 1\n  }\n}\n';
    assert.equal(removeEntry(jsonEditor, first, 'mcpServers', 'tuicommander', false), '{\n  "mcpServers": {\n    "a": 1\n  }\n}\n');
  });

  it('refuses what does not parse or has the wrong shape', () => {
    assert.throws(
      () => jsonEditor.parse('{ "a": 1, '),
      (e: unknown) => e instanceof ParseRefusal && /at line 1/.test(e.message),
    );
    assert.throws(() => jsonEditor.parse('[1, 2]'), ParseRefusal);
    assert.deepEqual(jsonEditor.parse(''), {});
  });

  it('opencode JSONC: a command array entry', () => {
    const value = { type: 'local', command: ['/l/tuic-bridge'], enabled: true };
    const out = roundTrip(jsonEditor, OPENCODE_JSONC, 'mcp', value);
    assert.ok(out.includes('"enabled": true },\n    "tuicommander": {\n      "type": "local",\n      "command": [\n        "/l/tuic-bridge"\n      ],'), out);
  });
});

describe('TOML editor', () => {
  const CODEX = { command: '/cfg/mcp-bridge/tuic-bridge', env_vars: ['TUIC_SESSION'] };

  it('appends a [mcp_servers.tuicommander] table, leaving the other tables and comments alone', () => {
    const out = roundTrip(tomlEditor, CODEX_TOML, 'mcp_servers', CODEX);
    assert.equal(out, `${CODEX_TOML}\n[mcp_servers.tuicommander]\ncommand = "/cfg/mcp-bridge/tuic-bridge"\nenv_vars = ["TUIC_SESSION"]\n`);
  });

  it('round-trips empty files, files without a final newline, CRLF and a bare [mcp_servers]', () => {
    for (const src of [
      '',
      'model = "o3"',
      'model = "o3"\n',
      'model = "o3"\n\n',
      '[mcp_servers]\n',
      'a = 1\r\n[b]\r\nc = 2\r\n',
      'mcp_servers.fs.command = "x"\n',
    ]) {
      roundTrip(tomlEditor, src, 'mcp_servers', CODEX);
    }
    assert.equal(setEntry(tomlEditor, '', 'mcp_servers', 'tuicommander', CODEX), tomlEditor.create('mcp_servers', 'tuicommander', CODEX));
  });

  it('escapes the path as a TOML string', () => {
    const out = setEntry(tomlEditor, '', 'mcp_servers', 'tuicommander', { command: 'C:\\a "b"' });
    assert.equal(out, '[mcp_servers.tuicommander]\ncommand = "C:\\\\a \\"b\\""\n');
  });

  it('replaces a differing table where it stands and removes it without the comments of the next table', () => {
    const src = '[a]\nb = 1\n\n[mcp_servers.tuicommander] # old\ncommand = "/old"\nstartup_timeout_sec = 20\n\n# about z\n[z]\nq = 1\n';
    const out = setEntry(tomlEditor, src, 'mcp_servers', 'tuicommander', CODEX);
    assert.equal(
      out,
      `[a]\nb = 1\n\n[mcp_servers.tuicommander]\ncommand = "/cfg/mcp-bridge/tuic-bridge"\nenv_vars = ["TUIC_SESSION"]\n\n# about z\n[z]\nq = 1\n`,
    );
    assert.equal(removeEntry(tomlEditor, out, 'mcp_servers', 'tuicommander', false), '[a]\nb = 1\n\n# about z\n[z]\nq = 1\n');
  });

  it('falls back to toml-patch where a table cannot go (inline mcp_servers, a lookalike header in a string)', () => {
    roundTrip(tomlEditor, 'mcp_servers = {}\n', 'mcp_servers', CODEX);
    const tricky = 's = """\n[mcp_servers.tuicommander]\n"""\n';
    const out = roundTrip(tomlEditor, tricky, 'mcp_servers', CODEX);
    assert.equal(tomlEditor.parse(out)['s'], '[mcp_servers.tuicommander]\n');
  });

  it('refuses what does not parse, and a mcp_servers that is not a table is never written into', () => {
    assert.throws(
      () => tomlEditor.parse('model = \n[x'),
      (e: unknown) => e instanceof ParseRefusal && /line 2/.test(e.message),
    );
    assert.throws(() => setEntry(tomlEditor, 'mcp_servers = 3\n', 'mcp_servers', 'tuicommander', CODEX), EditUnverified);
  });
});

describe('YAML editor', () => {
  const GOOSE = { type: 'stdio', name: 'tuicommander', cmd: '/l/tuic-bridge', args: [], envs: {}, timeout: 300, enabled: true };

  it('adds the extension after the last one, keeping comments, quotes and spacing', () => {
    const out = roundTrip(yamlEditor, GOOSE_YAML, 'extensions', GOOSE);
    assert.ok(
      out.includes(
        `    timeout: 300\n  tuicommander:\n    type: stdio\n    name: tuicommander\n    cmd: /l/tuic-bridge\n    args: []\n    envs: {}\n    timeout: 300\n    enabled: true\nGOOSE_SEARCH_PATHS:\n- /usr/local/bin\n# end\n`,
      ),
      out,
    );
    assert.ok(out.startsWith('# goose configuration\nactive_provider: anthropic   # set by goose configure\n'), out);
  });

  it('follows the file indentation and round-trips files without extensions or a final newline', () => {
    const out = roundTrip(yamlEditor, 'extensions:\n    x:\n        type: builtin\nb: 2\n', 'extensions', GOOSE);
    assert.ok(out.includes('\n    tuicommander:\n        type: stdio\n'), out);
    for (const src of ['', '# only a comment\n', 'a: 1', 'a: 1\n', 'extensions:\n  x:\n    type: builtin']) roundTrip(yamlEditor, src, 'extensions', GOOSE);
  });

  it('keeps a parent it did not add as an empty mapping, and uses the Document API for flow style', () => {
    const src = 'extensions:   # mine\n  tuicommander:\n    cmd: x\nz: 1\n';
    assert.equal(removeEntry(yamlEditor, src, 'extensions', 'tuicommander', false), 'extensions: {}   # mine\nz: 1\n');
    roundTrip(yamlEditor, 'extensions: {}\n', 'extensions', GOOSE);
  });

  it('refuses what does not parse', () => {
    assert.throws(() => yamlEditor.parse('a: [1\nb: :'), ParseRefusal);
    assert.throws(() => yamlEditor.parse('- 1\n- 2\n'), ParseRefusal);
  });
});
