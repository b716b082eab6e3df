// tuicd's own warnings and errors in the /logs ring (source app): from the real pino logger (censored,
// after serialization, warn and above only, the log file still flushed) and from a real tuicd.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { createLogger } from '../../../supervisor/log.js';
import { appLogSink } from '../../../supervisor/logs/appLogSink.js';
import { LogRing } from '../../../supervisor/logs/logRing.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { until } from '../../helpers/poll.js';

test('the logger tees warn, error and fatal into the ring, censored, and the log file still gets every line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-applog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ring = new LogRing();
  const log = createLogger({ logDir: dir, level: 'info', stderr: false, warnings: appLogSink(ring) });
  log.info({ upstream: 'a' }, 'an info line stays out');
  log.warn({ upstream: 'alpha', password: 'hunter2' }, 'upstream status changed');
  log.error({ err: 'boom' }, 'handler failed');
  log.fatal('going down');
  const entries = ring.list({ limit: 0 });
  assert.deepEqual(
    entries.map((e) => [e.level, e.source, e.message]),
    [
      ['warn', 'app', 'upstream status changed'],
      ['error', 'app', 'handler failed'],
      ['error', 'app', 'going down'],
    ],
  );
  assert.deepEqual(JSON.parse(entries[0]!.data_json!), { upstream: 'alpha', password: '[REDACTED]' });
  assert.equal('data_json' in entries[2]!, false, 'nothing beyond the envelope: no data_json');
  // The file still gets every line, info included (the tee is beside it, not instead of it).
  await new Promise<void>((resolve, reject) => log.flush((err) => (err ? reject(err) : resolve())));
  await until(
    () =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.log'))
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join(''),
    (text) => text.includes('an info line stays out') && text.includes('going down'),
    'the log file holds every line',
    5_000,
  );
});

test('the sink ignores what is not a JSON record and drops data too big to keep whole', () => {
  const ring = new LogRing();
  const sink = appLogSink(ring);
  sink('not json\n');
  sink(`${JSON.stringify({ level: 50, time: 1, pid: 2, msg: 'big', blob: 'x'.repeat(70 * 1024) })}\n`);
  const [entry, ...rest] = ring.list({ limit: 0 });
  assert.deepEqual(rest, []);
  assert.deepEqual([entry!.level, entry!.message, 'data_json' in entry!], ['error', 'big', false]);
});

test('a real tuicd lists its own start-up warnings under source app', async (t) => {
  const configDir = mkdtempSync(join(tmpdir(), 'tuicd-applog-real-'));
  writeFileSync(join(configDir, 'repo-settings.json'), '{ not json');
  const tuicd = await Tuicd.start({ configDir });
  // Stopped first: a stopping tuicd still writes its log, which would bring the directory back.
  t.after(async () => {
    await tuicd.stop();
    rmSync(configDir, { recursive: true, force: true });
  });
  const entries = await until(
    async () => (await tuicd.socket('GET', '/logs?source=app')).json<Array<{ level: string; message: string; data_json?: string }>>(),
    (list) => list.some((e) => e.message.startsWith('repo-settings.json is unreadable')) && list.some((e) => e.message.startsWith('no OS keyring reachable')),
    'both start-up warnings in /logs',
    5_000,
  );
  const unreadable = entries.find((e) => e.message.startsWith('repo-settings.json is unreadable'))!;
  assert.equal(unreadable.level, 'warn');
  assert.equal(JSON.parse(unreadable.data_json!).file, join(configDir, 'repo-settings.json'));
});
