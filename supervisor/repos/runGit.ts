/**
 * `/repo/run-git`'s allow-list: which git subcommands run, with which options, parsed the way git
 * parses them, so nothing a client sends can make git write a file or run a program.
 *
 * - The subcommand is the first argument and must be one of SUBCOMMANDS by its real name: no global
 *   option (`-c`, `-C`, `--git-dir`, `--exec-path`, …) can come before it, and an alias is never
 *   resolved (git runs a builtin of that name before it looks at aliases).
 * - Up to `--`, every argument that starts with `-` must be an allowed option of that subcommand
 *   (a value given separately that starts with `-` is checked as an option too: attach it instead).
 *   A long option may be abbreviated as git allows, to a unique prefix of an allowed option; a
 *   prefix of a refused option (REFUSED_LONG) or of several allowed ones is refused, and what passes
 *   is handed to git under its full name, so git's own abbreviation never chooses. Short options
 *   may be grouped (`-in`); a letter that takes a value ends the group with it (`-n5`, `-U3`).
 * - git runs with a scrubbed environment (runGitEnv): no GIT_* or pager variable of ours, no system
 *   or global config, `cat` as the pager, no external diff; textconv and external diff drivers are
 *   switched off, and so are the config keys that run programs on reads (fsmonitor, gpg).
 */
import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';

/** A subcommand's allowed options: long names (no dashes) and short letters; `name=` takes a value. */
interface Spec {
  readonly long: readonly string[];
  /** Short letters; `x=` takes a value (the rest of the argument, or the next one). */
  readonly short: readonly string[];
  /** `-<number>` (log -3, grep -2). */
  readonly digits?: boolean;
  /** Options run-git always adds right after the subcommand. */
  readonly forced?: readonly string[];
}

/** Never allowed, nor any prefix of them: they write files, run programs, read outside, or re-point git. */
export const REFUSED_LONG = [
  'output',
  'output-directory',
  'open-files-in-pager',
  'ext-diff',
  'textconv',
  'exec-path',
  'exec',
  'git-dir',
  'work-tree',
  'config-env',
  'config',
  'namespace',
  'super-prefix',
  'upload-pack',
  'receive-pack',
  'contents',
  'no-index',
  'ignore-revs-file',
  'orderfile',
  'exclude-from',
  'resolve-git-dir',
  'file',
  'filters',
  'paginate',
  'pager',
  'ext-grep',
  'stdin',
  'batch',
  'batch-check',
  'batch-command',
  'show-signature',
] as const;

const DIFF_LONG = [
  'patch',
  'no-patch',
  'unified',
  'raw',
  'patch-with-raw',
  'patch-with-stat',
  'minimal',
  'patience',
  'histogram',
  'diff-algorithm',
  'anchored',
  'stat',
  'stat-width',
  'stat-name-width',
  'stat-graph-width',
  'stat-count',
  'numstat',
  'shortstat',
  'dirstat',
  'cumulative',
  'summary',
  'compact-summary',
  'name-only',
  'name-status',
  'submodule',
  'color',
  'no-color',
  'color-moved',
  'color-words',
  'word-diff',
  'word-diff-regex',
  'no-renames',
  'find-renames',
  'find-copies',
  'find-copies-harder',
  'rename-empty',
  'no-rename-empty',
  'irreversible-delete',
  'break-rewrites',
  'diff-filter',
  'check',
  'full-index',
  'binary',
  'abbrev',
  'text',
  'ignore-cr-at-eol',
  'ignore-space-at-eol',
  'ignore-space-change',
  'ignore-all-space',
  'ignore-blank-lines',
  'ignore-matching-lines',
  'inter-hunk-context',
  'function-context',
  'exit-code',
  'quiet',
  'no-ext-diff',
  'no-textconv',
  'src-prefix',
  'dst-prefix',
  'no-prefix',
  'relative',
  'no-relative',
  'indent-heuristic',
  'no-indent-heuristic',
  'ignore-submodules',
  'pickaxe-all',
  'pickaxe-regex',
];
const DIFF_SHORT = ['p', 'u', 'U=', 's', 'z', 'R', 'a', 'b', 'w', 'W', 'M=', 'B=', 'D', 'l=', 'S=', 'G='];

