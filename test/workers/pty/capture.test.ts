// The raw capture file format: header, records with direction/boundaries/timestamps, the cap, failures, legacy .raw.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { CaptureConstants, CaptureWriter, captureFileName, parseCapture } from '../../../workers/pty/captureWriter.js';

describe('capture writer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-capture-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a TCAP header and records that read back with their direction, boundaries and rising timestamps', () => {
    const w = new CaptureWriter(dir, 'sess-1');
    w.record('in', Buffer.from('echo hi\n'));
    w.record('out', Buffer.from('echo hi\r\n'));
    w.record('out', Buffer.from('hi\r\n$ '));
    w.close();
    const buf = readFileSync(join(dir, 'sess-1.tcap'));
    assert.equal(buf.toString('latin1', 0, 4), 'TCAP');
    assert.equal(w.status().bytes, buf.length);
    const cap = parseCapture(buf);
    assert.equal(cap.version, CaptureConstants.VERSION);
    assert.equal(cap.session_id, 'sess-1');
    assert.ok(Math.abs(cap.started_ms! - Date.now()) < 60_000);
    assert.deepEqual(
      cap.records.map((r) => [r.direction, r.bytes.toString()]),
      [
        ['in', 'echo hi\n'],
        ['out', 'echo hi\r\n'],
        ['out', 'hi\r\n$ '],
      ],
    );
    for (let i = 1; i < cap.records.length; i++) assert.ok(cap.records[i]!.ns >= cap.records[i - 1]!.ns);
  });

  it('starts a fresh file on every open and stops at the 512 KiB cap without cutting a record', () => {
    const first = new CaptureWriter(dir, 'capped');
    first.record('out', Buffer.alloc(1000, 0x61));
    first.close();
    const w = new CaptureWriter(dir, 'capped');
    const chunk = Buffer.alloc(4095, 0x62);
    for (let i = 0; i < 300; i++) w.record('out', chunk);
    w.record('in', Buffer.from('x'));
    const size = statSync(w.path).size;
    assert.ok(size <= CaptureConstants.MAX_BYTES, `${size} bytes`);
    assert.ok(size > CaptureConstants.MAX_BYTES - 4095 - CaptureConstants.RECORD_HEADER_BYTES);
    assert.deepEqual({ bytes: w.status().bytes, full: w.status().full }, { bytes: size, full: true });
    const cap = parseCapture(readFileSync(w.path));
    assert.ok(
      cap.records.every((r) => r.direction === 'out' && r.bytes.length === 4095 && r.bytes[0] === 0x62),
      'only whole records of the new capture',
    );
    w.close();
  });

  it('keeps an open failure as status and ignores records', () => {
    const w = new CaptureWriter(join(dir, 'missing', 'deeper'), 'x');
    w.record('out', Buffer.from('lost'));
    const s = w.status();
    assert.equal(s.bytes, 0);
    assert.match(s.error ?? '', /ENOENT/);
  });

  it('names files safely and reads a legacy .raw fixture as one output record', () => {
    assert.equal(captureFileName('../etc/passwd'), '%2E.%2Fetc%2Fpasswd.tcap');
    assert.equal(captureFileName('0b6c-uuid'), '0b6c-uuid.tcap');
    assert.equal(captureFileName('.hidden'), '%2Ehidden.tcap');
    // Distinct ids never share a file, whatever characters they use.
    const ids = ['a/b', 'a_b', 'a%2Fb', 'a b', 'a\\b', 'é', '%C3%A9', '.', '..', '%2E', 'x.y'];
    const names = ids.map(captureFileName);
    assert.equal(new Set(names).size, ids.length, names.join(' '));
    for (const n of names) assert.match(n, /^[A-Za-z0-9_%-][A-Za-z0-9._%-]*\.tcap$/);
    const legacy = parseCapture(Buffer.from('plain output\r\n'));
    assert.equal(legacy.session_id, null);
    assert.deepEqual(
      legacy.records.map((r) => [r.direction, r.bytes.toString()]),
      [['out', 'plain output\r\n']],
    );
  });
});
