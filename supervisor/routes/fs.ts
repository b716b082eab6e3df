/**
 * The /fs routes. Every path a request names passes the root gate (fs/rootGate.ts): a repository
 * argument must be a root or inside one (a registered repository, one of its worktrees, a live
 * session's directory), a file in it stays inside it, and the absolute ("external") paths, transfer
 * sources, stat and terminal-path lookups are checked against every root; `..`, NUL, relative
 * paths, symlinks out and look-alike siblings are forbidden (403) before anything is read, written
 * or even looked at. Content search runs on the piscina pool.
 */
import { appendFile, copyFile, cp, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

import type { TObject, TSchema } from 'typebox';
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { defineRoute, type RouteDeclaration } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import { ContentSearchSchema, FileContentSchema, FsEntrySchema, GitignoreSchema, StatSchema, TerminalPathSchema, TransferSchema } from '../fs/fsSchemas.js';
import { containedIn, type RootGate } from '../fs/rootGate.js';
import { searchRegExp } from '../pool/poolTasks.js';
import type { WorkPool } from '../pool/workPool.js';
import { git } from '../repos/gitRunner.js';
import { hasDotDot, relativeFile, repoPathFrom } from '../repos/repoArgs.js';
import { boundedInt, flag, nonEmpty, OkAnswer, relativeFilePath, repoPathFields, stringList } from '../repos/repoSchemas.js';
import { failure } from './repo.js';

/** Remote clients get the standard 10 MB read cap, loopback editors 250 MB. */
export const READ_CAP_REMOTE_BYTES = 10 * 1024 * 1024;
export const READ_CAP_LOCAL_BYTES = 250 * 1024 * 1024;
const REPO_KEYS = ['repoPath', 'repo_path', 'path'] as const;
/** For the routes whose own `path` field names a file in the repository. */
const REPO_KEYS_BESIDE_PATH = ['repoPath', 'repo_path'] as const;
const MAX_TERMINAL_CANDIDATES = 1000;

/** An /fs route (tag fs). */
function fsRoute<P extends TObject | undefined = undefined, Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined>(
  decl: Omit<RouteDeclaration<P, Q, B>, 'tag'>,
): Route {
  return defineRoute<P, Q, B>({ ...decl, tag: 'fs' });
}

/** A path through the deny_unless_in_roots gate: checked there, so only its presence here. */
const gatedPath = (key: string, description: string) =>
  Type.String({
    minLength: 1,
    description: `${description} Absolute, inside a known repository (registered, a session's, or one of their worktrees); anything else is forbidden (403).`,
    errorMessage: `'${key}' is required (an absolute path)`,
  });

const forbidden = failure('The path leaves its repository, or every known one (`..`, NUL, a relative path, a symlink out).');
const readFailures = {
  403: forbidden,
  404: failure('No such file.'),
  413: failure("The file is over this listener's read cap."),
};

/** A file inside a repository ('' or absent: the repository itself): relative, then contained (symlinks included). */
function repoFile(repo: string, rel: string | undefined, key: string): string {
  return containedIn(repo, join(repo, rel ? relativeFile(rel, key) : ''), key);
}

/**
 * Files above this are read, decoded and JSON-encoded on a pool thread, which hands the encoded
 * bytes over without a copy: a 250 MB read on the loop would hold every stream for a second.
 */
const POOL_READ_MIN_BYTES = 1024 * 1024;

/** `{content, size}` for a file within `cap` bytes; not_found absent, invalid_input not a file, payload_too_large over the cap. */
async function readCapped(pool: WorkPool, path: string, cap: number): Promise<Reply> {
  const st = await stat(path).catch(() => null);
  if (!st) throw new ApiError('not_found', `no such file: ${quoteClientInput(path)}`);
  if (!st.isFile()) throw new ApiError('invalid_input', `not a file: ${quoteClientInput(path)}`);
  if (st.size > cap) throw new ApiError('payload_too_large', `file is ${st.size} bytes; this listener's read cap is ${cap} bytes`);
  if (st.size <= POOL_READ_MIN_BYTES) return json({ content: await readFile(path, 'utf8'), size: st.size });
  const read = await pool.readFileJson(path, cap);
  // It grew past the cap between the stat and the read.
  if ('over' in read) throw new ApiError('payload_too_large', `file is ${read.over} bytes; this listener's read cap is ${cap} bytes`);
  return { status: 200, headers: { 'Content-Type': 'application/json' }, body: read.json };
}

function editorCap(ctx: RequestContext): number {
  return ctx.isLoopback ? READ_CAP_LOCAL_BYTES : READ_CAP_REMOTE_BYTES;
}

function expandTilde(p: string): string {
  return p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;
}

/** `src/a.ts:12:3` → path, line, col (the forms compilers and grep print). */
function splitPosition(candidate: string): { path: string; line?: number; col?: number } {
  const m = /^(.*?)(?::(\d+))?(?::(\d+))?:?$/.exec(candidate);
  if (!m?.[1]) return { path: candidate };
  return { path: m[1], ...(m[2] ? { line: Number(m[2]) } : {}), ...(m[3] ? { col: Number(m[3]) } : {}) };
}

/** What a terminal path resolution answers for a candidate outside every root. */
const OUTSIDE = Symbol('outside');

/** `cwd` has passed the gate; a candidate leading outside every root is OUTSIDE, never looked at. */
async function resolveTerminalPath(gate: RootGate, cwd: string, candidate: string): Promise<Record<string, unknown> | null | typeof OUTSIDE> {
  if (candidate.includes('\0') || candidate.length > 4096) return null;
  const pos = splitPosition(candidate.trim());
  const full = resolve(cwd, expandTilde(pos.path));
  if (!gate.allows(full)) return OUTSIDE;
  const st = await stat(full).catch(() => null);
  if (!st) return null;
  return {
    absolute_path: full,
    is_directory: st.isDirectory(),
    ...(pos.line !== undefined ? { line: pos.line } : {}),
    ...(pos.col !== undefined ? { col: pos.col } : {}),
  };
}

/** An absolute path outside the gate (stat, transfer sources): traversal is forbidden, a relative path invalid. */
function absoluteArg(value: string, key: string, where: 'query' | 'body'): string {
  if (value.includes('\0') || hasDotDot(value)) throw new ApiError('forbidden', `Access denied: '${key}' contains '..' or NUL`);
  if (!isAbsolute(value)) throw new ApiError('invalid_input', `'${key}' must be an absolute path`, { extra: { field: key, in: where } });
  return value;
}

const RepoFileQuery = Type.Object({ ...repoPathFields(REPO_KEYS), file: relativeFilePath('file') });
const GatedPathQuery = Type.Object({ path: gatedPath('path', 'The file.') });
const content = Type.String({ description: 'The new content (UTF-8).', errorMessage: "'content' must be a string" });
const MoveBody = Type.Object({ ...repoPathFields(REPO_KEYS), from: relativeFilePath('from'), to: relativeFilePath('to') });
const AbsMoveBody = Type.Object({ from: gatedPath('from', 'The source.'), to: gatedPath('to', 'The destination.') });

export function fsRoutes(pool: WorkPool, gate: RootGate): Route[] {
  const moveOrCopy = (mode: 'rename' | 'copy') =>
    fsRoute({
      method: 'POST',
      pattern: `/fs/${mode}`,
      summary: mode === 'rename' ? 'Move or rename a file or directory within a repository' : 'Copy a file or directory within a repository',
      body: MoveBody,
      answers: { 200: OkAnswer, 403: forbidden, 404: failure('No such source.') },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body', REPO_KEYS);
        const from = repoFile(repo, body.from, 'from');
        const to = gate.writable(repoFile(repo, body.to, 'to'), 'to');
        if (mode === 'rename') gate.writable(from, 'from');
        if (from === repo || to === repo) throw new ApiError('forbidden', 'the repository root cannot be moved or overwritten');
        await transferOne(from, to, mode === 'rename' ? 'move' : 'copy');
        return json({ ok: true });
      },
    });
  const absMoveOrCopy = (mode: 'move' | 'copy') =>
    fsRoute({
      method: 'POST',
      pattern: `/fs/${mode}-abs`,
      summary:
        mode === 'move'
          ? 'Move a file or directory between absolute paths inside known repositories'
          : 'Copy a file or directory between absolute paths inside known repositories',
      body: AbsMoveBody,
      answers: { 200: OkAnswer, 403: forbidden, 404: failure('No such source.') },
      handler: async ({ body }) => {
        const from = gate.absolute(body.from, 'from');
        const to = gate.writable(gate.absolute(body.to, 'to'), 'to');
        if (mode === 'move') gate.writable(from, 'from');
        await transferOne(from, to, mode);
        return json({ ok: true });
      },
    });

  return [
    fsRoute({
      method: 'GET',
      pattern: '/fs/list',
      summary: "A repository directory's entries (not .git), directories first, with git's ignored flag",
      query: Type.Object({
        ...repoPathFields(REPO_KEYS),
        subdir: Type.Optional(Type.String({ description: 'A directory relative to the repository; empty or absent: its root.' })),
      }),
      answers: { 200: Type.Array(FsEntrySchema), 403: forbidden },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query', REPO_KEYS);
        const dir = repoFile(repo, query.subdir, 'subdir');
        const names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.name !== '.git');
        const rels = names.map((d) => relative(repo, join(dir, d.name)));
        // One `git check-ignore` for the whole directory, not one per entry.
        const ignored = new Set(
          rels.length === 0 ? [] : (await git(repo, ['check-ignore', '-z', '--stdin'], { input: rels.join('\0') }).catch(() => '')).split('\0').filter(Boolean),
        );
        const entries = await Promise.all(
          names.map(async (d, i) => {
            const st = await lstat(join(dir, d.name)).catch(() => null);
            return {
              name: d.name,
              path: rels[i],
              is_dir: d.isDirectory(),
              size: st?.size ?? 0,
              modified_at: st ? Math.floor(st.mtimeMs) : null,
              is_ignored: ignored.has(rels[i]!),
            };
          }),
        );
        entries.sort((a, b) => (a.is_dir === b.is_dir ? a.name.localeCompare(b.name) : a.is_dir ? -1 : 1));
        return json(entries);
      },
    }),
    fsRoute({
      method: 'GET',
      pattern: '/fs/search',
      summary: 'Files whose path matches a query (tracked, and untracked but not ignored)',
      query: Type.Object({
        ...repoPathFields(REPO_KEYS),
        query: nonEmpty('query', 'Looked for in the file paths.'),
        limit: Type.Optional(boundedInt('limit', 1, 1000, 'At most this many (default 50).')),
      }),
      answers: { 200: Type.Array(Type.String({ description: 'Relative to the repository.' })) },
      handler: async ({ query }) => json(await pool.searchFiles(repoPathFrom(gate, query, 'query', REPO_KEYS), query.query, query.limit ?? 50)),
    }),
    fsRoute({
      method: 'GET',
      pattern: '/fs/search-content',
      summary: "Lines matching a text or regular expression in the repository's files (.gitignore honoured, binaries skipped)",
      query: Type.Object({
        ...repoPathFields(REPO_KEYS),
        query: nonEmpty('query', 'The text, or a regular expression with `useRegex`.'),
        caseSensitive: Type.Optional(flag('caseSensitive', 'Default false.')),
        useRegex: Type.Optional(flag('useRegex', 'The query is a JavaScript regular expression (default false).')),
        wholeWord: Type.Optional(flag('wholeWord', 'Match whole words only (default false).')),
        limit: Type.Optional(boundedInt('limit', 1, 10_000, 'At most this many matches (default 200).')),
      }),
      answers: { 200: ContentSearchSchema },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query', REPO_KEYS);
        const q = { query: query.query, caseSensitive: query.caseSensitive ?? false, useRegex: query.useRegex ?? false, wholeWord: query.wholeWord ?? false };
        try {
          searchRegExp(q); // a bad regex is the caller's to fix, said here rather than from a worker
        } catch (err) {
          throw new ApiError('invalid_input', `invalid regular expression: ${(err as Error).message}`, { extra: { field: 'query', in: 'query' } });
        }
        return json(await pool.searchContent(repo, q, query.limit ?? 200));
      },
    }),
    fsRoute({
      method: 'GET',
      pattern: '/fs/read',
      summary: 'A file of a repository as text (10 MB cap)',
      query: RepoFileQuery,
      answers: { 200: FileContentSchema, ...readFailures },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query', REPO_KEYS);
        return readCapped(pool, repoFile(repo, query.file, 'file'), READ_CAP_REMOTE_BYTES);
      },
    }),
    fsRoute({
      method: 'GET',
      pattern: '/fs/read-editor',
      summary: 'A file of a repository as text, for an editor (250 MB cap on loopback, 10 MB for remote callers)',
      query: RepoFileQuery,
      answers: { 200: FileContentSchema, ...readFailures },
      handler: async ({ query }, ctx) => {
        const repo = repoPathFrom(gate, query, 'query', REPO_KEYS);
        return readCapped(pool, repoFile(repo, query.file, 'file'), editorCap(ctx));
      },
    }),
    fsRoute({
      method: 'GET',
      pattern: '/fs/read-external',
      summary: 'A file by absolute path inside a known repository, as text (10 MB cap)',
      query: GatedPathQuery,
      answers: { 200: FileContentSchema, ...readFailures },
      handler: async ({ query }) => readCapped(pool, gate.absolute(query.path, 'path'), READ_CAP_REMOTE_BYTES),
    }),
    fsRoute({
      method: 'GET',
      pattern: '/fs/read-editor-external',
      summary: 'A file by absolute path inside a known repository, for an editor (250 MB cap on loopback, 10 MB for remote callers)',
      query: GatedPathQuery,
      answers: { 200: FileContentSchema, ...readFailures },
      handler: async ({ query }, ctx) => readCapped(pool, gate.absolute(query.path, 'path'), editorCap(ctx)),
    }),
    fsRoute({
      method: 'POST',
      pattern: '/fs/write',
      summary: 'Write a file of a repository (its directories are created)',
      body: Type.Object({ ...repoPathFields(REPO_KEYS), file: relativeFilePath('file'), content }),
      answers: { 200: OkAnswer, 403: forbidden },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body', REPO_KEYS);
        const target = gate.writable(repoFile(repo, body.file, 'file'), 'file');
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, body.content);
        return json({ ok: true });
      },
    }),
    fsRoute({
      method: 'POST',
      pattern: '/fs/write-external',
      summary: 'Write a file by absolute path inside a known repository',
      body: Type.Object({ path: gatedPath('path', 'The file.'), content }),
      answers: { 200: OkAnswer, 403: forbidden },
      handler: async ({ body }) => {
        await writeFile(gate.writable(gate.absolute(body.path, 'path'), 'path'), body.content);
        return json({ ok: true });
      },
    }),
    fsRoute({
      method: 'POST',
      pattern: '/fs/mkdir',
      summary: 'Create a directory (and its parents) in a repository',
      body: Type.Object({ ...repoPathFields(REPO_KEYS), dir: relativeFilePath('dir') }),
      answers: { 200: OkAnswer, 403: forbidden },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body', REPO_KEYS);
        await mkdir(gate.writable(repoFile(repo, body.dir, 'dir'), 'dir'), { recursive: true });
        return json({ ok: true });
      },
    }),
    fsRoute({
      method: 'POST',
      pattern: '/fs/delete',
      summary: 'Delete a file or directory (recursively) of a repository; never the repository itself',
      body: Type.Object({ ...repoPathFields(REPO_KEYS_BESIDE_PATH), path: relativeFilePath('path') }),
      answers: { 200: OkAnswer, 403: forbidden, 404: failure('No such file or directory.') },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body', REPO_KEYS_BESIDE_PATH);
        const target = repoFile(repo, body.path, 'path');
        if (target === repo) throw new ApiError('forbidden', 'refusing to delete the repository root');
        gate.writable(target, 'path');
        const st = await lstat(target).catch(() => null);
        if (!st) throw new ApiError('not_found', `no such file or directory: ${quoteClientInput(body.path)}`);
        await rm(target, { recursive: st.isDirectory(), force: false });
        return json({ ok: true });
      },
    }),
    moveOrCopy('rename'),
    moveOrCopy('copy'),
    absMoveOrCopy('copy'),
    absMoveOrCopy('move'),
    fsRoute({
      method: 'POST',
      pattern: '/fs/transfer',
      summary: 'Move or copy files into a directory inside a known repository; each path succeeds or fails on its own',
      body: Type.Object({
        destDir: gatedPath('destDir', 'The directory they go into.'),
        mode: Type.Union([Type.Literal('move'), Type.Literal('copy')], { errorMessage: "'mode' must be move or copy" }),
        allowRecursive: Type.Optional(flag('allowRecursive', 'Directories too (default false).')),
        paths: stringList(
          'paths',
          'Absolute source paths inside a known repository, worktree or session directory; anything else (`..`, NUL, a symlink out) is forbidden (403) and nothing is transferred.',
        ),
      }),
      answers: { 200: TransferSchema, 403: forbidden },
      handler: async ({ body }) => {
        const destDir = gate.writable(gate.absolute(body.destDir, 'destDir'), 'destDir');
        // Every source passes the same gate as the destination: nothing outside a root is copied in or moved away.
        const sources = body.paths.map((p, i) => {
          const src = gate.contain(absoluteArg(p, `paths[${i}]`, 'body'), `paths[${i}]`);
          return body.mode === 'move' ? gate.writable(src, `paths[${i}]`) : src;
        });
        const moved: string[] = [];
        const errors: Array<{ path: string; error: string }> = [];
        for (const src of sources) {
          try {
            const st = await lstat(src);
            if (st.isDirectory() && body.allowRecursive !== true) throw new Error('is a directory (allowRecursive is false)');
            const to = join(destDir, basename(src));
            if (await lstat(to).catch(() => null)) throw new Error(`destination exists: ${to}`);
            await transferOne(src, to, body.mode);
            moved.push(to);
          } catch (err) {
            errors.push({ path: src, error: (err as Error).message });
          }
        }
        return json({ transferred: moved, errors });
      },
    }),
    fsRoute({
      method: 'POST',
      pattern: '/fs/gitignore',
      summary: "Add a pattern to the repository's .gitignore (once)",
      body: Type.Object({
        ...repoPathFields(REPO_KEYS),
        pattern: Type.String({
          minLength: 1,
          description: 'One line.',
          errorMessage: "'pattern' is required (a non-empty string)",
          allOf: [{ pattern: '^[^\\r\\n\\u0000]*$', errorMessage: "'pattern' must be one line" }],
        }),
      }),
      answers: { 200: GitignoreSchema },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body', REPO_KEYS);
        const pattern = body.pattern;
        const file = gate.writable(join(repo, '.gitignore'), '.gitignore');
        const existing = await readFile(file, 'utf8').catch(() => '');
        if (existing.split(/\r?\n/).includes(pattern)) return json({ ok: true, added: false });
        await appendFile(file, (existing === '' || existing.endsWith('\n') ? '' : '\n') + pattern + '\n');
        return json({ ok: true, added: true });
      },
    }),
    fsRoute({
      method: 'GET',
      pattern: '/fs/stat',
      summary: 'Whether an absolute path inside a known repository, worktree or session directory exists, and its kind, size and modification time',
      query: Type.Object({ path: nonEmpty('path', 'Absolute, inside a root; outside, `..` and NUL are forbidden (403).') }),
      answers: { 200: StatSchema, 403: forbidden },
      handler: async ({ query }) => {
        // Only inside a root: outside, nothing is said about the path (not even whether it exists).
        const st = await stat(gate.contain(absoluteArg(query.path, 'path', 'query'), 'path')).catch(() => null);
        return json(
          st
            ? { exists: true, is_dir: st.isDirectory(), size: st.size, modified_at: Math.floor(st.mtimeMs) }
            : { exists: false, is_dir: false, size: 0, modified_at: null },
        );
      },
    }),
    fsRoute({
      method: 'GET',
      pattern: '/fs/resolve-terminal-path',
      summary: 'A path printed in a terminal (`src/a.ts:12:3`) resolved against a directory, or null when nothing is there',
      query: Type.Object({
        cwd: nonEmpty('cwd', 'The directory the path is relative to (`~` expanded), inside a root (403 otherwise).'),
        candidate: nonEmpty('candidate', 'The text seen; one leading outside every root is 403.'),
      }),
      answers: { 200: Type.Union([TerminalPathSchema, Type.Null()]), 403: forbidden },
      handler: async ({ query }) => {
        const result = await resolveTerminalPath(gate, gate.absolute(expandTilde(query.cwd), 'cwd'), query.candidate);
        if (result === OUTSIDE)
          throw new ApiError('forbidden', "Access denied: 'candidate' leads outside every registered repository, worktree and session directory");
        return result === null ? { status: 200, headers: { 'Content-Type': 'application/json' }, body: 'null' } : json(result);
      },
    }),
    fsRoute({
      method: 'POST',
      pattern: '/fs/resolve-terminal-paths',
      summary: 'Several terminal paths resolved at once, in order (null where nothing is there)',
      body: Type.Object({
        cwd: nonEmpty(
          'cwd',
          'The directory the paths are relative to (`~` expanded), inside a root (403 otherwise); a candidate leading outside every root is null.',
        ),
        candidates: Type.Array(Type.String({ errorMessage: `'candidates' must be an array of at most ${MAX_TERMINAL_CANDIDATES} strings` }), {
          maxItems: MAX_TERMINAL_CANDIDATES,
          errorMessage: `'candidates' must be an array of at most ${MAX_TERMINAL_CANDIDATES} strings`,
        }),
      }),
      answers: { 200: Type.Array(Type.Union([TerminalPathSchema, Type.Null()])), 403: forbidden },
      handler: async ({ body }) => {
        const cwd = gate.absolute(expandTilde(body.cwd), 'cwd');
        // A candidate leading outside every root is null, as if nothing were there.
        const results = await Promise.all(body.candidates.map((c) => resolveTerminalPath(gate, cwd, c)));
        return json(results.map((r) => (r === OUTSIDE ? null : r)));
      },
    }),
    fsRoute({
      method: 'POST',
      pattern: '/fs/warm-index',
      summary: "Bring a repository's file tree into the page cache for the searches that follow (answers at once)",
      body: Type.Object(repoPathFields(REPO_KEYS)),
      answers: { 200: OkAnswer },
      handler: ({ body }) => {
        // Listing once on the pool brings the tree into the page cache for the searches that follow.
        void pool.listFiles(repoPathFrom(gate, body, 'body', REPO_KEYS)).catch(() => undefined);
        return json({ ok: true });
      },
    }),
  ];
}

async function transferOne(from: string, to: string, mode: 'move' | 'copy'): Promise<void> {
  const st = await lstat(from).catch(() => null);
  if (!st) throw new ApiError('not_found', `no such file or directory: ${quoteClientInput(from)}`);
  await mkdir(dirname(to), { recursive: true });
  if (mode === 'move') await rename(from, to);
  else if (st.isDirectory()) await cp(from, to, { recursive: true, errorOnExist: true, force: false });
  else await copyFile(from, to);
}
