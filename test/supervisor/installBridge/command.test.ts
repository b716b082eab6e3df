import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';

import { parse as parseToml } from '@decimalturn/toml-patch';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseYaml } from 'yaml';

import { runInstallBridge } from '../../../supervisor/installBridge/command.js';
import type { InstallBridgeOptions, InstallBridgeReport } from '../../../supervisor/installBridge/command.js';
import { resolvePaths } from '../../../shared/paths.js';
import { VERSION } from '../../../shared/version.js';
import { backupsOf, makeFixture, snapshot } from './fixture.js';
import type { Fixture } from './fixture.js';

let fx: Fixture | undefined;
afterEach(() => {
  fx?.cleanup();
  fx = undefined;
});

function run(f: Fixture, extra: Partial<InstallBridgeOptions> = {}): InstallBridgeReport {
  return runInstallBridge({ paths: f.paths, env: f.env, platform: 'linux', ...extra });
}

function statusOf(report: InstallBridgeReport): Record<string, string> {
  return Object.fromEntries(report.agents.map((a) => [a.id, a.status]));
}

function json(file: string): Record<string, any> {
  return parseJsonc(readFileSync(file, 'utf8'), [], { allowTrailingComma: true }) as Record<string, any>;
}

describe('install-bridge', () => {
  it('writes the exact entry shapes into every installed agent, skips the others, refuses the unparseable one', () => {
    const f = (fx = makeFixture());
    const report = run(f);
    assert.equal(report.exitCode, 0, report.lines.join('\n'));
    assert.deepEqual(statusOf(report), {
      claude: 'installed',
      cursor: 'installed',
      windsurf: 'skipped',
      gemini: 'refused',
      droid: 'installed',
      pi: 'skipped',
      vscode: 'installed',
      zed: 'installed',
      amp: 'installed',
      opencode: 'installed',
      codex: 'installed',
      grok: 'installed',
      goose: 'installed',
    });
    const L = f.launcher;
    const stdio = { type: 'stdio', command: L, args: [], env: {} };
    const s = f.seeded;
    assert.deepEqual(json(s['claude']!.file)['mcpServers'].tuicommander, stdio);
    assert.equal(json(s['claude']!.file)['numStartups'], 12);
    assert.deepEqual(Object.keys(json(s['claude']!.file)['mcpServers']), ['github', 'tuicommander']);
    assert.deepEqual(json(s['cursor']!.file)['mcpServers'], { tuicommander: stdio });
    assert.deepEqual(json(s['droid']!.file), { autoUpdate: true, mcpServers: { tuicommander: stdio } });
    assert.deepEqual(json(s['vscode']!.file)['servers'].tuicommander, stdio);
    assert.deepEqual(json(s['zed']!.file)['context_servers'], { tuicommander: stdio });
    assert.deepEqual(json(f.created['amp']!), { 'amp.mcpServers': { tuicommander: stdio } });
    assert.deepEqual(json(s['opencode']!.file)['mcp'].tuicommander, { type: 'local', command: [L], enabled: true });
    assert.ok(!existsSync(f.absent['opencodeJson']!), 'opencode.jsonc was edited, no opencode.json made');

    const codex = readFileSync(s['codex']!.file, 'utf8');
    assert.ok(codex.endsWith(`\n[mcp_servers.tuicommander]\ncommand = ${JSON.stringify(L)}\nenv_vars = ["TUIC_SESSION"]\n`), codex);
    assert.deepEqual({ ...parseToml(codex).mcp_servers.tuicommander }, { command: L, env_vars: ['TUIC_SESSION'] });
    assert.equal(readFileSync(f.created['grok']!, 'utf8'), `[mcp_servers.tuicommander]\ncommand = ${JSON.stringify(L)}\n`);

    const goose = parseYaml(readFileSync(s['goose']!.file, 'utf8')) as Record<string, any>;
    assert.deepEqual(goose['extensions'].tuicommander, {
      type: 'stdio',
      name: 'tuicommander',
      description: 'TUICommander: terminal sessions and agents (tuic-bridge)',
      cmd: L,
      args: [],
      envs: {},
      env_keys: [],
      timeout: 300,
      enabled: true,
    });
    assert.deepEqual(Object.keys(goose['extensions']), ['developer', 'filesystem', 'tuicommander']);

    // Refused: untouched, said so, and no backup.
    assert.deepEqual(readFileSync(s['gemini']!.file), s['gemini']!.bytes);
    assert.equal(backupsOf(s['gemini']!.file).length, 0);
    assert.ok(
      report.lines.some((l) => l.startsWith(`Gemini CLI: refused: cannot parse ${s['gemini']!.file}: `) && l.endsWith('(left untouched)')),
      report.lines.join('\n'),
    );
    for (const file of Object.values(f.absent)) assert.ok(!existsSync(file), file);
    assert.ok(report.lines.includes('Windsurf: skipped: not installed'));
    assert.equal(report.lines[0], `launcher: written ${L}`);
  });

  it('backs up each changed file once, with its bytes and mode, and keeps the file mode', () => {
    const f = (fx = makeFixture());
    const report = run(f);
    for (const [id, { file, bytes }] of Object.entries(f.seeded)) {
      const backups = backupsOf(file);
      if (id === 'gemini') continue;
      assert.equal(backups.length, 1, file);
      assert.deepEqual(readFileSync(backups[0]!), bytes);
      assert.equal(statSync(backups[0]!).mode & 0o777, statSync(file).mode & 0o777);
      assert.equal(report.agents.find((a) => a.id === id)!.backup, backups[0]);
    }
    assert.equal(statSync(f.seeded['codex']!.file).mode & 0o777, 0o640);
    assert.equal(statSync(f.seeded['claude']!.file).mode & 0o777, 0o600);
    assert.equal(statSync(f.created['amp']!).mode & 0o777, 0o600);
  });

  it('changes nothing on a second run: same bytes and mtimes, no new backup, every entry unchanged', () => {
    const f = (fx = makeFixture());
    run(f);
    const before = snapshot(f.root);
    const again = run(f);
    assert.equal(again.exitCode, 0);
    assert.deepEqual(snapshot(f.root), before);
    for (const a of again.agents) assert.ok(['unchanged', 'skipped', 'refused'].includes(a.status), `${a.id}: ${a.status}`);
    assert.equal(again.launcher.action, 'unchanged');
  });

  it('--uninstall gives every seeded file its original bytes back and removes what it created', () => {
    const f = (fx = makeFixture());
    run(f);
    const report = run(f, { uninstall: true });
    assert.equal(report.exitCode, 0, report.lines.join('\n'));
    for (const [id, { file, bytes }] of Object.entries(f.seeded)) assert.equal(readFileSync(file, 'utf8'), bytes.toString('utf8'), id);
    for (const file of Object.values(f.created)) assert.ok(!existsSync(file), `${file} removed`);
    assert.ok(!existsSync(f.launcher));
    assert.ok(!existsSync(join(f.paths.configDir, 'mcp-bridge')), 'launcher dir and its state gone');
    assert.equal(statusOf(report)['gemini'], 'refused');
    assert.equal(statusOf(report)['claude'], 'removed');
    assert.equal(statusOf(report)['windsurf'], 'not present');
    assert.equal(report.lines[report.lines.length - 1], `launcher: removed ${f.launcher}`);
    // And a second uninstall finds nothing to do.
    const before = snapshot(f.root);
    const again = run(f, { uninstall: true });
    assert.deepEqual(snapshot(f.root), before);
    for (const a of again.agents) assert.ok(['not present', 'refused'].includes(a.status), `${a.id}: ${a.status}`);
  });

  it('--uninstall keeps a parent key and file it did not create, even when they end up empty', () => {
    const f = (fx = makeFixture());
    const file = f.seeded['cursor']!.file;
    run(f);
    run(f, { uninstall: true });
    assert.equal(readFileSync(file, 'utf8'), '{\n  "mcpServers": {}\n}\n');
  });

  it('--dry-run writes nothing, for install and for uninstall, and says what it would do', () => {
    const f = (fx = makeFixture());
    const before = snapshot(f.root);
    const report = run(f, { dryRun: true });
    assert.deepEqual(snapshot(f.root), before);
    assert.equal(report.lines[0], 'dry run: nothing is written');
    assert.equal(report.lines[1], `launcher: would write ${f.launcher}`);
    assert.ok(report.lines.includes(`Codex: would install ${f.seeded['codex']!.file}`), report.lines.join('\n'));
    assert.ok(report.lines.includes(`Amp: would install ${f.created['amp']!} (new file)`), report.lines.join('\n'));
    run(f);
    const installed = snapshot(f.root);
    const un = run(f, { uninstall: true, dryRun: true });
    assert.deepEqual(snapshot(f.root), installed);
    assert.ok(un.lines.includes(`Zed: would remove ${f.seeded['zed']!.file}`), un.lines.join('\n'));
    assert.equal(un.lines[un.lines.length - 1], `launcher: would remove ${f.launcher}`);
  });

  it('refuses a file whose parent key is not an object, leaving it byte for byte', () => {
    const f = (fx = makeFixture());
    const file = f.seeded['cursor']!.file;
    writeFileSync(file, '{ "mcpServers": [] }\n');
    const report = run(f);
    assert.equal(report.exitCode, 0);
    assert.equal(statusOf(report)['cursor'], 'refused');
    assert.ok(report.lines.includes(`Cursor: refused: cannot use ${file}: "mcpServers" is not a table/object (left untouched)`), report.lines.join('\n'));
    assert.equal(readFileSync(file, 'utf8'), '{ "mcpServers": [] }\n');
  });

  it('updates an entry that points elsewhere, and only that entry', () => {
    const f = (fx = makeFixture());
    const file = f.seeded['claude']!.file;
    writeFileSync(file, '{\n  "mcpServers": {\n    "tuicommander": { "command": "/old/tuic-bridge" },\n    "x": {}\n  }\n}\n');
    const report = run(f);
    assert.equal(statusOf(report)['claude'], 'updated');
    assert.deepEqual(json(file), { mcpServers: { tuicommander: { type: 'stdio', command: f.launcher, args: [], env: {} }, x: {} } });
  });

  it('writes through a symlinked config, keeping the link', () => {
    const f = (fx = makeFixture());
    const file = f.seeded['claude']!.file;
    const real = join(f.root, 'dotfiles', 'claude.json');
    mkdirSync(join(f.root, 'dotfiles'));
    renameSync(file, real);
    symlinkSync(real, file);
    run(f);
    assert.ok(lstatSync(file).isSymbolicLink());
    assert.equal(json(real)['mcpServers'].tuicommander.command, f.launcher);
  });

  it('fails (exit 1) when a config cannot be written, but still handles every other agent', () => {
    const f = (fx = makeFixture());
    // A directory where the file should be: no rename can replace it (root or not).
    const cursor = f.seeded['cursor']!.file;
    renameSync(cursor, `${cursor}.moved`);
    mkdirSync(cursor);
    const report = run(f);
    assert.equal(report.exitCode, 1);
    assert.equal(statusOf(report)['cursor'], 'failed');
    assert.ok(
      report.lines.some((l) => l.startsWith(`Cursor: failed: ${cursor}: `)),
      report.lines.join('\n'),
    );
    assert.equal(statusOf(report)['codex'], 'installed');
    assert.ok(statSync(cursor).isDirectory());
    assert.deepEqual(readdirSync(join(f.home, '.cursor')).sort(), ['mcp.json', 'mcp.json.moved'], 'no temporary file left behind');
  });
});

