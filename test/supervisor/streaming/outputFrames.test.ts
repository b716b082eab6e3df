/**
 * JSON viewer output frames: every frame is one valid JSON message under the cap, and their `data`
 * joined is the text exactly, whatever it holds: escapes of every kind at every cut position,
 * backslash runs, multi-byte characters, surrogate pairs, lone surrogates. Random texts from a
 * fixed seed, plus the floods viewers see (base64, agent output with colours, box drawing).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { outputFrames } from '../../../supervisor/streaming/outputFrames.js';
import { prng } from '../../helpers/prng.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

const CAP = 16_000;

const ALPHABET = ['a', 'Z', '0', ' ', '"', '\\', '\\\\', '\n', '\r', '\t', '\x1b', '\x00', '\x7f', 'é', '─', '✢', '😀', '\ud800', '\udfff', '\u2028', '/', 'u'];

function randomText(next: () => number, length: number): string {
  let text = '';
  while (text.length < length) text += ALPHABET[Math.floor(next() * ALPHABET.length)]!;
  return text;
}

function check(text: string, totalWritten?: number): Array<string | Buffer> {
  const frames = outputFrames(text, totalWritten, CAP);
  let joined = '';
  for (const frame of frames) {
    assert.ok(Buffer.byteLength(frame) < CAP, `a frame of ${Buffer.byteLength(frame)} bytes`);
    const message = JSON.parse(frame.toString()) as { type: string; data: string; total_written?: number };
    assert.equal(message.type, 'output');
    assert.equal(message.total_written, totalWritten);
    joined += message.data;
  }
  assert.equal(joined, JSON.parse(JSON.stringify(text)), 'the frames hold the text, in order');
  return frames;
}

describe('JSON output frames', () => {
  it('a short text is one frame, the same text as encoding the message whole', () => {
    for (const text of ['', 'hello\r\n', '\x1b[31mred\x1b[0m "q" \\ é 😀']) {
      assert.deepEqual(outputFrames(text, undefined, CAP), [JSON.stringify({ type: 'output', data: text })]);
      assert.deepEqual(outputFrames(text, 42, CAP), [JSON.stringify({ type: 'output', data: text, total_written: 42 })]);
    }
  });

  it('random texts of escapes, backslash runs and multi-byte characters, cut anywhere: valid frames under the cap that join to the text', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = prng(seed);
      check(randomText(next, 1 + Math.floor(next() * 120_000)), seed % 2 === 0 ? seed * 1000 : undefined);
    }
  });

  it('the floods viewers see: base64, coloured agent output, box drawing', () => {
    const base64 = Buffer.from(Array.from({ length: 48_000 }, (_, i) => (i * 7919) % 256)).toString('base64');
    assert.equal(check(base64).length, Math.ceil(base64.length / (CAP - 40)));
    const agent = Array.from({ length: 3000 }, (_, i) => `\x1b[38;5;${i % 256}m✢ Reading file ${i}…\x1b[0m\r\n`).join('');
    check(agent, 123_456);
    check('─'.repeat(40_000));
    check('😀'.repeat(30_000));
  });
});

describe('JSON output frames end to end', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-json-frames-');

  it('a viewer gets 200 KB of box drawing, emoji and colour escapes byte-exact, in frames under the cap', async () => {
    const s = await suite.create();
    const viewer = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${s.session_id}/stream`));
    try {
      // printf's own escapes: ─ (3 bytes), 😀 (4 bytes, a surrogate pair in JSON's text), ESC[31m.
      const unit = String.raw`\342\224\200\360\237\230\200\033[31mx\033[0m`;
      await suite.write(s.session_id, `i=0; while [ $i -lt 8000 ]; do printf '${unit}'; i=$((i+1)); done; printf '\\nEND%s\\n' OF-FLOOD\n`);
      await viewer.waitFor(() => viewer.text().includes('ENDOF-FLOOD'), 40_000, 'the end of the flood');
      assert.ok(viewer.text().includes('─😀\x1b[31mx\x1b[0m'.repeat(8000)), 'every unit arrived, in order');
      for (const frame of viewer.frames) assert.ok(Buffer.byteLength(JSON.stringify(frame)) < CAP);
    } finally {
      viewer.close();
    }
  });
});