const LOG_LONG = [
  'oneline',
  'format',
  'pretty',
  'graph',
  'all',
  'branches',
  'tags',
  'remotes',
  'max-count',
  'skip',
  'since',
  'until',
  'after',
  'before',
  'author',
  'committer',
  'grep',
  'invert-grep',
  'regexp-ignore-case',
  'extended-regexp',
  'fixed-strings',
  'perl-regexp',
  'basic-regexp',
  'all-match',
  'merges',
  'no-merges',
  'min-parents',
  'max-parents',
  'first-parent',
  'reverse',
  'date',
  'relative-date',
  'decorate',
  'no-decorate',
  'follow',
  'left-right',
  'left-only',
  'right-only',
  'cherry',
  'cherry-pick',
  'cherry-mark',
  'topo-order',
  'date-order',
  'author-date-order',
  'abbrev-commit',
  'no-abbrev-commit',
  'parents',
  'children',
  'boundary',
  'simplify-by-decoration',
  'ancestry-path',
  'full-history',
  'dense',
  'sparse',
  'simplify-merges',
  'source',
  'no-walk',
  'do-walk',
  'merge',
  'log-size',
  'encoding',
  'expand-tabs',
  'no-expand-tabs',
  'notes',
  'no-notes',
  'mailmap',
  'no-mailmap',
  'use-mailmap',
  'full-diff',
  'diff-merges',
  'no-diff-merges',
  'combined-all-paths',
  'cc',
];
const LOG_SHORT = ['n=', 'i', 'E', 'F', 'P', 'g', 'L=', 'm'];
const NO_DRIVERS = ['--no-ext-diff', '--no-textconv'];

const log: Spec = { long: [...LOG_LONG, ...DIFF_LONG], short: [...LOG_SHORT, ...DIFF_SHORT], digits: true, forced: NO_DRIVERS };

