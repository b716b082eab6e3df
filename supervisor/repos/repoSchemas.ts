/**
 * The wire shapes of the repository routes (/repo, /worktrees, /config/repo*): the argument types
 * they share, and one schema per answer. A refusal keeps the words these routes have always used.
 */
import { type TOptional, type TSchema, type TString, Type } from 'typebox';

import { MAX_PATH_CHARS } from './repoArgs.js';

/** A non-empty string; a wrong one is refused as `'<key>' is required (a non-empty string)`. */
export function nonEmpty(key: string, description?: string): TString {
  return Type.String({ minLength: 1, errorMessage: `'${key}' is required (a non-empty string)`, ...(description ? { description } : {}) });
}

/** An absolute path (at most 4096 characters); what it must point to is the route's to check. */
export function absolutePath(key: string, description: string): TString {
  return Type.String({
    description,
    allOf: [
      { pattern: '^/', errorMessage: `'${key}' must be an absolute path, got {quoted}` },
      { maxLength: MAX_PATH_CHARS, errorMessage: `'${key}' must be at most ${MAX_PATH_CHARS} characters` },
    ],
  });
}

/**
 * The fields a repository path may arrive under (`path`, `repoPath`, `repo_path`): each optional to
 * the schema; the route requires the first present (repoArgs.repoPathFrom) and checks it is a directory.
 */
