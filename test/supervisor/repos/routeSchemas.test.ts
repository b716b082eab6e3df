/**
 * The repository and /fs routes as declared: each has its schemas and a tag, the document built
 * from them is valid OpenAPI 3.1, every body route refuses a wrong-typed required field as
 * invalid_input naming it (generated from the declarations, not listed by hand), and the answers
 * of a real repository, its worktrees and files validate against the declared answer schemas.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Validator } from '@seriousme/openapi-schema-validator';
import type { TSchema } from 'typebox';

import { validatorOf } from '../../../shared/schemaCheck.js';
import { buildOpenApiDocument } from '../../../supervisor/http/openapi.js';
import type { Route } from '../../../supervisor/http/types.js';
import type { RootGate } from '../../../supervisor/fs/rootGate.js';
import type { WorkPool } from '../../../supervisor/pool/workPool.js';
import type { GhCli } from '../../../supervisor/repos/ghCli.js';
import type { WorktreeManager } from '../../../supervisor/repos/worktrees.js';
import { fsRoutes } from '../../../supervisor/routes/fs.js';
import { githubRoutes } from '../../../supervisor/routes/github.js';
import { repoRoutes } from '../../../supervisor/routes/repo.js';
import { type RepoConfigDeps, repoConfigRoutes } from '../../../supervisor/routes/repoConfig.js';
import { repoHistoryRoutes } from '../../../supervisor/routes/repoHistory.js';
import { repoOrphanRoutes } from '../../../supervisor/routes/repoOrphans.js';
import { worktreeRoutes } from '../../../supervisor/routes/worktrees.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

/** The factories only keep their dependencies for later: declaring the routes calls none of them. */
const unused = {} as never;
const ROUTES: Route[] = [
  ...repoConfigRoutes(unused as RepoConfigDeps),
  ...repoRoutes(unused as WorkPool, unused as RootGate),
  ...repoHistoryRoutes(unused as RootGate),
  ...repoOrphanRoutes(unused as RootGate),
  ...githubRoutes(unused as GhCli, unused as RootGate),
  ...worktreeRoutes(unused as WorktreeManager, () => [], unused as RootGate),
  ...fsRoutes(unused as WorkPool, unused as RootGate),
];

type Json = Record<string, unknown>;

/** A value the schema accepts: the least a required field needs. */
function sample(schema: Json): unknown {
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['anyOf'])) return sample(schema['anyOf'][0] as Json);
  switch (schema['type']) {
    case 'string': {
      const allOf = (schema['allOf'] as Json[] | undefined) ?? [];
      return allOf.some((s) => s['pattern'] === '^/') ? '/tmp' : 'x';
    }
    case 'integer':
    case 'number':
      return typeof schema['minimum'] === 'number' ? schema['minimum'] : 1;
    case 'boolean':
      return true;
    case 'array':
      return typeof schema['minItems'] === 'number' && schema['minItems'] > 0 ? [sample(schema['items'] as Json)] : [];
    case 'object': {
      const props = (schema['properties'] as Record<string, Json> | undefined) ?? {};
      return Object.fromEntries(((schema['required'] as string[] | undefined) ?? []).map((k) => [k, sample(props[k]!)]));
    }
    default:
      throw new Error(`no sample for ${JSON.stringify(schema)}`);
  }
}

/** A value of the wrong JSON type for the schema. */
function wrongTyped(schema: Json): unknown {
  return schema['type'] === 'string' || Array.isArray(schema['anyOf']) || 'const' in schema ? 12345 : 'not-the-type';
}

describe('repository and fs routes: declarations', () => {
  it('every route is declared: a tag, a summary, a success answer, and schemas for its path parameters', () => {
    assert.ok(ROUTES.length > 70, `${ROUTES.length} routes`);
    for (const r of ROUTES) {
      const where = `${r.method} ${r.pattern}`;
      assert.ok(r.spec, `${where} has a declaration`);
      assert.equal(r.spec.tag, r.pattern.startsWith('/fs/') ? 'fs' : 'repos', where);
      assert.ok(r.spec.summary.length > 10, where);
      const statuses = Object.keys(r.spec.answers).map(Number);
      // The AI routes are refused in headless tuicd: 501 is all they answer.
      assert.ok(
        statuses.some((s) => s < 300 || s === 501),
        `${where} declares what it answers`,
      );
      for (const name of r.pattern.split('/').filter((s) => s.startsWith(':')))
        assert.ok(r.spec.params?.properties[name.slice(1)], `${where} declares its parameter ${name}`);
      if (r.method === 'POST' || r.method === 'PUT')
        assert.ok(r.spec.body || /^\/(repo\/(pr-review|conflict-assist)|ai\/)/.test(r.pattern), `${where} has a body schema`);
    }
  });

  it('the document they make is valid OpenAPI 3.1', async () => {
    const doc = buildOpenApiDocument({ version: '0.0.0-test', routes: ROUTES, wsRoutes: [] });
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
    assert.deepEqual(
      (doc['tags'] as Array<{ name: string }>).map((t) => t.name),
      ['fs', 'repos'],
    );
  });
});

