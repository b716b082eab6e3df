/**
 * The /fs routes of REFERENCE §1.10. Repository-relative routes keep every path inside their
 * repository; the absolute ("external") routes pass the deny_unless_in_roots gate (fs/rootGate.ts)
 * against the known repositories, so `..`, NUL, relative paths, symlinks out and look-alike siblings
 * are a 403 before anything is read or written. Content search runs on the piscina pool.
 */
import { appendFile, copyFile, cp, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Handler, HttpMethod, Reply, RequestContext, Route } from '../http/types.js';
import { isPlainObject } from '../config/merge.js';
import type { WorkPool } from '../pool/workPool.js';
import { searchRegExp } from '../pool/poolTasks.js';
import { git } from '../repos/gitRunner.js';
import { boolArg, hasDotDot, intArg, relativeFileArg, repoPathFrom, stringArg, stringListArg } from '../repos/repoArgs.js';
import { containedPath, denyUnlessInRoots } from '../fs/rootGate.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';

/** Spec Security Model: remote clients get the standard 10 MB read cap, loopback editors 250 MB. */
export const READ_CAP_REMOTE_BYTES = 10 * 1024 * 1024;
export const READ_CAP_LOCAL_BYTES = 250 * 1024 * 1024;
const REPO_KEYS = ['repoPath', 'repo_path', 'path'] as const;

type Body = Record<string, unknown>;

function bodyOf(ctx: RequestContext): Body {
  const body = parseJsonBody(ctx);
  if (!isPlainObject(body)) throw new HttpError(400, 'request body must be a JSON object');
  return body as Body;
}

/** A file inside a repository: validated as relative, then contained (symlinks included). */
async function repoFile(repo: string, value: unknown, key: string): Promise<string> {
  const rel = value === '' || value === undefined || value === null ? '' : relativeFileArg(value, key);
  return containedPath([repo], join(repo, rel));
}

/**
 * Files above this are read, decoded and JSON-encoded on a pool thread, which hands the encoded
 * bytes over without a copy: a 250 MB read on the loop would hold every stream for a second.
 */
const POOL_READ_MIN_BYTES = 1024 * 1024;