/** The subcommands run-git runs, each only reading the repository, with the options it takes. */
export const SUBCOMMANDS: Readonly<Record<string, Spec>> = {
  status: {
    long: [
      'short',
      'branch',
      'porcelain',
      'long',
      'verbose',
      'untracked-files',
      'ignore-submodules',
      'ignored',
      'null',
      'column',
      'no-column',
      'ahead-behind',
      'no-ahead-behind',
      'renames',
      'no-renames',
      'find-renames',
      'show-stash',
    ],
    short: ['s', 'b', 'v', 'u=', 'z'],
  },
  log,
  diff: { long: [...DIFF_LONG, 'cached', 'staged', 'merge-base'], short: DIFF_SHORT, forced: NO_DRIVERS },
  show: log,
  'rev-parse': {
    long: [
      'abbrev-ref',
      'symbolic',
      'symbolic-full-name',
      'short',
      'verify',
      'quiet',
      'show-toplevel',
      'show-prefix',
      'show-cdup',
      'git-common-dir',
      'absolute-git-dir',
      'is-inside-work-tree',
      'is-inside-git-dir',
      'is-bare-repository',
      'is-shallow-repository',
      'all',
      'branches',
      'tags',
      'remotes',
      'since',
      'until',
      'default',
      'revs-only',
      'no-revs',
      'flags',
      'no-flags',
      'sq',
      'not',
      'path-format',
      'show-object-format',
    ],
    short: ['q'],
  },
  'ls-files': {
    long: [
      'cached',
      'deleted',
      'modified',
      'others',
      'ignored',
      'stage',
      'unmerged',
      'killed',
      'directory',
      'no-empty-directory',
      'exclude',
      'exclude-standard',
      'error-unmatch',
      'full-name',
      'recurse-submodules',
      'abbrev',
      'debug',
      'eol',
      'deduplicate',
      'format',
    ],
    short: ['d', 'm', 'o', 'i', 's', 'u', 'k', 'z', 't', 'v', 'x='],
  },
  'ls-tree': { long: ['long', 'name-only', 'name-status', 'object-only', 'full-name', 'full-tree', 'abbrev', 'format'], short: ['d', 'r', 't', 'l', 'z'] },
  blame: {
    long: [
      'porcelain',
      'line-porcelain',
      'incremental',
      'root',
      'show-stats',
      'show-name',
      'show-number',
      'show-email',
      'abbrev',
      'date',
      'reverse',
      'first-parent',
      'since',
      'minimal',
      'ignore-rev',
      'color-lines',
      'color-by-age',
      'encoding',
      'no-textconv',
    ],
    short: ['L=', 'l', 't', 's', 'n', 'e', 'w', 'f', 'p', 'b', 'M='],
    forced: ['--no-textconv'],
  },
  shortlog: { long: ['summary', 'numbered', 'email', 'committer', 'group', 'format', ...LOG_LONG], short: ['s', 'n', 'e'] },
  describe: {
    long: ['all', 'tags', 'contains', 'abbrev', 'candidates', 'exact-match', 'debug', 'long', 'match', 'exclude', 'always', 'first-parent', 'dirty', 'broken'],
    short: [],
  },
  'for-each-ref': {
    long: [
      'count',
      'sort',
      'format',
      'color',
      'shell',
      'perl',
      'python',
      'tcl',
      'points-at',
      'merged',
      'no-merged',
      'contains',
      'no-contains',
      'ignore-case',
      'omit-empty',
      'exclude',
    ],
    short: ['s', 'p'],
  },
  'merge-base': { long: ['all', 'octopus', 'independent', 'is-ancestor', 'fork-point'], short: ['a'] },
  'rev-list': { long: [...LOG_LONG, 'count', 'objects', 'objects-edge', 'header', 'timestamp'], short: ['n=', 'i', 'E', 'F', 'P', 'g'], digits: true },
  'cat-file': { long: ['allow-unknown-type', 'mailmap', 'no-mailmap', 'use-mailmap'], short: ['t', 's', 'e', 'p'] },
  grep: {
    long: [
      'cached',
      'untracked',
      'no-exclude-standard',
      'exclude-standard',
      'recurse-submodules',
      'text',
      'ignore-case',
      'invert-match',
      'word-regexp',
      'line-number',
      'column',
      'full-name',
      'name-only',
      'files-with-matches',
      'files-without-match',
      'count',
      'color',
      'no-color',
      'break',
      'heading',
      'show-function',
      'function-context',
      'context',
      'after-context',
      'before-context',
      'threads',
      'null',
      'only-matching',
      'quiet',
      'and',
      'or',
      'not',
      'all-match',
      'extended-regexp',
      'basic-regexp',
      'fixed-strings',
      'perl-regexp',
      'max-depth',
      'max-count',
      'no-recursive',
      'recursive',
    ],
    short: ['i', 'v', 'w', 'n', 'l', 'L', 'h', 'H', 'z', 'o', 'q', 'E', 'G', 'F', 'P', 'I', 'a', 'r', 'W', 'e=', 'A=', 'B=', 'm='],
    digits: true,
  },
  'show-ref': { long: ['heads', 'tags', 'head', 'verify', 'dereference', 'hash', 'abbrev', 'quiet', 'exists', 'branches'], short: ['d', 's', 'q'] },
  'name-rev': { long: ['name-only', 'tags', 'refs', 'exclude', 'all', 'always', 'no-undefined'], short: [] },
  'diff-tree': {
    long: [...DIFF_LONG, 'root', 'merge-base', 'no-commit-id', 'pretty', 'format', 'encoding', 'always', 'cc', 'combined-all-paths'],
    short: [...DIFF_SHORT, 'r', 't', 'm', 'v'],
    forced: NO_DRIVERS,
  },
  'count-objects': { long: ['verbose', 'human-readable'], short: ['v', 'H'] },
};

