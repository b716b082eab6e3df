// Alias derivation edge cases (pure functions: the allocator owns no I/O).
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, it } from 'node:test';

import { AliasAllocator, basePrefix } from '../../../supervisor/sessions/alias.js';

const ALIAS_JS = fileURLToPath(new URL('../../../supervisor/sessions/alias.js', import.meta.url));

describe('alias derivation', () => {
  it('tuicommander is tu-1 and night-recovery nr-1', () => {
    const a = new AliasAllocator();
    assert.equal(a.assign('/w/tuicommander'), 'tu-1');
    assert.equal(a.assign('/w/night-recovery'), 'nr-1');
  });

  it('splits camelCase only at lower→upper boundaries: a digit before a capital is no boundary', () => {
    assert.equal(basePrefix('TuiCommander'), 'tc');
    assert.equal(basePrefix('Web3Auth'), 'we');
  });

  it('a colliding single-segment repo extends its prefix with the next characters of its name', () => {
    const a = new AliasAllocator();
    assert.equal(a.assign('/w/tuicommander'), 'tu-1');
    // tumbler's base is "tu" too; its name continues with "m", not a repeat of the "u" already used.
    assert.equal(a.assign('/w/tumbler'), 'tum-1');
    assert.equal(a.assign('/w/tuicommander'), 'tu-2', 'the first repo keeps its prefix');
  });

  it('gives a fresh prefix even when base2..9 and the count-based fallback are all taken (no endless loop)', async () => {
    // Run in a worker: the old fallback spun forever on the main thread.
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.aliasJs).then(({ AliasAllocator }) => {
        const a = new AliasAllocator();
        const taken = ['tuicommander', 't-u-2', 't-u-3', 't-u-4', 't-u-5', 't-u-6', 't-u-7', 't-u-8', 't-u-9', 't-u-u', 't-u-1-1']
          .map((r) => a.prefixFor('/w/' + r));
        parentPort.postMessage({ taken, next: a.prefixFor('/w/tu') });
      });`;
    const worker = new Worker(code, { eval: true, workerData: { aliasJs: ALIAS_JS } });
    try {
      const result = await new Promise<{ taken: string[]; next: string } | 'hung'>((resolve, reject) => {
        const timer = setTimeout(() => resolve('hung'), 5_000);
        worker.once('message', (m) => {
          clearTimeout(timer);
          resolve(m);
        });
        worker.once('error', reject);
      });
      assert.notEqual(result, 'hung', 'prefixFor did not return within 5 s');
      if (result === 'hung') return;
      assert.equal(new Set(result.taken).size, result.taken.length, `setup prefixes are distinct: ${result.taken}`);
      assert.ok(!result.taken.includes(result.next), `${result.next} is already another repo's prefix`);
      assert.match(result.next, /^tu\d+$/);
    } finally {
      await worker.terminate();
    }
  });
});
