/**
 * `/repo/run-git` cannot be made to run a program (issue 26, item 3): an explicit allow-list of
 * subcommands and options parsed the way git parses them (abbreviated long options included), no
 * global options, no aliases, and a scrubbed environment with external diff, textconv and fsmonitor
 * switched off. The repro: `grep --open-files-in=<command>` ran the command.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { checkRunGitArgs, RUN_GIT_CONFIG } from '../../../supervisor/repos/runGit.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

describe('run-git: the allow-list parser', () => {
  const ran = (args: string[]) => checkRunGitArgs(args).slice(RUN_GIT_CONFIG.length);
  const refused = (args: string[]) =>
    assert.throws(
      () => checkRunGitArgs(args),
      (e: any) => e.code === 'invalid_input',
      args.join(' '),
    );

  it('expands an abbreviated allowed long option to its full name, so git never chooses', () => {
    assert.deepEqual(ran(['log', '--form=%s', '--max-c=1']), ['log', '--no-ext-diff', '--no-textconv', '--format=%s', '--max-count=1']);
    assert.deepEqual(ran(['grep', '--line-n', '-i', 'x', '--', 'a b']), ['grep', '--line-number', '-i', 'x', '--', 'a b']);
    assert.deepEqual(ran(['log', '-n5', '-3', '--oneline']), ['log', '--no-ext-diff', '--no-textconv', '-n5', '-3', '--oneline']);
  });

  it('refuses every form of a forbidden option: whole, abbreviated, ambiguous, grouped, global', () => {
    for (const args of [
      ['grep', '--open-files-in=touch /tmp/x; true', 'hello'],
      ['grep', '--open-files-in-pager=touch /tmp/x', 'hello'],
      ['grep', '--open', 'hello'],
      ['grep', '-O', 'hello'],
      ['grep', '-iOtouch', 'hello'],
      ['grep', '-f', '/etc/passwd'],
      ['diff', '--output=/tmp/x'],
      ['diff', '--out=/tmp/x'],
      ['diff', '--o=/tmp/x'],
      ['diff', '--ext-diff'],
      ['diff', '--ext'],
      ['log', '--textconv'],
      ['show', '--textc'],
      ['diff', '--no-index', '/etc/passwd', '/etc/hostname'],
      ['blame', '--contents', '/etc/passwd', 'a.txt'],
      ['log', '--exec-path=/tmp'],
      ['log', '--git-dir=/tmp'],
      ['log', '--work-tree=/'],
      ['log', '--config-env=core.pager=X'],
      ['log', '--fi'], // ambiguous, and a prefix of the refused --file / --filters
      ['log', '--a'], // ambiguous: --all, --after, --author, …
      ['log', '-c'],
      ['diff', '-C'],
      ['-c', 'core.pager=sh', 'log'],
      ['-C', '/', 'log'],
      ['--exec-path=/tmp', 'log'],
      ['--git-dir=/tmp', 'log'],
      ['--paginate', 'log'],
      ['push'],
      ['config', 'alias.x', '!touch /tmp/x'],
      ['lg'],
      ['log', '--separate', '--output=/tmp/x'],
    ])
      refused(args);
  });
});

describe('run-git against real git', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  const runGit = (args: string[]) => post('/repo/run-git', { repoPath: repo, args });
  let marker: string;
  let script: string;

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('rg', { 'a.txt': 'hello\n', '.gitattributes': '*.txt diff=evil\n' });
    marker = join(sb.root, 'ran');
    // A program git would run if anything let it: it leaves the marker behind.
    script = join(sb.root, 'evil.sh');
    writeFileSync(script, `#!/bin/sh\ntouch '${marker}'\ncat "$1" 2>/dev/null\n`);
    chmodSync(script, 0o755);
    sb.git(repo, 'config', 'alias.lg', `!touch '${marker}'`);
    sb.git(repo, 'config', 'diff.external', script);
    sb.git(repo, 'config', 'diff.evil.textconv', script);
    sb.git(repo, 'config', 'core.fsmonitor', script);
    sb.write(repo, { 'a.txt': 'hello\nchanged\n' });
    t = await Tuicd.start({ env: sb.env });
    await t.registerRepos(repo);
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
  });

  it('the repro: grep --open-files-in=<command> is refused and runs nothing', async () => {
    for (const args of [
      ['grep', `--open-files-in=touch ${marker}; true`, 'hello'],
      ['grep', `--open-files-in-pager=touch ${marker}; true`, 'hello'],
      ['grep', `-Otouch ${marker}; true`, 'hello'],
      ['-c', `alias.x=!touch ${marker}`, 'x'],
      ['lg'],
      ['diff', `--ext`],
    ]) {
      const r = await runGit(args);
      assert.equal(r.status, 400, `${args.join(' ')}: ${r.text}`);
      assert.equal(r.json().code, 'invalid_input');
    }
    assert.equal(existsSync(marker), false, 'nothing ran');
  });

  it("reads still work, and the repository's external diff, textconv and fsmonitor never run", async () => {
    for (const args of [
      ['diff'],
      ['diff', '--stat'],
      ['log', '-p', '-1'],
      ['show', 'HEAD'],
      ['status', '--short'],
      ['blame', 'a.txt'],
      ['grep', '-n', 'hello'],
    ]) {
      const r = await runGit(args);
      assert.equal(r.status, 200, `${args.join(' ')}: ${r.text}`);
      assert.equal(r.json().exit_code, 0, `${args.join(' ')}: ${r.text}`);
    }
    const diff = (await runGit(['diff'])).json();
    assert.match(diff.stdout, /\+changed/);
    const log = (await runGit(['log', '--form=%s', '--max-c=1'])).json();
    assert.deepEqual(log, { exit_code: 0, stdout: 'initial\n', stderr: '' });
    assert.equal(existsSync(marker), false, 'no program of the repository ran');
  });
});
