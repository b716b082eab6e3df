/** `tuicd install-bridge` as a user runs it: the real CLI, with HOME and XDG dirs of its own. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, it } from 'node:test';

import { HELP_TEXT, parseCli } from '../../../supervisor/cli.js';
import { backupsOf, makeFixture, snapshot } from './fixture.js';
import type { Fixture } from './fixture.js';

const MAIN_JS = new URL('../../../supervisor/main.js', import.meta.url).pathname;

let fx: Fixture | undefined;
afterEach(() => {
  fx?.cleanup();
  fx = undefined;
});

function tuicd(f: Fixture, ...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [MAIN_JS, 'install-bridge', '--config-dir', f.paths.configDir, ...args], { env: f.env, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('tuicd install-bridge (end to end)', () => {
  it('installs, is idempotent, and uninstalls back to the original bytes', () => {
    const f = (fx = makeFixture());
    const pristine = snapshot(f.root);
    const dry = tuicd(f, '--dry-run');
    assert.equal(dry.code, 0, dry.err);
    assert.deepEqual(snapshot(f.root), pristine);
    assert.match(dry.out, /^dry run: nothing is written\n/);

    const first = tuicd(f);
    assert.equal(first.code, 0, first.err);
    const lines = first.out.trimEnd().split('\n');
    assert.equal(lines[0], `launcher: written ${f.launcher}`);
    assert.equal(lines.length, 14, first.out);
    assert.ok(lines.includes(`Codex: installed ${f.seeded['codex']!.file} (backup ${backupsOf(f.seeded['codex']!.file)[0]})`), first.out);
    assert.ok(lines.includes('Windsurf: skipped: not installed'), first.out);
    assert.ok(
      lines.some((l) => l.startsWith('Gemini CLI: refused: cannot parse ')),
      first.out,
    );
    assert.equal(JSON.parse(readFileSync(f.seeded['cursor']!.file, 'utf8')).mcpServers.tuicommander.command, f.launcher);
    assert.ok(readFileSync(f.launcher, 'utf8').includes(`'${new URL('../../../bridge/cli.js', import.meta.url).pathname}'`));

    const installed = snapshot(f.root);
    const second = tuicd(f);
    assert.equal(second.code, 0);
    assert.deepEqual(snapshot(f.root), installed);
    assert.ok(second.out.includes(`Codex: unchanged ${f.seeded['codex']!.file}\n`), second.out);

    const un = tuicd(f, '--uninstall');
    assert.equal(un.code, 0, un.err);
    for (const [id, { file, bytes }] of Object.entries(f.seeded)) assert.deepEqual(readFileSync(file), bytes, id);
    assert.ok(!existsSync(f.launcher));
    assert.ok(un.out.endsWith(`launcher: removed ${f.launcher}\n`), un.out);
  });

  it('documents the subcommand and its flags in --help, and refuses the flags elsewhere', () => {
    for (const word of ['install-bridge', '--dry-run', '--uninstall']) assert.ok(HELP_TEXT.includes(word), word);
    const r = spawnSync(process.execPath, [MAIN_JS, '--help'], { encoding: 'utf8' });
    assert.ok(r.stdout.includes('install-bridge'));
    const bad = spawnSync(process.execPath, [MAIN_JS, 'status', '--dry-run'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--dry-run goes with install-bridge/);
  });
});

describe('parseCli: install-bridge', () => {
  it('reads the subcommand and its flags in any order', () => {
    assert.deepEqual(parseCli(['install-bridge']), { command: 'install-bridge', json: false });
    assert.deepEqual(parseCli(['--dry-run', 'install-bridge', '--config-dir', '/c']), {
      command: 'install-bridge',
      json: false,
      dryRun: true,
      configDir: '/c',
    });
    assert.deepEqual(parseCli(['install-bridge', '--uninstall', '--instance', 'dev']), {
      command: 'install-bridge',
      json: false,
      uninstall: true,
      instance: 'dev',
    });
  });

  it('throws on extra positionals and on its flags without it', () => {
    assert.throws(() => parseCli(['install-bridge', 'now']), /unknown command "install-bridge now"/);
    assert.throws(() => parseCli(['--uninstall']), /--uninstall goes with install-bridge/);
  });
});
