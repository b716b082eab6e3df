/**
 * A temporary HOME and XDG config dir seeded with one config per agent (never the machine's): JSONC with
 * comments and trailing commas, a Codex TOML with other servers and comments, a goose YAML with comments,
 * an unparseable Gemini file, agents known only by their directory or by a CLI on PATH, and agents absent.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

import { resolvePaths } from '../../../shared/paths.js';
import type { Paths } from '../../../shared/paths.js';

export const CLAUDE_JSON = `{
  "numStartups": 12,
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {}
    }
  },
  "projects": {}
}
`;

export const CURSOR_JSON = `{
  "mcpServers": {}
}
`;

/** Tabs, no mcpServers yet. */
export const DROID_JSON = '{\n\t"autoUpdate": true\n}\n';

export const VSCODE_JSONC = `{
  // my servers
  "servers": {
    "gh": { "type": "http", "url": "https://example.invalid/mcp" }, // GitHub
  },
  "inputs": [],
}
`;

export const ZED_JSONC = `// Zed settings
//
// For information on how to configure Zed, see the Zed documentation.
{
  "theme": "One Dark", /* block comment */
  "ui_font_size": 16,
  "vim_mode": false,
}
`;

export const OPENCODE_JSONC = `{
  "$schema": "https://opencode.ai/config.json",
  // models
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "fs": { "type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem"], "enabled": true },
  },
}
`;

export const CODEX_TOML = `# Codex configuration
model = "gpt-5-codex"   # the default model
approval_policy = "on-request"

[mcp_servers.github]
# GitHub's server, token from the env
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env_vars = ["GITHUB_TOKEN"]

# the filesystem server
[mcp_servers.fs]
command = "npx"
args = [
  "-y",
  "@modelcontextprotocol/server-filesystem",
  "/tmp",
]
startup_timeout_sec = 20

[profiles.fast]
model = "gpt-5-mini"
# end of file
`;

export const GOOSE_YAML = `# goose configuration
active_provider: anthropic   # set by goose configure
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  # my filesystem server
  filesystem:
    type: stdio
    name: filesystem
    enabled: false
    cmd: npx
    args: ["-y", '@modelcontextprotocol/server-filesystem', "/tmp"]
    envs: {}
    timeout: 300
GOOSE_SEARCH_PATHS:
- /usr/local/bin
# end
`;

export const GEMINI_BROKEN = '{ "theme": "Default", "mcpServers": { \n';

export interface Fixture {
  root: string;
  home: string;
  xdg: string;
  bin: string;
  paths: Paths;
  env: Record<string, string>;
  launcher: string;
  /** Seeded files, by agent id: path and original bytes. */
  seeded: Record<string, { file: string; bytes: Buffer }>;
  /** Files the install creates, by agent id. */
  created: Record<string, string>;
  /** Files that must never appear, by agent id. */
  absent: Record<string, string>;
  cleanup(): void;
}

function put(file: string, text: string, mode = 0o644): Buffer {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  chmodSync(file, mode);
  return readFileSync(file);
}

export function makeFixture(opts: { instance?: string } = {}): Fixture {
  const root = mkdtempSync(join(tmpdir(), 'tuicd-ib-'));
  const home = join(root, 'home');
  const xdg = join(root, 'xdg');
  const bin = join(root, 'bin');
  for (const d of [home, xdg, bin]) mkdirSync(d, { recursive: true });
  const seed = (id: string, file: string, text: string, mode?: number): [string, { file: string; bytes: Buffer }] => [
    id,
    { file, bytes: put(file, text, mode) },
  ];
  const seeded = Object.fromEntries([
    seed('claude', join(home, '.claude.json'), CLAUDE_JSON, 0o600),
    seed('cursor', join(home, '.cursor', 'mcp.json'), CURSOR_JSON),
    seed('gemini', join(home, '.gemini', 'settings.json'), GEMINI_BROKEN),
    seed('droid', join(home, '.factory', 'mcp.json'), DROID_JSON),
    seed('vscode', join(xdg, 'Code', 'User', 'mcp.json'), VSCODE_JSONC),
    seed('zed', join(xdg, 'zed', 'settings.json'), ZED_JSONC),
    seed('opencode', join(xdg, 'opencode', 'opencode.jsonc'), OPENCODE_JSONC),
    seed('codex', join(home, '.codex', 'config.toml'), CODEX_TOML, 0o640),
    seed('goose', join(xdg, 'goose', 'config.yaml'), GOOSE_YAML),
  ]);
  // Amp: only its directory. Grok: only its CLI on PATH. pi: a directory but no file (pi needs the file).
  mkdirSync(join(xdg, 'amp'), { recursive: true });
  put(join(bin, 'grok'), '#!/bin/sh\nexit 0\n', 0o755);
  mkdirSync(join(home, '.pi', 'agent'), { recursive: true });
  const configDir = join(root, 'cfg');
  const env = { HOME: home, XDG_CONFIG_HOME: xdg, PATH: bin };
  const paths = resolvePaths({ configDir, instance: opts.instance }, env);
  return {
    root,
    home,
    xdg,
    bin,
    paths,
    env,
    launcher: join(paths.configDir, 'mcp-bridge', 'tuic-bridge'),
    seeded,
    created: { amp: join(xdg, 'amp', 'settings.json'), grok: join(home, '.grok', 'config.toml') },
    absent: {
      windsurf: join(home, '.codeium', 'windsurf', 'mcp_config.json'),
      pi: join(home, '.pi', 'agent', 'mcp.json'),
      opencodeJson: join(xdg, 'opencode', 'opencode.json'),
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Every file under `dir` with its bytes, mode and mtime: equal snapshots mean nothing was written. */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      const st = statSync(full);
      if (st.isDirectory()) {
        out.set(`${relative(dir, full)}/`, `dir ${(st.mode & 0o777).toString(8)}`);
        walk(full);
      } else out.set(relative(dir, full), `${(st.mode & 0o777).toString(8)} ${st.mtimeMs} ${readFileSync(full).toString('base64')}`);
    }
  };
  walk(dir);
  return out;
}

export function backupsOf(file: string): string[] {
  const prefix = `${file.split('/').pop()!}.tuicd-backup-`;
  return readdirSync(dirname(file))
    .filter((n) => n.startsWith(prefix))
    .map((n) => join(dirname(file), n));
}