/** `{content, size}` for a file within `cap` bytes; 404 absent, 400 not a file, 413 over the cap. */
async function readCapped(pool: WorkPool, path: string, cap: number): Promise<Reply> {
  const st = await stat(path).catch(() => null);
  if (!st) throw new HttpError(404, `no such file: ${quoteClientInput(path)}`);
  if (!st.isFile()) throw new HttpError(400, `not a file: ${quoteClientInput(path)}`);
  if (st.size > cap) throw new HttpError(413, `file is ${st.size} bytes; this listener's read cap is ${cap} bytes`);
  if (st.size <= POOL_READ_MIN_BYTES) return json({ content: await readFile(path, 'utf8'), size: st.size });
  const read = await pool.readFileJson(path, cap);
  // It grew past the cap between the stat and the read.
  if ('over' in read) throw new HttpError(413, `file is ${read.over} bytes; this listener's read cap is ${cap} bytes`);
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

async function resolveTerminalPath(cwd: string, candidate: string): Promise<Record<string, unknown> | null> {
  if (candidate.includes('\0') || candidate.length > 4096) return null;
  const pos = splitPosition(candidate.trim());
  const full = resolve(expandTilde(cwd), expandTilde(pos.path));
  const st = await stat(full).catch(() => null);
  if (!st) return null;
  return {
    absolute_path: full,
    is_directory: st.isDirectory(),
    ...(pos.line !== undefined ? { line: pos.line } : {}),
    ...(pos.col !== undefined ? { col: pos.col } : {}),
  };
}

function absoluteArg(value: unknown, key: string): string {
  const s = stringArg(value, key);
  if (s.includes('\0') || hasDotDot(s)) throw new HttpError(403, `Access denied: '${key}' contains '..' or NUL`);
  if (!isAbsolute(s)) throw new HttpError(400, `'${key}' must be an absolute path`);
  return s;
}

export function fsRoutes(pool: WorkPool, roots: () => readonly string[]): Route[] {
  const routes: Route[] = [];
  const add = (method: HttpMethod, pattern: string, handler: Handler) => routes.push({ method, pattern, handler });
  const queryRepo = (ctx: RequestContext) => repoPathFrom(ctx.query, REPO_KEYS);
  const bodyRepo = (body: Body) => repoPathFrom(body, REPO_KEYS);

  add('GET', '/fs/list', async (ctx) => {
    const repo = queryRepo(ctx);
    const dir = await repoFile(repo, ctx.query.get('subdir'), 'subdir');
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
  });
  add('GET', '/fs/search', async (ctx) => {
    const repo = queryRepo(ctx);
    return json(await pool.searchFiles(repo, stringArg(ctx.query.get('query'), 'query'), intArg(ctx.query.get('limit'), 'limit', 50, 1, 1000)));
  });
  add('GET', '/fs/search-content', async (ctx) => {
    const repo = queryRepo(ctx);
    const q = {
      query: stringArg(ctx.query.get('query'), 'query'),
      caseSensitive: boolArg(ctx.query.get('caseSensitive'), 'caseSensitive', false),
      useRegex: boolArg(ctx.query.get('useRegex'), 'useRegex', false),
      wholeWord: boolArg(ctx.query.get('wholeWord'), 'wholeWord', false),
    };
    try {
      searchRegExp(q); // a bad regex is the caller's 400, said here rather than from a worker
    } catch (err) {
      throw new HttpError(400, `invalid regular expression: ${(err as Error).message}`);
    }
    return json(await pool.searchContent(repo, q, intArg(ctx.query.get('limit'), 'limit', 200, 1, 10_000)));
  });
  add('GET', '/fs/read', async (ctx) => {
    const repo = queryRepo(ctx);
    return readCapped(pool, await repoFile(repo, stringArg(ctx.query.get('file'), 'file'), 'file'), READ_CAP_REMOTE_BYTES);
  });
  add('GET', '/fs/read-editor', async (ctx) => {
    const repo = queryRepo(ctx);
    return readCapped(pool, await repoFile(repo, stringArg(ctx.query.get('file'), 'file'), 'file'), editorCap(ctx));
  });
  add('GET', '/fs/read-external', async (ctx) => readCapped(pool, await denyUnlessInRoots(ctx.query.get('path'), 'path', roots()), READ_CAP_REMOTE_BYTES));
  add('GET', '/fs/read-editor-external', async (ctx) => readCapped(pool, await denyUnlessInRoots(ctx.query.get('path'), 'path', roots()), editorCap(ctx)));
  add('POST', '/fs/write', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const target = await repoFile(repo, stringArg(body['file'], 'file'), 'file');
    if (typeof body['content'] !== 'string') throw new HttpError(400, "'content' must be a string");
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, body['content']);
    return json({ ok: true });
  });
  add('POST', '/fs/write-external', async (ctx) => {
    const body = bodyOf(ctx);
    const target = await denyUnlessInRoots(body['path'], 'path', roots());
    if (typeof body['content'] !== 'string') throw new HttpError(400, "'content' must be a string");
    await writeFile(target, body['content']);
    return json({ ok: true });
  });
  add('POST', '/fs/mkdir', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    await mkdir(await repoFile(repo, stringArg(body['dir'], 'dir'), 'dir'), { recursive: true });
    return json({ ok: true });
  });
  add('POST', '/fs/delete', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const target = await repoFile(repo, stringArg(body['path'], 'path'), 'path');
    if (target === repo) throw new HttpError(403, 'refusing to delete the repository root');
    const st = await lstat(target).catch(() => null);
    if (!st) throw new HttpError(404, `no such file or directory: ${quoteClientInput(body['path'])}`);
    await rm(target, { recursive: st.isDirectory(), force: false });
    return json({ ok: true });
  });
  const moveOrCopy =
    (mode: 'rename' | 'copy'): Handler =>
    async (ctx) => {
      const body = bodyOf(ctx);
      const repo = bodyRepo(body);
      const from = await repoFile(repo, stringArg(body['from'], 'from'), 'from');
      const to = await repoFile(repo, stringArg(body['to'], 'to'), 'to');
      if (from === repo || to === repo) throw new HttpError(403, 'the repository root cannot be moved or overwritten');
      await transferOne(from, to, mode === 'rename' ? 'move' : 'copy');
      return json({ ok: true });
    };
  add('POST', '/fs/rename', moveOrCopy('rename'));
  add('POST', '/fs/copy', moveOrCopy('copy'));
  const absMoveOrCopy =
    (mode: 'move' | 'copy'): Handler =>
    async (ctx) => {
      const body = bodyOf(ctx);
      const from = await denyUnlessInRoots(body['from'], 'from', roots());
      const to = await denyUnlessInRoots(body['to'], 'to', roots());
      await transferOne(from, to, mode);
      return json({ ok: true });
    };
  add('POST', '/fs/copy-abs', absMoveOrCopy('copy'));
  add('POST', '/fs/move-abs', absMoveOrCopy('move'));
  add('POST', '/fs/transfer', async (ctx) => {
    const body = bodyOf(ctx);
    const destDir = await denyUnlessInRoots(body['destDir'], 'destDir', roots());
    const mode = body['mode'];
    if (mode !== 'move' && mode !== 'copy') throw new HttpError(400, "'mode' must be move or copy");
    const allowRecursive = boolArg(body['allowRecursive'], 'allowRecursive', false);
    const sources = stringListArg(body['paths'], 'paths').map((p, i) => absoluteArg(p, `paths[${i}]`));
    const moved: string[] = [];
    const errors: Array<{ path: string; error: string }> = [];
    for (const src of sources) {
      try {
        const st = await lstat(src);
        if (st.isDirectory() && !allowRecursive) throw new Error('is a directory (allowRecursive is false)');
        const to = join(destDir, basename(src));
        if (await lstat(to).catch(() => null)) throw new Error(`destination exists: ${to}`);
        await transferOne(src, to, mode);
        moved.push(to);
      } catch (err) {
        errors.push({ path: src, error: (err as Error).message });
      }
    }
    return json({ transferred: moved, errors });
  });
  add('POST', '/fs/gitignore', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const pattern = stringArg(body['pattern'], 'pattern');
    if (/[\r\n\0]/.test(pattern)) throw new HttpError(400, "'pattern' must be one line");
    const file = join(repo, '.gitignore');
    const existing = await readFile(file, 'utf8').catch(() => '');
    if (existing.split(/\r?\n/).includes(pattern)) return json({ ok: true, added: false });
    await appendFile(file, (existing === '' || existing.endsWith('\n') ? '' : '\n') + pattern + '\n');
    return json({ ok: true, added: true });
  });
  add('GET', '/fs/stat', async (ctx) => {
    const path = absoluteArg(ctx.query.get('path'), 'path');
    const st = await stat(path).catch(() => null);
    return json(
      st
        ? { exists: true, is_dir: st.isDirectory(), size: st.size, modified_at: Math.floor(st.mtimeMs) }
        : { exists: false, is_dir: false, size: 0, modified_at: null },
    );
  });
  add('GET', '/fs/resolve-terminal-path', async (ctx) => {
    const cwd = stringArg(ctx.query.get('cwd'), 'cwd');
    const result = await resolveTerminalPath(cwd, stringArg(ctx.query.get('candidate'), 'candidate'));
    return result === null ? { status: 200, headers: { 'Content-Type': 'application/json' }, body: 'null' } : json(result);
  });
  add('POST', '/fs/resolve-terminal-paths', async (ctx) => {
    const body = bodyOf(ctx);
    const cwd = stringArg(body['cwd'], 'cwd');
    const candidates = body['candidates'];
    if (!Array.isArray(candidates) || candidates.length > 1000 || !candidates.every((c) => typeof c === 'string'))
      throw new HttpError(400, "'candidates' must be an array of at most 1000 strings");
    return json(await Promise.all((candidates as string[]).map((c) => resolveTerminalPath(cwd, c))));
  });
  add('POST', '/fs/warm-index', async (ctx) => {
    // Listing once on the pool brings the tree into the page cache for the searches that follow.
    void pool.listFiles(bodyRepo(bodyOf(ctx))).catch(() => undefined);
    return json({ ok: true });
  });
  return routes;
}

async function transferOne(from: string, to: string, mode: 'move' | 'copy'): Promise<void> {
  const st = await lstat(from).catch(() => null);
  if (!st) throw new HttpError(404, `no such file or directory: ${quoteClientInput(from)}`);
  await mkdir(dirname(to), { recursive: true });
  if (mode === 'move') await rename(from, to);
  else if (st.isDirectory()) await cp(from, to, { recursive: true, errorOnExist: true, force: false });
  else await copyFile(from, to);
}
