/**
 * A push's lines are decoded to a string only when a consumer needs it: the output parser of a plain
 * session only looks for PR links, so most output is searched as bytes and never decoded (with 500
 * busy sessions a string per push was most of what the pty host allocated).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AnsiStripper, type PushedLines } from '../../../workers/pty/ansiStrip.js';
import { OutputParser } from '../../../workers/pty/agentParser/outputParser.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

function plainParser(): OutputParser {
  return new OutputParser({ emit: () => undefined, readScreen: () => ({}) as never, lineCount: () => 0 });
}

test('a sink that wants none of a push never gets it, and the log still holds every line', () => {
  const p = new TextPipeline();
  const texts: string[] = [];
  p.setSink({ text: (t) => texts.push(t), wants: (l) => l.includes('://'), osc: () => undefined, altScreen: () => undefined });
  p.push(bytes('plain line one\r\nplain line two\r\n'));
  p.push(bytes('see https://example.com/pull/1\r\n'));
  assert.deepEqual(texts, ['see https://example.com/pull/1']);
  assert.deepEqual(p.read().lines, ['plain line one', 'plain line two', 'see https://example.com/pull/1']);
});

test('includes looks only at the completed lines, not the unfinished one after them', () => {
  const seen: Array<{ key: boolean; link: boolean; text: string }> = [];
  const s = new AnsiStripper({
    onLine: () => undefined,
    onPushed: (l: PushedLines) => seen.push({ key: l.includes('PRIVATE KEY'), link: l.includes('://'), text: l.text() }),
  });
  // The needle starts in the last completed line and ends in the unfinished one: no match.
  s.push(bytes('done\nhttp:/\x1b[1m/x PRIVATE KEY'));
  assert.deepEqual(seen, [{ key: false, link: false, text: 'done' }]);
  s.push(bytes('\r\nnext\n'));
  assert.deepEqual(seen[1], { key: true, link: true, text: 'http://x PRIVATE KEY\nnext' }, 'the escape is stripped: the link is whole in the bytes too');
});

test('a PEM block is still dropped from the log when its marker is found in the bytes', () => {
  const p = new TextPipeline();
  p.push(bytes('before\r\n-----BEGIN RSA PRIVATE KEY-----\r\nMIIEow\r\n-----END RSA PRIVATE KEY-----\r\nafter\r\n'));
  const lines = p.read().lines;
  assert.ok(!lines.some((l) => l.includes('MIIEow')), JSON.stringify(lines));
  assert.equal(lines[0], 'before');
  assert.equal(lines.at(-1), 'after');
});

test("a plain session's parser wants only pushes that may hold a PR link; an agent's wants every push", () => {
  const parser = plainParser();
  const of = (t: string) => ({ includes: (s: string) => t.includes(s) });
  assert.equal(parser.wantsText(of('compiling 12 files\nok')), false);
  assert.equal(parser.wantsText(of('see https://example.com/x')), false);
  assert.equal(parser.wantsText(of('https://github.com/o/r/pull/7')), true);
  assert.equal(parser.wantsText(of('https://gitlab.com/o/r/-/merge_requests/7')), true);
  parser.setAgent('claude');
  assert.equal(parser.wantsText(of('compiling 12 files')), true);
  parser.dispose();
});

test("a plain session's PR link still reaches the parser through the pipeline, as the pty session wires it", () => {
  const events: unknown[] = [];
  const parser = new OutputParser({ emit: (e) => events.push(...e), readScreen: () => ({}) as never, lineCount: () => 0 });
  const p = new TextPipeline();
  p.setSink({ text: (t) => parser.lines(t), wants: (l) => parser.wantsText(l), osc: () => undefined, altScreen: () => undefined });
  p.push(bytes('building\r\nopened \x1b[4mhttps://github.com/o/r/pull/42\x1b[0m\r\n'));
  assert.deepEqual(
    events.map((e) => (e as { type: string; number?: number }).number),
    [42],
  );
  parser.dispose();
});