describe('repository and fs routes against a live tuicd', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  const q = encodeURIComponent;
  const send = (method: string, path: string, body?: unknown) =>
    t.socket(method, path, body === undefined ? undefined : JSON.stringify(body), body === undefined ? {} : { 'content-type': 'application/json' });

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': '# app\n', 'src/a.ts': 'export const a = 1;\n', '.gitignore': 'build/\n' });
    t = await Tuicd.start({ env: sb.env });
    const reg = await send('PUT', '/config/repositories', { repos: { [repo]: {} } });
    assert.equal(reg.status, 200, reg.text);
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
  });

  it('refuses a wrong-typed required body field with 400 invalid_input naming it, on every body route', async () => {
    let checked = 0;
    for (const r of ROUTES) {
      const body = r.spec?.body as unknown as Json | undefined;
      const required = (body?.['required'] as string[] | undefined) ?? [];
      const props = (body?.['properties'] as Record<string, Json> | undefined) ?? {};
      for (const field of required) {
        const value = { ...(sample(body!) as Json), [field]: wrongTyped(props[field]!) };
        const path = r.pattern.replace(/:(\w+)/g, 'x');
        const answer = await send(r.method, path, value);
        const what = `${r.method} ${r.pattern} ${JSON.stringify(value)}: ${answer.text}`;
        assert.equal(answer.status, 400, what);
        const got = answer.json();
        assert.deepEqual({ code: got.code, field: got.field, in: got.in }, { code: 'invalid_input', field, in: 'body' }, what);
        assert.equal(typeof got.error, 'string', what);
        checked++;
      }
    }
    assert.ok(checked >= 40, `${checked} required fields checked`);
  });

  it('the answers of a real repository, its worktree and its files match the declared schemas', async () => {
    sb.write(repo, { 'src/a.ts': 'export const a = 2;\n', 'notes.md': 'n\n' });
    sb.git(repo, 'stash', '-q', '--include-untracked');
    sb.write(repo, { 'src/a.ts': 'export const a = 3;\n', 'new.txt': 'new\n' });
    sb.git(repo, 'add', 'new.txt');
    writeFileSync(join(repo, 'untracked.md'), 'u\n');
    const created = await send('POST', '/worktrees', { base_repo: repo, branch_name: 'feature-one' });
    assert.equal(created.status, 201, created.text);

    const r = encodeURIComponent(repo);
    // Every GET route but the gh-backed ones (githubRoutes.test checks those with a scripted gh) and the AI one.
    const gets: Record<string, string> = {
      '/config/repositories': '',
      '/config/repo-settings': '',
      '/config/repo-defaults': '',
      '/config/repo-settings/has-custom': `path=${r}`,
      '/repo/info': `path=${r}`,
      '/repo/initials': 'name=web-app',
      '/repo/diff': `path=${r}`,
      '/repo/diff-stats': `path=${r}`,
      '/repo/files': `path=${r}`,
      '/repo/changed-files': `repoPath=${r}`,
      '/repo/file-diff': `path=${r}&file=new.txt&staged=true`,
      '/repo/file': `path=${r}&file=README.md`,
      '/repo/branches': `path=${r}`,
      '/repo/local-branches': `path=${r}`,
      '/repo/branches/merged': `path=${r}`,
      '/repo/recent-commits': `path=${r}&count=3`,
      '/repo/commit-log': `path=${r}&ref=HEAD`,
      '/repo/summary': `path=${r}`,
      '/repo/structure': `path=${r}`,
      '/repo/working-tree-status': `path=${r}`,
      '/repo/is-main-branch': 'branch=main',
      '/repo/markdown-files': `path=${r}`,
      '/repo/remote-url': `path=${r}`,
      '/repo/file-history': `path=${r}&file=README.md`,
      '/repo/file-blame': `path=${r}&file=README.md`,
      '/repo/stash': `path=${r}`,
      '/repo/panel-context': `path=${r}`,
      '/repo/orphan-worktrees': `repoPath=${r}`,
      '/worktrees': '',
      '/worktrees/dir': `repoPath=${r}`,
      '/worktrees/paths': `path=${r}`,
      '/worktrees/lifecycle': `repoPath=${r}&workspaceId=feature-one`,
      '/fs/list': `repoPath=${r}`,
      '/fs/search': `repoPath=${r}&query=a`,
      '/fs/search-content': `repoPath=${r}&query=export`,
      '/fs/read': `repoPath=${r}&file=README.md`,
      '/fs/read-editor': `repoPath=${r}&file=README.md`,
      '/fs/read-external': `path=${q(join(repo, 'README.md'))}`,
      '/fs/read-editor-external': `path=${q(join(repo, 'README.md'))}`,
      '/fs/stat': `path=${q(join(repo, 'README.md'))}`,
      '/fs/resolve-terminal-path': `cwd=${r}&candidate=${q('src/a.ts:1:2')}`,
    };
    const posts: Array<[string, unknown, number?]> = [
      ['/repo/diff-stats/batch', { paths: [repo, join(sb.root, 'app__wt', 'feature-one')] }],
      ['/repo/run-git', { repoPath: repo, args: ['rev-parse', 'HEAD'] }],
      ['/repo/stash', { repoPath: repo, message: 'saved', include_untracked: false }],
      ['/worktrees/generate-name', { existing_names: ['a'] }],
      ['/worktrees/finalize', { repoPath: repo, workspaceId: 'feature-one', action: 'delete' }],
      ['/fs/resolve-terminal-paths', { cwd: repo, candidates: ['README.md', 'nope'] }],
      ['/fs/transfer', { destDir: join(repo, 'src'), mode: 'copy', paths: [join(repo, 'README.md'), join(repo, 'nope')] }],
      ['/fs/gitignore', { repoPath: repo, pattern: 'dist/' }],
      ['/fs/warm-index', { repoPath: repo }],
    ];
    const declared = (method: string, pattern: string, status: number): TSchema => {
      const route = ROUTES.find((x) => x.method === method && x.pattern === pattern);
      const answer = route?.spec?.answers[status];
      assert.ok(answer && !('description' in answer && !('type' in answer) && !('anyOf' in answer)), `${method} ${pattern} declares a ${status} schema`);
      return answer as TSchema;
    };
    const uncovered = ROUTES.filter((x) => x.method === 'GET' && !(x.pattern in gets) && Object.keys(x.spec!.answers).includes('200')).map((x) => x.pattern);
    assert.deepEqual(
      uncovered.filter((p) => !/^\/repo\/(prs|pr-statuses|github|github-status|ci|ci-checks|issues|pr-diff|merged-prs)$/.test(p)),
      [],
      'every GET route but the gh-backed ones is checked here',
    );
    for (const [pattern, query] of Object.entries(gets)) {
      const answer = await t.socket('GET', query ? `${pattern}?${query}` : pattern);
      assert.equal(answer.status, 200, `${pattern}: ${answer.text}`);
      const check = validatorOf(declared('GET', pattern, 200));
      const value = answer.json();
      assert.ok(
        check.Check(value),
        `${pattern} answers what it declares: ${JSON.stringify([...check.Errors(value)].slice(0, 3))} in ${answer.text.slice(0, 300)}`,
      );
    }
    for (const [pattern, body, status = 200] of posts) {
      const answer = await send('POST', pattern, body);
      assert.equal(answer.status, status, `${pattern}: ${answer.text}`);
      const check = validatorOf(declared('POST', pattern, status));
      const value = answer.json();
      assert.ok(
        check.Check(value),
        `${pattern} answers what it declares: ${JSON.stringify([...check.Errors(value)].slice(0, 3))} in ${answer.text.slice(0, 300)}`,
      );
    }
    const lifecycle = await t.socket('GET', `/worktrees/lifecycle?repoPath=${r}&workspaceId=feature-one`);
    assert.equal(lifecycle.status, 404, 'finalize removed the worktree');
  });

  it("refuses the fs routes' bad input with the words they always used", async () => {
    const body = (error: string, field: string) => ({ error, code: 'invalid_input', field, in: 'body' });
    const cases: Array<[string, string, unknown, unknown]> = [
      ['POST', '/fs/write', { repoPath: repo, file: 'a.txt', content: 5 }, body("'content' must be a string", 'content')],
      ['POST', '/fs/write', { repoPath: repo, file: '', content: 'x' }, body("'file' is required (a non-empty string)", 'file')],
      ['POST', '/fs/transfer', { destDir: repo, mode: 'link', paths: [] }, body("'mode' must be move or copy", 'mode')],
      ['POST', '/fs/transfer', { mode: 'copy', paths: [] }, body('destDir is required', 'destDir')],
      ['POST', '/fs/gitignore', { repoPath: repo, pattern: 'a\nb' }, body("'pattern' must be one line", 'pattern')],
      [
        'POST',
        '/fs/resolve-terminal-paths',
        { cwd: repo, candidates: Array.from({ length: 1001 }, () => 'x') },
        body("'candidates' must be an array of at most 1000 strings", 'candidates'),
      ],
      ['GET', '/fs/stat?path=relative', undefined, { error: "'path' must be an absolute path", code: 'invalid_input', field: 'path', in: 'query' }],
      [
        'GET',
        `/fs/search?repoPath=${q(repo)}&query=a&limit=0`,
        undefined,
        {
          error: `'limit' must be an integer between 1 and 1000, got "0"`,
          code: 'invalid_input',
          field: 'limit',
          in: 'query',
        },
      ],
      ['GET', '/fs/read-external', undefined, { error: 'path is required', code: 'invalid_input', field: 'path', in: 'query' }],
    ];
    for (const [method, path, payload, expected] of cases) {
      const r = await send(method, path, payload);
      assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
      assert.deepEqual(r.json(), expected, `${method} ${path}`);
    }
    const outside = await send('POST', '/fs/transfer', { destDir: repo, mode: 'copy', paths: [`${repo}/../x`] });
    assert.deepEqual(outside.json(), { error: "Access denied: 'paths[0]' contains '..' or NUL", code: 'forbidden' });
  });
});
