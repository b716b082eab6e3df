/**
 * The containment corpus: requests that name a path outside every root (a registered repository,
 * one of its worktrees, a live session's directory) through each spelling a route takes (absolute,
 * `..`, a symlink out of the work tree, a transfer source), and git arguments that would run a
 * command or write a file if git's option parsing were matched loosely (abbreviations, `-c`,
 * aliases, pagers, `--output`, `-C`).
 *
 * The harness makes the fixture: `workDir` is a git repository (the fuzzer's sessions run there, so
 * it is a root), `outsideDir` beside it is no root and holds `secret.txt`, and `workDir/link-out`
 * is a symlink to `outsideDir`. The oracle's rules: a case marked `outside` must never succeed,
 * and a case's `canary` file must never exist after its answer (git ran what it was handed).
 *
 * Safety: the only command any of these strings asks for is `touch <canary>` inside the fixture.
 */
import { resolve } from 'node:path';

import type { Rng } from './rng.js';
import { query } from './encoding.js';
import { obj } from './values.js';
import type { J } from './values.js';

export interface ContainmentDraft {
  method: string;
  route: string;
  path: string;
  body?: J;
  /** Names a path outside every root: any 2xx is a breach. */
  outside: boolean;
  /** A file that exists only if git ran a command or wrote where it was told. */
  canary: string | null;
}

export interface ContainmentCtx {
  workDir: string;
  outsideDir: string;
  home: string;
}

export const SECRET_FILE = 'secret.txt';
export const LINK_OUT = 'link-out';

/** A request naming a path outside every root: any success is a breach. */
const outsideGet = (route: string, params: Record<string, string>): ContainmentDraft => ({
  method: 'GET',
  route: `GET ${route}`,
  path: route + query(params),
  outside: true,
  canary: null,
});
const outsidePost = (route: string, body: J): ContainmentDraft => ({ method: 'POST', route: `POST ${route}`, path: route, body, outside: true, canary: null });

/** Directory spellings that all lead outside the roots. */
function outsideDirSpelling(r: Rng, ctx: ContainmentCtx): string {
  return r.pick([
    ctx.outsideDir,
    `${ctx.outsideDir}/`,
    `${ctx.workDir}/${LINK_OUT}`,
    `${ctx.workDir}/../${ctx.outsideDir.split('/').pop()}`,
    `${ctx.workDir}/./${LINK_OUT}/.`,
    '/etc',
    '/',
  ]);
}

/** File spellings that all lead to the secret outside the roots. */
function outsideFileSpelling(r: Rng, ctx: ContainmentCtx): string {
  return r.pick([
    `${ctx.outsideDir}/${SECRET_FILE}`,
    `${ctx.workDir}/${LINK_OUT}/${SECRET_FILE}`,
    `${ctx.workDir}/../${ctx.outsideDir.split('/').pop()}/${SECRET_FILE}`,
    `${ctx.workDir}//${LINK_OUT}//${SECRET_FILE}`,
    '/etc/hostname',
    '/etc/passwd',
  ]);
}

/** A path relative to the work tree that leaves it. */
function escapingRelative(r: Rng, ctx: ContainmentCtx): string {
  return r.pick([`${LINK_OUT}/${SECRET_FILE}`, `../${ctx.outsideDir.split('/').pop()}/${SECRET_FILE}`, `./${LINK_OUT}/../${LINK_OUT}/${SECRET_FILE}`]);
}

/**
 * git arguments that would run `touch <canary>` or write the canary if a refused option slipped
 * through under another spelling. `grep -O`/`--open-files-in-pager` runs its value as a command;
 * `-c core.pager`, `-c alias.*=!…` and `--config-env` configure a command; `--output` writes a file.
 */
function hostileGitArgs(r: Rng, canary: string): string[] {
  const touch = `touch ${canary}; true`;
  return r.pick<string[]>([
    ['grep', `--open-files-in-pager=${touch}`, 'hello'],
    ['grep', `--open-files-in=${touch}`, 'hello'],
    ['grep', `--open=${touch}`, 'hello'],
    ['grep', `--o=${touch}`, 'hello'],
    ['grep', `-O${touch}`, 'hello'],
    ['grep', '-O', touch, 'hello'],
    ['grep', `-nO${touch}`, 'hello'],
    ['-c', `core.pager=${touch}`, 'log'],
    ['-c', `alias.st=!${touch}`, 'st'],
    ['-c', `core.fsmonitor=${touch}`, 'status'],
    ['--config-env=core.pager=PATH', 'log'],
    ['--exec-path=/tmp', 'status'],
    ['-C', '/', 'status'],
    ['--git-dir=/etc', 'status'],
    ['log', `--output=${canary}`],
    ['log', `--outp=${canary}`],
    ['log', '--output', canary],
    ['diff', `--out=${canary}`, 'HEAD'],
    ['show', `--output=${canary}`, 'HEAD'],
    ['log', '-p', '--ext-diff', 'HEAD'],
    ['log', '-p', '--textconv', 'HEAD'],
    ['diff', '--ext', 'HEAD'],
    ['status', `--porcelain`, '--', `$(${touch})`],
    ['rev-parse', `--git-path=${canary}`],
    ['for-each-ref', `--format=%(if)${touch}%(then)x%(end)`],
    ['log', `--format=%(describe)`, `--exec=${touch}`],
    ['diff', `--no-index`, '/etc/hostname', canary],
    ['blame', `--contents=/etc/hostname`, SECRET_FILE],
    ['cat-file', '--filters', `HEAD:${SECRET_FILE}`],
    ['format-patch', '-o', canary, 'HEAD~1'],
    ['config', 'core.pager', touch],
    ['archive', `--output=${canary}`, 'HEAD'],
  ]);
}

