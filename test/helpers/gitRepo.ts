/**
 * Real git repositories in temp dirs for tests. Git reads no user or system config here
 * (GIT_CONFIG_GLOBAL points at an empty file of our own), so the machine's settings never leak in,
 * and each repository gets its own user.name/email.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface GitSandbox {
  /** A temp dir holding the repositories (realpath: /tmp may be a symlink). */
  root: string;
  /** Environment for git and for tuicd: isolated global config, no system config. */
  env: Record<string, string>;
  git(cwd: string, ...args: string[]): string;
  /** git init + identity + files + one commit on `main`. */
  initRepo(name: string, files: Record<string, string>): string;
  write(repo: string, files: Record<string, string>): void;
  cleanup(): void;
}

export function gitSandbox(): GitSandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tuicd-git-')));
  const globalConfig = join(root, '.gitconfig-global');
  writeFileSync(globalConfig, '');
  const env = { GIT_CONFIG_GLOBAL: globalConfig, GIT_CONFIG_NOSYSTEM: '1' };
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const write = (repo: string, files: Record<string, string>) => {
    for (const [rel, content] of Object.entries(files)) {
      mkdirSync(dirname(join(repo, rel)), { recursive: true });
      writeFileSync(join(repo, rel), content);
    }
  };
  return {
    root,
    env,
    git,
    write,
    initRepo(name, files) {
      const repo = join(root, name);
      mkdirSync(repo, { recursive: true });
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.name', 'Test User');
      git(repo, 'config', 'user.email', 'test@example.invalid');
      git(repo, 'config', 'commit.gpgsign', 'false');
      write(repo, files);
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'initial');
      return repo;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