export const RUN_GIT_ALLOWED = Object.keys(SUBCOMMANDS);

/**
 * The environment run-git's git gets: ours without any GIT_* variable or pager setting (GIT_DIR,
 * GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF and the like would re-point or re-program it), and
 * neither system nor global config.
 */
export function runGitEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!k.startsWith('GIT_') && k !== 'PAGER' && k !== 'LESS' && k !== 'LESSOPEN') env[k] = v;
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_PAGER: 'cat', PAGER: 'cat' };
}

/** Config run-git always sets on the command line: nothing that runs a program on a read. */
export const RUN_GIT_CONFIG = ['-c', 'core.fsmonitor=false', '-c', 'core.pager=cat', '-c', 'gpg.program=false'];

const refuse = (what: string) => new ApiError('invalid_input', what, { extra: { field: 'args', in: 'body' } });

/** A long option's full allowed name, or a refusal: exact, else the one allowed name it uniquely abbreviates. */
function longName(spec: Spec, arg: string): string {
  const eq = arg.indexOf('=');
  const name = arg.slice(2, eq === -1 ? undefined : eq);
  const value = eq === -1 ? '' : arg.slice(eq);
  if (name === '') throw refuse(`git option ${quoteClientInput(arg)} is not allowed through run-git`);
  if (spec.long.includes(name) && !(REFUSED_LONG as readonly string[]).includes(name)) return `--${name}${value}`;
  const refused = REFUSED_LONG.find((r) => r.startsWith(name));
  if (refused !== undefined) throw refuse(`git option ${quoteClientInput(arg)} is not allowed through run-git (it is, or abbreviates, --${refused})`);
  const candidates = spec.long.filter((l) => l.startsWith(name));
  if (candidates.length === 0) throw refuse(`git option ${quoteClientInput(arg)} is not allowed through run-git`);
  if (candidates.length > 1) throw refuse(`git option ${quoteClientInput(arg)} is ambiguous (${candidates.map((c) => `--${c}`).join(', ')}); spell it out`);
  return `--${candidates[0]}${value}`;
}

/** A group of short options (`-in`, `-n5`); returns whether the last letter takes the next argument as its value. */
function checkShort(spec: Spec, arg: string): boolean {
  if (spec.digits === true && /^-\d+$/.test(arg)) return false;
  for (let i = 1; i < arg.length; i++) {
    const letter = arg[i]!;
    if (spec.short.includes(`${letter}=`)) return i === arg.length - 1;
    if (!spec.short.includes(letter)) throw refuse(`git option -${letter} (in ${quoteClientInput(arg)}) is not allowed through run-git`);
  }
  return false;
}

/** The arguments git will run (global config first), or invalid_input naming what is refused. */
export function checkRunGitArgs(args: readonly string[]): string[] {
  const sub = args[0]!;
  const spec = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (spec === undefined)
    throw refuse(`git subcommand ${quoteClientInput(sub)} is not allowed; allowed (by their real names, no aliases): ${RUN_GIT_ALLOWED.join(', ')}`);
  const out: string[] = [];
  let i = 1;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (arg.includes('\0')) throw refuse('a git argument contains a NUL byte');
    if (!arg.startsWith('-') || arg === '-') {
      out.push(arg);
      continue;
    }
    if (arg.startsWith('--')) {
      out.push(longName(spec, arg));
      continue;
    }
    const takesNext = checkShort(spec, arg);
    out.push(arg);
    // A separate value is passed as it is unless it looks like an option: then it is checked as one.
    if (takesNext && i + 1 < args.length && !args[i + 1]!.startsWith('-')) out.push(args[++i]!);
  }
  return [...RUN_GIT_CONFIG, sub, ...(spec.forced ?? []), ...out, ...args.slice(i)];
}
