import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HELP_TEXT, parseCli } from '../../supervisor/cli.js';

describe('parseCli', () => {
  it('serves by default, with no options set', () => {
    assert.deepEqual(parseCli([]), { command: 'serve', json: false });
  });

  it('reads --config-dir, --instance and --log-level, in both spellings', () => {
    assert.deepEqual(parseCli(['--config-dir', '/c', '--instance', 'dev', '--log-level', 'debug']), {
      command: 'serve',
      json: false,
      configDir: '/c',
      instance: 'dev',
      logLevel: 'debug',
    });
    assert.deepEqual(parseCli(['--config-dir=/d', '--instance=x']), { command: 'serve', json: false, configDir: '/d', instance: 'x' });
  });

  it('knows the status subcommand, with --json before or after it', () => {
    assert.deepEqual(parseCli(['status']), { command: 'status', json: false });
    assert.deepEqual(parseCli(['status', '--json']), { command: 'status', json: true });
    assert.deepEqual(parseCli(['--json', 'status', '--config-dir', '/c']), { command: 'status', json: true, configDir: '/c' });
  });

  it('knows stop, restart and --keep-sessions', () => {
    assert.deepEqual(parseCli(['stop']), { command: 'stop', json: false });
    assert.deepEqual(parseCli(['restart', '--config-dir', '/c']), { command: 'restart', json: false, configDir: '/c' });
    assert.deepEqual(parseCli(['--keep-sessions']), { command: 'serve', json: false, keepSessions: true });
    assert.throws(() => parseCli(['stop', 'now']), /unknown command "stop now"/);
  });

  it('throws on an unknown command or extra positionals', () => {
    assert.throws(() => parseCli(['start']), /unknown command "start" \(try --help\)/);
    assert.throws(() => parseCli(['status', 'now']), /unknown command "status now"/);
  });

  it('throws on unknown options and on an option missing its value', () => {
    assert.throws(() => parseCli(['--port', '1']), /--port/);
    assert.throws(() => parseCli(['--config-dir']), /--config-dir/);
  });

  it('answers help for -h / --help and version for -v / --version, help first', () => {
    assert.equal(parseCli(['--help']).command, 'help');
    assert.equal(parseCli(['-h']).command, 'help');
    assert.equal(parseCli(['--version']).command, 'version');
    assert.equal(parseCli(['-v']).command, 'version');
    assert.equal(parseCli(['-v', '-h']).command, 'help');
    assert.equal(parseCli(['status', '--help']).command, 'help');
    assert.equal(parseCli(['bogus', '--version']).command, 'version');
  });

  it('documents every option in the help text', () => {
    for (const flag of ['--config-dir', '--instance', '--log-level', '--json', '--help', '--version', 'status', 'TUIC_CONFIG_DIR', 'TUIC_APP_INSTANCE']) {
      assert.ok(HELP_TEXT.includes(flag), flag);
    }
  });
});
