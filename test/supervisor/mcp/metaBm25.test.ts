import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Bm25Index, tokenize } from '../../../supervisor/mcp/bm25.js';

test('tokenize splits snake_case, the upstream __ separator and camelCase, lower-cased', () => {
  assert.deepEqual(tokenize('github__create_issue'), ['github', 'create', 'issue']);
  assert.deepEqual(tokenize('listPullRequests'), ['list', 'pull', 'requests']);
  assert.deepEqual(tokenize('HTTPServer getV2Status'), ['http', 'server', 'get', 'v2', 'status']);
  assert.deepEqual(tokenize('Read the file, then: WRITE it!'), ['read', 'the', 'file', 'then', 'write', 'it']);
  assert.deepEqual(tokenize('  --  '), []);
});

const DOCS = [
  { name: 'session', description: 'Terminal sessions: list, create, read output, wait for idle.' },
  { name: 'github__create_issue', description: 'Create a new issue in a GitHub repository.' },
  { name: 'github__list_issues', description: 'List issues in a GitHub repository with filters and pagination.' },
  { name: 'filesystem__read_text_file', description: 'Read the complete contents of a file as text.' },
];

test('a term in the tool name outranks the same term in another tool description', () => {
  const index = new Bm25Index([
    { name: 'notes', description: 'Keeps notes. Can attach a session id to a note.' },
    { name: 'session', description: 'Manage terminals.' },
  ]);
  assert.deepEqual(
    index.search('session', 10).map((h) => h.name),
    ['session', 'notes'],
  );
});

test('a query ranks documents by shared terms, best first, with positive scores', () => {
  const index = new Bm25Index(DOCS);
  const hits = index.search('new github issue', 10);
  assert.equal(hits[0]!.name, 'github__create_issue');
  assert.equal(hits[1]!.name, 'github__list_issues');
  assert.equal(hits.length, 2, 'documents sharing no term are not results');
  assert.ok(hits[0]!.score > hits[1]!.score && hits[1]!.score > 0);
});

test('rarer terms weigh more: idf separates a term in one document from one in many', () => {
  const index = new Bm25Index(DOCS);
  // "read" occurs in session and filesystem; "contents" only in filesystem.
  const [best] = index.search('read contents', 10);
  assert.equal(best!.name, 'filesystem__read_text_file');
  const readOnly = index.search('read', 10);
  const contents = index.search('contents', 10);
  assert.ok(contents[0]!.score > readOnly.find((h) => h.name === 'filesystem__read_text_file')!.score);
});

test('an unknown word, an empty query and an empty index all return nothing', () => {
  const index = new Bm25Index(DOCS);
  assert.deepEqual(index.search('xyzzy plugh', 10), []);
  assert.deepEqual(index.search('', 10), []);
  assert.deepEqual(new Bm25Index([]).search('session', 10), []);
});

test('limit cuts the ranked list; equal scores keep corpus order', () => {
  const twins = Array.from({ length: 5 }, (_, i) => ({ name: `tool_${i}`, description: 'Same words here.' }));
  const index = new Bm25Index(twins);
  assert.deepEqual(
    index.search('same words', 3).map((h) => h.name),
    ['tool_0', 'tool_1', 'tool_2'],
  );
  assert.deepEqual(index.search('same', 0), []);
});

test('with an accept filter, rejected documents do not count towards the limit and keep their rank order', () => {
  const index = new Bm25Index(DOCS);
  const all = index.search('github issue repository file', 10).map((h) => h.name);
  const noGithub = (name: string) => !name.startsWith('github__');
  assert.deepEqual(
    index.search('github issue repository file', 1, noGithub).map((h) => h.name),
    all.filter(noGithub).slice(0, 1),
  );
  assert.deepEqual(index.search('github issue', 10, noGithub), [], 'only rejected documents matched');
});
