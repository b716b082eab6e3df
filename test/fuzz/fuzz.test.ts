/**
 * The CI pass of the fuzzer: ~25 s of seeded requests against a real tuicd (unix socket and TCP on
 * 127.0.0.1), failing on any finding: a crash, a 5xx, a non-JSON error answer, a dropped or hung
 * request, a huge echoed error body, a cross-site or bad-credential (Basic, guessed token or cookie)
 * request accepted on TCP, a path outside every root answered, git running a command it was handed. Drops
 * uWS's own parser makes before any handler runs are reported as known and do not fail it.
 * The failure message is the full report: every distinct finding with the seed and index that
 * replays it (`node dist/test/fuzz/run.js --seed <seed> --replay <index>`).
 *
 * TUIC_FUZZ_SECONDS and TUIC_FUZZ_SEED override the length and the seed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { formatReport, runFuzz } from './fuzzer.js';

const SEED = Number(process.env.TUIC_FUZZ_SEED ?? 1403);
const SECONDS = Number(process.env.TUIC_FUZZ_SECONDS ?? 25);

test(`fuzz: ${SECONDS} s of seed ${SEED} finds no crash, 5xx, non-JSON error or other finding`, { timeout: (SECONDS + 90) * 1000 }, async (t) => {
  const report = await runFuzz({ seed: SEED, requests: 1_000_000, seconds: SECONDS, concurrency: 6 });
  const text = formatReport(report, { maxGroups: 40 });
  for (const line of text.split('\n').slice(0, 24)) t.diagnostic(line);
  assert.ok(report.sent > 0, 'the fuzzer sent nothing');
  assert.equal(report.leftovers.length, 0, `tuicd left processes running after SIGTERM:\n${text}`);
  assert.equal(report.failed, false, text);
});