/** One request of the containment corpus. */
export function containmentCase(r: Rng, ctx: ContainmentCtx, index: number): ContainmentDraft {
  const work = ctx.workDir;
  const canary = `${work}/canary-${index}`;
  const outsideName = ctx.outsideDir.split('/').pop();
  const gen = r.pick<() => ContainmentDraft>([
    () => {
      const which = r.pick(['read', 'read-editor', 'list']);
      const relative = r.chance(0.5);
      const repo = relative ? work : outsideDirSpelling(r, ctx);
      const file = relative ? escapingRelative(r, ctx) : SECRET_FILE;
      const params: Record<string, string> = which === 'list' ? { repoPath: repo } : { [r.pick(['repoPath', 'repo_path', 'path'])]: repo, file };
      if (which === 'list' && relative) params.subdir = LINK_OUT;
      return outsideGet(`/fs/${which}`, params);
    },
    () => outsideGet(`/fs/${r.pick(['read-external', 'read-editor-external', 'stat'])}`, { path: outsideFileSpelling(r, ctx) }),
    () =>
      outsideGet(
        '/fs/resolve-terminal-path',
        r.chance(0.5) ? { cwd: work, candidate: `${escapingRelative(r, ctx)}:1:1` } : { cwd: outsideDirSpelling(r, ctx), candidate: SECRET_FILE },
      ),
    () => {
      // Writes aimed outside: the repository itself, or a relative file that leaves it.
      const name = `written-${index}.txt`;
      return outsidePost(
        '/fs/write',
        r.chance(0.5)
          ? obj({ repoPath: work, file: r.pick([`${LINK_OUT}/${name}`, `../${outsideName}/${name}`]), content: 'x' })
          : obj({ repoPath: outsideDirSpelling(r, ctx), file: name, content: 'x' }),
      );
    },
    () => outsidePost('/fs/write-external', obj({ path: `${outsideDirSpelling(r, ctx)}/written-${index}.txt`, content: 'x' })),
    // Transfer: a source outside moved or copied in, or a file of the work tree copied out.
    () =>
      outsidePost(
        '/fs/transfer',
        r.chance(0.5)
          ? obj({ destDir: work, paths: [outsideFileSpelling(r, ctx)], mode: r.pick(['copy', 'move']), allowRecursive: r.chance(0.3) })
          : obj({ destDir: outsideDirSpelling(r, ctx), paths: [`${work}/README.md`], mode: 'copy' }),
      ),
    () =>
      outsidePost(
        `/fs/${r.pick(['copy-abs', 'move-abs'])}`,
        r.chance(0.5)
          ? obj({ from: outsideFileSpelling(r, ctx), to: `${work}/taken-${index}.txt` })
          : obj({ from: `${work}/README.md`, to: `${outsideDirSpelling(r, ctx)}/given-${index}.txt` }),
      ),
    () => {
      const which = r.pick(['file', 'diff-stats', 'info', 'files', 'changed-files', 'file-history']);
      const params: Record<string, string> = { [r.pick(['path', 'repoPath', 'repo_path'])]: outsideDirSpelling(r, ctx) };
      if (which === 'file' || which === 'file-history') params.file = SECRET_FILE;
      return outsideGet(`/repo/${which}`, params);
    },
    () => outsideGet('/repo/file', { path: work, file: escapingRelative(r, ctx) }),
    () => outsidePost('/repo/run-git', obj({ path: outsideDirSpelling(r, ctx), args: ['status'] })),
    // Inside the work tree, but with arguments that would make git run or write the canary.
    () => ({ ...outsidePost('/repo/run-git', obj({ path: work, args: hostileGitArgs(r, canary) })), outside: false, canary }),
  ]);
  return gen();
}

/** The `repo` tool asked about a directory outside every root (its result must be an error). */
export function containmentToolArgs(r: Rng, ctx: ContainmentCtx): Array<[string, J]> {
  return [
    ['action', r.pick(['status', 'prs', 'worktree_list'])],
    ['path', outsideDirSpelling(r, ctx)],
  ];
}

/**
 * A session directory the fuzzer may use: drawn values that would make the fixture's outside
 * directory (or an ancestor of it) a root are replaced by the work tree, so an answer about the
 * outside directory is a breach whatever else the fuzz created. tuicd inherits the fuzzer's cwd,
 * so relative values resolve the same on both sides.
 */
export function sessionCwd(value: J | undefined, ctx: ContainmentCtx): J | undefined {
  if (typeof value !== 'string') return value;
  const expanded = value === '~' || value.startsWith('~/') ? ctx.home + value.slice(1) : value;
  const dir = resolve(expanded);
  const covers = dir === '/' || `${ctx.outsideDir}/`.startsWith(`${dir}/`);
  return covers ? ctx.workDir : value;
}
