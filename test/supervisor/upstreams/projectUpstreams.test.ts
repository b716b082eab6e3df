/** The per-project upstream allowlist store (supervisor/upstreams/projectUpstreams.ts) on real files. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';

import { ProjectUpstreams, REPO_SETTINGS_FILE, RepoSettingsCorruptError } from '../../../supervisor/upstreams/projectUpstreams.js';

function fixture(t: TestContext) {
  const root = mkdtempSync(join(tmpdir(), 'tuicd-projects-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const configDir = join(root, 'config');
  mkdirSync(configDir);
  const repo = (name: string, local?: unknown): string => {
    const path = join(root, name);
    mkdirSync(path);
    if (local !== undefined) writeFileSync(join(path, '.tuic.json'), typeof local === 'string' ? local : JSON.stringify(local));
    return path;
  };
  const warnings: string[] = [];
  const make = () => new ProjectUpstreams({ configDir, log: { warn: (_obj, msg) => warnings.push(msg) } });
  const settingsFile = join(configDir, REPO_SETTINGS_FILE);
  return { configDir, repo, make, warnings, settingsFile };
}

const names = (list: ReadonlySet<string> | null): string[] | null => (list === null ? null : [...list].sort());

describe('per-project upstream allowlist', () => {
  test('no files: every upstream, for any repository and for none', async (t) => {
    const f = fixture(t);
    const projects = f.make();
    await projects.load();
    assert.equal(projects.allowlistFor(f.repo('plain')), null);
    assert.equal(projects.allowlistFor(null), null);
    assert.deepEqual(f.warnings, []);
  });

  test('.tuic.json narrows its repository; repo-settings.json wins over it, null included; a trailing slash is the same repository', async (t) => {
    const f = fixture(t);
    const checkedIn = f.repo('checked-in', { mcp_upstreams: ['fs', 'github'] });
    const overridden = f.repo('overridden', { mcp_upstreams: ['fs'] });
    const opened = f.repo('opened', { mcp_upstreams: ['fs'] });
    writeFileSync(
      f.settingsFile,
      JSON.stringify({
        [overridden]: { path: overridden, base_branch: 'main', mcp_upstreams: ['everything'] },
        [opened]: { path: opened, mcp_upstreams: null },
      }),
    );
    const projects = f.make();
    await projects.load();
    assert.deepEqual(names(projects.allowlistFor(checkedIn)), ['fs', 'github']);
    assert.deepEqual(names(projects.allowlistFor(`${checkedIn}/`)), ['fs', 'github']);
    assert.deepEqual(names(projects.allowlistFor(overridden)), ['everything']);
    assert.equal(projects.allowlistFor(opened), null, 'null in repo-settings.json opens every upstream');
  });

  test('a hand-written entry found by its path field; an empty list allows no upstream', async (t) => {
    const f = fixture(t);
    const repo = f.repo('by-path');
    writeFileSync(f.settingsFile, JSON.stringify({ 'my project': { path: repo, mcp_upstreams: [] } }));
    const projects = f.make();
    await projects.load();
    assert.deepEqual(names(projects.allowlistFor(repo)), []);
  });

  test('set writes the entry keeping every other field and entry, 0600, and tells listeners; a later load reads it back', async (t) => {
    const f = fixture(t);
    const repo = f.repo('saved', { mcp_upstreams: ['fs'] });
    const other = f.repo('other');
    writeFileSync(f.settingsFile, JSON.stringify({ [repo]: { path: repo, setup_script: 'make' }, [other]: { path: other, run_script: 'npm test' } }));
    const projects = f.make();
    await projects.load();
    let changes = 0;
    projects.onChanged(() => changes++);
    await projects.set(repo, ['everything', 'everything', 'remote']);
    assert.equal(changes, 1);
    assert.deepEqual(names(projects.allowlistFor(repo)), ['everything', 'remote']);
    const saved = JSON.parse(readFileSync(f.settingsFile, 'utf8'));
    assert.deepEqual(saved[repo], { path: repo, setup_script: 'make', mcp_upstreams: ['everything', 'remote'] });
    assert.deepEqual(saved[other], { path: other, run_script: 'npm test' });
    assert.equal(statSync(f.settingsFile).mode & 0o777, 0o600);

    await projects.set(repo, null);
    assert.equal(projects.allowlistFor(repo), null, 'null: every upstream, over .tuic.json too');
    const reloaded = f.make();
    await reloaded.load();
    assert.equal(reloaded.allowlistFor(repo), null);
  });

  test('two stores saving different projects at once (two processes would): both entries survive', async (t) => {
    const f = fixture(t);
    const [a, b] = [f.repo('a'), f.repo('b')];
    const first = f.make();
    const second = f.make();
    await Promise.all([first.load(), second.load()]);
    await Promise.all([first.set(a, ['x']), second.set(b, ['y'])]);
    const saved = JSON.parse(readFileSync(f.settingsFile, 'utf8'));
    assert.deepEqual([saved[a].mcp_upstreams, saved[b].mcp_upstreams], [['x'], ['y']]);
  });

  test('a corrupt repo-settings.json is logged, restricts nothing and is never overwritten; a broken .tuic.json is ignored with a warning', async (t) => {
    const f = fixture(t);
    writeFileSync(f.settingsFile, '{ not json');
    const broken = f.repo('broken', '{ "mcp_upstreams": [');
    const projects = f.make();
    await projects.load();
    assert.equal(projects.allowlistFor(broken), null);
    assert.equal(projects.allowlistFor(broken), null, 'read once');
    assert.equal(f.warnings.length, 2, f.warnings.join('\n'));
    assert.match(f.warnings[0]!, /repo-settings\.json is unreadable/);
    assert.match(f.warnings[1]!, /\.tuic\.json is unreadable/);
    await assert.rejects(projects.set(broken, ['fs']), RepoSettingsCorruptError);
    assert.equal(readFileSync(f.settingsFile, 'utf8'), '{ not json');
  });
});
