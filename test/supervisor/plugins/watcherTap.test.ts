/**
 * The pty host's side of output watchers, on the real text stage: a session's pipeline has no line
 * tap while no watcher is set (no per-line work), gets one when a watcher is set and loses it when
 * the set empties; matched lines leave redacted, lines of a PEM block never leave.
 */
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { type MatchedLine, OutputWatchers } from '../../../workers/pty/outputWatchers.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';

const completed = (TextPipeline.prototype as any).completed;
const onLineOf = (p: TextPipeline) => (p as any).onLine;
const tapOf = (p: TextPipeline) => (p as any).tap;

function setup() {
  const events: Array<{ sessionId: string; lines: MatchedLine[]; dropped: number }> = [];
  const watchers = new OutputWatchers((sessionId, lines, dropped) => events.push({ sessionId, lines, dropped }));
  const pipeline = watchers.attach('s1', new TextPipeline());
  const feed = (text: string) => pipeline.push(Buffer.from(text));
  return { events, watchers, pipeline, feed };
}

test('no watcher: the pipeline runs its untapped line handler; set and cleared watchers switch it', async () => {
  const { events, watchers, pipeline, feed } = setup();
  assert.equal(onLineOf(pipeline), completed, 'no tap: the text stage is what it was');
  assert.equal(tapOf(pipeline), undefined);
  feed('error one\r\n');
  await tick();
  assert.deepEqual(events, []);
  watchers.set([{ id: 'c/err', pattern: '^error', flags: '' }]);
  assert.notEqual(tapOf(pipeline), undefined);
  // A pipeline attached while watchers are set is tapped at once.
  const later = watchers.attach('s2', new TextPipeline());
  assert.notEqual(tapOf(later), undefined);
  // A push no watcher can match leaves its lines on the untapped path.
  feed('nothing here\r\nnor here\r\n');
  assert.equal(onLineOf(pipeline), completed);
  feed('fine\r\nerror two\r\n');
  assert.notEqual(onLineOf(pipeline), completed);
  later.push(Buffer.from('error three\r\n'));
  await tick();
  assert.deepEqual(events, [
    { sessionId: 's1', lines: [{ text: 'error two', matched_ids: ['c/err'] }], dropped: 0 },
    { sessionId: 's2', lines: [{ text: 'error three', matched_ids: ['c/err'] }], dropped: 0 },
  ]);
  watchers.set([]);
  assert.equal(onLineOf(pipeline), completed);
  assert.equal(tapOf(pipeline), undefined);
  assert.equal(onLineOf(later), completed);
  // The log is unchanged by the tap.
  assert.deepEqual(pipeline.read().lines, ['error one', 'nothing here', 'nor here', 'fine', 'error two']);
});

test('matched lines are redacted; a PEM block is never shown; a flood is cut per event and counted', async () => {
  const { events, watchers, feed } = setup();
  watchers.set([{ id: 'c/all', pattern: '.', flags: '' }]);
  const token = `ghp_${'Z9y8'.repeat(10)}`;
  feed(`token ${token}\r\n-----BEGIN RSA PRIVATE KEY-----\r\n${'M'.repeat(64)}\r\n-----END RSA PRIVATE KEY-----\r\nafter\r\n`);
  await tick();
  const shown = events.flatMap((e) => e.lines.map((l) => l.text));
  assert.ok(!shown.some((t) => t.includes(token)), shown.join('\n'));
  assert.ok(!shown.some((t) => t.includes('MMMM')), shown.join('\n'));
  assert.equal(shown.at(-1), 'after');
  events.length = 0;
  feed('x\r\n'.repeat(PtyConstants.WATCHER_LINES_PER_EVENT + 5));
  await tick();
  assert.equal(events.length, 1);
  assert.equal(events[0]!.lines.length, PtyConstants.WATCHER_LINES_PER_EVENT);
  assert.equal(events[0]!.dropped, 5);
});

test('case-insensitive, multi-line and dot-all watchers match as their flags say', async () => {
  const { events, watchers, feed } = setup();
  watchers.set([
    { id: 'c/i', pattern: 'warn(ing)?:', flags: 'i' },
    { id: 'c/plain', pattern: 'warn(ing)?:', flags: '' },
  ]);
  feed('WARNING: disk\r\nwarn: low\r\n');
  await tick();
  assert.deepEqual(events[0]!.lines, [
    { text: 'WARNING: disk', matched_ids: ['c/i'] },
    { text: 'warn: low', matched_ids: ['c/i', 'c/plain'] },
  ]);
});

test('watchers that cannot share one expression (the same group name) still each match', async () => {
  const { events, watchers, feed } = setup();
  watchers.set([
    { id: 'c/a', pattern: '(?<n>alpha)-x', flags: '' },
    { id: 'c/b', pattern: '(?<n>beta)-y', flags: '' },
    { id: 'c/m', pattern: '^gamma$', flags: 'm' },
  ]);
  feed('alpha-x\r\nbeta-y\r\ngamma\r\ndelta\r\n');
  await tick();
  assert.deepEqual(events[0]!.lines, [
    { text: 'alpha-x', matched_ids: ['c/a'] },
    { text: 'beta-y', matched_ids: ['c/b'] },
    { text: 'gamma', matched_ids: ['c/m'] },
  ]);
});