describe('the launcher', () => {
  it("is 0755 and execs this Node on this install's dist/bridge/cli.js, pinned to the config dir", () => {
    const f = (fx = makeFixture());
    run(f);
    const script = readFileSync(f.launcher, 'utf8');
    assert.equal(statSync(f.launcher).mode & 0o777, 0o755);
    const bridge = new URL('../../../bridge/cli.js', import.meta.url).pathname;
    assert.ok(script.startsWith('#!/bin/sh\n'));
    assert.ok(script.includes(`exec '${process.execPath}' '${bridge}' "$@"\n`), script);
    assert.ok(script.includes(`TUIC_CONFIG_DIR='${f.paths.configDir}'\nexport TUIC_CONFIG_DIR\nunset TUIC_APP_INSTANCE\n`), script);
    assert.ok(existsSync(bridge));
  });

  it('starts the real bridge: --version answers through it', () => {
    const f = (fx = makeFixture());
    run(f);
    const r = spawnSync(f.launcher, ['--version'], { env: { PATH: '/nonexistent' }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `tuic-bridge ${VERSION}\n`);
  });

  /** Runs the launcher of a fixture installed with a stand-in bridge that prints what it was given. */
  function launch(f: Fixture, env: Record<string, string>): Record<string, unknown> {
    const probe = join(f.root, 'probe.mjs');
    writeFileSync(
      probe,
      'console.log(JSON.stringify({ argv: process.argv.slice(2), node: process.execPath, dir: process.env.TUIC_CONFIG_DIR ?? null, instance: process.env.TUIC_APP_INSTANCE ?? null }));\n',
    );
    run(f, { bridgeScript: probe });
    const r = spawnSync(f.launcher, ['--version', 'two words', "it's"], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  }

  it('runs without node on PATH, passes its arguments through, and clears an inherited instance', () => {
    const f = (fx = makeFixture());
    const got = launch(f, { PATH: '/nonexistent', TUIC_APP_INSTANCE: 'someone-else', TUIC_CONFIG_DIR: '/elsewhere' });
    assert.deepEqual(got, { argv: ['--version', 'two words', "it's"], node: process.execPath, dir: f.paths.configDir, instance: null });
  });

  it('selects its instance when installed with --instance', () => {
    const f = (fx = makeFixture({ instance: 'dev' }));
    assert.deepEqual(launch(f, { PATH: '/nonexistent' }), {
      argv: ['--version', 'two words', "it's"],
      node: process.execPath,
      dir: f.paths.configDir,
      instance: 'dev',
    });
    // The bridge, resolving paths from that environment, lands on the instance's own socket.
    assert.equal(resolvePaths({}, { TUIC_CONFIG_DIR: f.paths.configDir, TUIC_APP_INSTANCE: 'dev' }).socketPath, f.paths.socketPath);
  });

  it('for an instance under the default config dir, lives in and points at the instance dir', () => {
    const f = (fx = makeFixture());
    const paths = resolvePaths({ instance: 'dev' }, f.env);
    assert.equal(paths.configDir, join(f.xdg, 'com.tuic.commander', 'instances', 'dev'));
    const report = runInstallBridge({ paths, env: f.env, platform: 'linux' });
    assert.equal(report.launcher.path, join(paths.configDir, 'mcp-bridge', 'tuic-bridge'));
    const script = readFileSync(report.launcher.path, 'utf8');
    assert.ok(script.includes(`TUIC_APP_INSTANCE='dev'\nexport TUIC_APP_INSTANCE\n`), script);
    assert.equal(resolvePaths({}, { TUIC_CONFIG_DIR: paths.configDir, TUIC_APP_INSTANCE: 'dev' }).socketPath, paths.socketPath);
  });
});