export function repoPathFields<K extends string>(keys: readonly K[]): Record<K, TOptional<TString>> {
  const others = (k: string) =>
    keys
      .filter((o) => o !== k)
      .map((o) => `\`${o}\``)
      .join(', ');
  const out = {} as Record<K, TOptional<TString>>;
  for (const k of keys)
    out[k] = Type.Optional(
      absolutePath(
        k,
        `The repository (an existing directory), absolute. One of ${[`\`${k}\``, others(k)].filter(Boolean).join(', ')} is required; the first present wins.`,
      ),
    );
  return out;
}

/** A repository-relative file; `..`, NUL and absolute paths are refused (403) by the route. */
export function relativeFilePath(key: string): TString {
  return nonEmpty(key, 'A path relative to the repository; `..`, NUL and absolute paths are refused (403).');
}

/** A git revision or branch the caller names: passed to git as it is, so it must not look like an option. */
export function gitRef(key: string, description: string, options: { nonEmpty?: boolean } = {}): TString {
  const notOption = { pattern: '^(?!-)', errorMessage: `'${key}' must not start with '-'` };
  if (!options.nonEmpty) return Type.String({ ...notOption, description });
  return Type.String({ minLength: 1, errorMessage: `'${key}' is required (a non-empty string)`, allOf: [notOption], description });
}

/** An integer in `min..max` from a query string (default in the description). */
export function boundedInt(key: string, min: number, max: number, description: string) {
  return Type.Integer({ minimum: min, maximum: max, description, errorMessage: `'${key}' must be an integer between ${min} and ${max}, got {quoted}` });
}

/** true/false (a query string also takes 1/0). */
export function flag(key: string, description: string) {
  return Type.Boolean({ description, errorMessage: `'${key}' must be true or false, got {quoted}` });
}

/** A list of non-empty strings. */
export function stringList(key: string, description: string, options: { maxItems?: number; items?: TString } = {}) {
  const items = options.items ?? Type.String({ minLength: 1, errorMessage: `'${key}' must be an array of non-empty strings` });
  return Type.Array(items, {
    description,
    errorMessage: `'${key}' must be an array of non-empty strings`,
    ...(options.maxItems === undefined ? {} : { allOf: [{ maxItems: options.maxItems, errorMessage: `at most ${options.maxItems} ${key} per batch` }] }),
  });
}

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const count = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });

export const OkAnswer = Type.Object({ ok: Type.Literal(true) });

export const RepoInfoSchema = Type.Object({
  path: Type.String({ description: "The repository's top level (the path asked for when it is not in one)." }),
  name: Type.String(),
  initials: Type.String(),
  branch: Nullable(Type.String({ description: 'null when HEAD is detached or the path is not a repository.' })),
  status: Type.Union([Type.Literal('clean'), Type.Literal('dirty'), Type.Literal('merge'), Type.Literal('conflict'), Type.Literal('not-git')]),
  is_git_repo: Type.Boolean(),
});

export const DiffStatsSchema = Type.Object({ additions: count(), deletions: count() });

export const ChangedFileSchema = Type.Object({
  path: Type.String(),
  status: Type.Union([Type.Literal('untracked'), Type.Literal('deleted'), Type.Literal('added'), Type.Literal('renamed'), Type.Literal('modified')]),
  additions: count('Lines added; an untracked text file counts all its lines.'),
  deletions: count(),
});

export const BranchSchema = Type.Object({
  name: Type.String(),
  is_remote: Type.Boolean(),
  is_current: Type.Boolean(),
  sha: Type.String(),
  last_commit_ts: Type.Integer({ description: 'Committer time, Unix seconds.' }),
  upstream: Nullable(Type.String()),
});

export const CommitEntrySchema = Type.Object({
  sha: Type.String(),
  short_sha: Type.String(),
  author: Type.String(),
  email: Type.String(),
  timestamp: Type.Integer({ description: 'Committer time, Unix seconds.' }),
  subject: Type.String(),
});

const tracking = {
  branch: Nullable(Type.String({ description: 'null on a detached HEAD.' })),
  upstream: Nullable(Type.String({ description: 'The upstream branch, or null when none is set.' })),
  ahead: count(),
  behind: count(),
};

export const SummarySchema = Type.Object({
  ...tracking,
  changed_files: count(),
  additions: count(),
  deletions: count(),
  last_commit: Nullable(CommitEntrySchema),
});

export const StructureSchema = Type.Object({
  worktree_paths: Type.Record(Type.String(), Type.String(), { description: 'Branch → checkout path, for every checkout on a branch.' }),
  merged_branches: Type.Array(Type.String()),
});

const pathStatus = Type.Array(Type.Object({ path: Type.String(), status: Type.String({ description: 'The porcelain status letters.' }) }));

export const WorkingTreeStatusSchema = Type.Object({
  ...tracking,
  staged: pathStatus,
  unstaged: pathStatus,
  untracked: Type.Array(Type.String()),
});

export const BatchStatsSchema = Type.Object({
  diff_stats: Type.Record(Type.String(), Nullable(DiffStatsSchema)),
  last_commit_ts: Type.Record(Type.String(), Nullable(Type.Integer())),
  workspace_statuses: Type.Record(Type.String(), Type.Union([Type.Literal('clean'), Type.Literal('dirty'), Type.Literal('error')])),
  errors: Type.Record(Type.String(), Type.String(), { description: 'Why a checkout is `error`.' }),
});

export const RunGitAnswer = Type.Object({
  exit_code: Type.Integer(),
  stdout: Type.String(),
  stderr: Type.String(),
});

export const BlameLineSchema = Type.Object({
  line: Type.Integer({ minimum: 1 }),
  sha: Type.String(),
  author: Type.String(),
  timestamp: Type.Integer(),
  summary: Type.String(),
  content: Type.String(),
});

export const StashEntrySchema = Type.Object({
  index: Type.Integer(),
  ref: Type.String({ description: '`stash@{n}`.' }),
  message: Type.String(),
  timestamp: Type.Integer(),
  branch: Nullable(Type.String()),
});

export const PanelContextSchema = Type.Object({
  ...tracking,
  staged_count: count(),
  unstaged_count: count(),
  untracked_count: count(),
  stash_count: count(),
  last_commit: Nullable(Type.Object({ sha: Type.String(), subject: Type.String(), timestamp: Type.Integer() })),
  is_main_branch: Type.Boolean(),
});

export const OrphanWorktreeSchema = Type.Object({ path: Type.String(), branch: Nullable(Type.String()), head: Nullable(Type.String()) });

/** A per-domain config file (repositories.json, repo-settings.json, repo-defaults.json): the client's JSON object. */
export const ConfigFileSchema = Type.Record(Type.String(), Type.Unknown(), {
  description: "The file's JSON object as the client saved it; `{}` when there is none.",
});

/** The body of PUT /config/<file>: any JSON object, the file's new content. */
export function configFileBody(fileName: string) {
  return Type.Record(Type.String(), Type.Unknown(), { description: `The new content of ${fileName}.`, errorMessage: `${fileName} must be a JSON object` });
}

/** repositories.json: `repos` keyed by absolute path (`{repos: {<path>: {...}}}`), or a list of paths or `{path}` objects. */
export const RepositoriesBody = Type.Object(
  {
    repos: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())], {
        description: 'The registered repositories: an object keyed by absolute path, or an array of paths (or `{path}` objects).',
        errorMessage: "'repos' must be an object keyed by repository path, or an array of paths",
      }),
    ),
  },
  { description: 'The new content of repositories.json.', errorMessage: 'repositories.json must be a JSON object' },
);
