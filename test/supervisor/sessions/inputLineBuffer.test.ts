// The composer's line tracker stays bounded however much is typed without Enter, and says so.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { InputLineBuffer, MAX_TRACKED_LINE_BYTES } from '../../../supervisor/sessions/inputLineBuffer.js';

test('a line past the cap keeps its newest bytes, is marked truncated, and reads as unknown once edited away', () => {
  const line = new InputLineBuffer();
  const typed = Buffer.alloc(3 * MAX_TRACKED_LINE_BYTES + 17);
  for (let i = 0; i < typed.length; i++) typed[i] = 0x61 + (i % 26);
  assert.equal(line.feed(typed), 0);
  assert.equal(line.state, 'partial');
  assert.equal(line.truncated, true);
  const kept = line.text;
  assert.ok(kept.length <= MAX_TRACKED_LINE_BYTES && kept.length >= (MAX_TRACKED_LINE_BYTES * 3) / 4, `kept ${kept.length}`);
  assert.ok(typed.toString('latin1').endsWith(kept), 'the newest bytes, in order');
  // Deleting everything still tracked does not make the real line empty.
  line.feed(Buffer.alloc(MAX_TRACKED_LINE_BYTES, 0x7f));
  assert.equal(line.state, 'unknown');
  // Enter submits whatever it was: a fresh, known line.
  assert.equal(line.feed(Buffer.from('\r')), 1);
  assert.equal(line.state, 'empty');
  assert.equal(line.truncated, false);
  line.feed(Buffer.from('ls -l'));
  assert.equal(line.text, 'ls -l');
});

test('a bracketed paste and a runaway CSI sequence are bounded too', () => {
  const line = new InputLineBuffer();
  line.feed(Buffer.concat([Buffer.from('\x1b[200~'), Buffer.alloc(2 * MAX_TRACKED_LINE_BYTES, 0x62), Buffer.from('\x1b[201~')]));
  assert.ok(line.text.length <= MAX_TRACKED_LINE_BYTES);
  assert.equal(line.truncated, true);
  const csi = new InputLineBuffer();
  csi.feed(Buffer.concat([Buffer.from('\x1b['), Buffer.alloc(1_000_000, 0x31), Buffer.from('D'), Buffer.from('ok')]));
  assert.equal(csi.text, 'ok', 'the sequence ended, its parameters were dropped, typing goes on');
});
