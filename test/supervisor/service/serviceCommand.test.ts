/**
 * `tuicd service install | uninstall | status`, run as the real CLI against a temporary HOME. The
 * systemd unit is checked by systemd's own parser (systemd-analyze verify) and the launchd plist by
 * Python's plistlib, the nearest thing to launchd's reader on Linux.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { readServiceArguments, renderLaunchdPlist, renderSystemdUnit, serviceArguments } from '../../../supervisor/service/unitFiles.js';
import type { ServiceSpec } from '../../../supervisor/service/unitFiles.js';
import { MAIN_JS } from '../../helpers/tuicdProcess.js';

let home: string;
before(() => {
  home = mkdtempSync(join(tmpdir(), 'tuicd-service-home-'));
});
after(() => rmSync(home, { recursive: true, force: true }));

function tuicd(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const { XDG_CONFIG_HOME: _xdg, XDG_RUNTIME_DIR: _runtime, ...inherited } = process.env;
  const result = spawnSync(process.execPath, [MAIN_JS, ...args], { encoding: 'utf8', env: { ...inherited, HOME: home, ...env }, timeout: 20_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const unitPath = (): string => join(home, '.config', 'systemd', 'user', 'tuicd.service');

function systemdVerify(file: string): void {
  // Offline: reads the file with systemd's own parser, no manager needed.
  execFileSync('systemd-analyze', ['verify', file], { stdio: 'pipe', env: { ...process.env, HOME: home } });
}

function plist(text: string): Record<string, unknown> {
  const script = 'import json,plistlib,sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))';
  return JSON.parse(execFileSync('python3', ['-c', script], { input: text, encoding: 'utf8' })) as Record<string, unknown>;
}

test('install --dry-run prints the systemd unit and writes nothing', () => {
  const configDir = join(home, 'cfg');
  const out = tuicd(['service', 'install', '--dry-run', '--config-dir', configDir]);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, new RegExp(`would write ${unitPath().replace(/[.]/g, '\\.')}`));
  const exec = /^ExecStart=(.*)$/m.exec(out.stdout)?.[1];
  assert.equal(exec, `${process.execPath} ${MAIN_JS} --config-dir ${configDir} --keep-sessions`);
  for (const line of ['Restart=on-failure', 'KillMode=process', 'StandardError=journal', 'Environment=TUIC_LOG_FORMAT=json', 'WantedBy=default.target']) {
    assert.ok(out.stdout.split('\n').includes(line), `missing ${line}`);
  }
  assert.equal(existsSync(join(home, '.config')), false, 'a dry run wrote something');
});

test('install --dry-run --platform darwin prints a launchd agent that plistlib reads', () => {
  const configDir = join(home, 'cfg');
  const out = tuicd(['service', 'install', '--dry-run', '--platform', 'darwin', '--config-dir', configDir, '--instance', 'work']);
  assert.equal(out.code, 0, out.stderr);
  const first = out.stdout.indexOf('<?xml');
  assert.match(out.stdout.slice(0, first), /would write .*Library\/LaunchAgents\/com\.tuic\.tuicd\.work\.plist/);
  const agent = plist(out.stdout.slice(first));
  assert.equal(agent['Label'], 'com.tuic.tuicd.work');
  assert.deepEqual(agent['ProgramArguments'], [process.execPath, MAIN_JS, '--config-dir', configDir, '--keep-sessions', '--instance', 'work']);
  assert.deepEqual(agent['KeepAlive'], { SuccessfulExit: false }, 'restarts only when it fails');
  assert.equal(agent['AbandonProcessGroup'], true, 'launchd must leave the pty host running when the job stops');
  assert.equal(agent['RunAtLoad'], true);
  assert.equal((agent['EnvironmentVariables'] as Record<string, string>)['TUIC_LOG_FORMAT'], 'json');
  assert.equal(existsSync(join(home, 'Library')), false, 'a dry run wrote something');
});

test('install writes a unit systemd accepts; status reads it back; uninstall removes it and its enable link', () => {
  const configDir = join(home, 'cfg');
  const installed = tuicd(['service', 'install', '--user', '--config-dir', configDir]);
  assert.equal(installed.code, 0, installed.stderr);
  assert.match(installed.stdout, /^wrote .*tuicd\.service$/m);
  assert.match(installed.stdout, /loginctl enable-linger/);
  systemdVerify(unitPath());

  assert.match(tuicd(['service', 'install', '--config-dir', configDir]).stdout, /already installed and unchanged/);

  let status = tuicd(['service', 'status', '--config-dir', configDir]);
  assert.equal(status.code, 0);
  assert.match(status.stdout, /points at this install/);
  assert.match(status.stdout, /keeps sessions across restarts/);
  assert.match(status.stdout, /not enabled/);

  // What `systemctl --user enable` would make.
  const wants = join(home, '.config', 'systemd', 'user', 'default.target.wants');
  mkdirSync(wants);
  symlinkSync(unitPath(), join(wants, 'tuicd.service'));
  assert.match(tuicd(['service', 'status', '--config-dir', configDir]).stdout, /enabled \(starts at login\)/);

  // Another install's unit is told apart from this one's.
  writeFileSync(unitPath(), readFileSync(unitPath(), 'utf8').replace(MAIN_JS, '/opt/other/dist/supervisor/main.js'));
  assert.match(tuicd(['service', 'status', '--config-dir', configDir]).stdout, /points at another install \(\/opt\/other/);

  const dry = tuicd(['service', 'uninstall', '--dry-run', '--config-dir', configDir]);
  assert.match(dry.stdout, /would remove .*tuicd\.service/);
  assert.ok(existsSync(unitPath()));

  const removed = tuicd(['service', 'uninstall', '--config-dir', configDir]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(existsSync(unitPath()), false);
  assert.equal(existsSync(join(wants, 'tuicd.service')), false, 'the enable link would dangle');
  status = tuicd(['service', 'status', '--config-dir', configDir]);
  assert.equal(status.code, 1);
  assert.match(status.stdout, /not installed/);
  assert.match(tuicd(['service', 'uninstall', '--config-dir', configDir]).stdout, /nothing to remove/);
});

test('paths with spaces, quotes, % and $ survive systemd quoting and read back as written', () => {
  const spec: ServiceSpec = {
    node: '/opt/node 22/bin/node',
    mainJs: '/home/a user/tuicd/dist/supervisor/main.js',
    configDir: `/home/a user/cfg "q" 100% $HOME`,
    instance: 'w.1',
    path: '/usr/bin:/bin',
    home: '/home/a user',
    logDir: '/home/a user/cfg/logs',
  };
  const unit = renderSystemdUnit(spec);
  assert.deepEqual(readServiceArguments('linux', unit), serviceArguments(spec));
  assert.deepEqual(readServiceArguments('darwin', renderLaunchdPlist(spec)), serviceArguments(spec));
  assert.deepEqual((plist(renderLaunchdPlist(spec)) as { ProgramArguments: string[] }).ProgramArguments, serviceArguments(spec));
  // systemd-analyze checks the executable exists: point it at a real one, keep the odd argument.
  const file = join(home, 'quoted.service');
  writeFileSync(file, renderSystemdUnit({ ...spec, node: process.execPath }));
  systemdVerify(file);
});

test('a wrong action or platform is refused with a clear error', () => {
  const bad = tuicd(['service', 'start']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /service takes one of install, uninstall, status/);
  const windows = tuicd(['service', 'install', '--dry-run', '--platform', 'win32']);
  assert.equal(windows.code, 1);
  assert.match(windows.stderr, /supports Linux \(systemd\) and macOS \(launchd\), not win32/);
  assert.equal(tuicd(['--platform', 'linux']).code, 2, '--platform alone is not a server option');
});
