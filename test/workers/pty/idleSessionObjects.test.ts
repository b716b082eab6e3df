/**
 * What an idle session holds (issue 29, memory per idle session): parts a session may never use
 * are made on first use. A session that printed its prompt and waits has no screen model (made by
 * the first screen read) and no input queue (made by the first keystroke).
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { PtyService } from '../../../workers/pty/ptyService.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { countObjects, heapNodes } from '../../helpers/heapSnapshot.js';
import { shellHomeEnv } from '../../helpers/testHome.js';

const SESSIONS = 3;
const LAZY = ['ScreenModel', 'InputQueue'] as const;

test(`${SESSIONS} sessions at a prompt hold no screen model and no input queue; a screen read and a keystroke make one each`, async () => {
  const prompted = new Set<string>();
  let allPrompted: () => void = () => {};
  const ready = new Promise<void>((resolve) => (allPrompted = resolve));
  const service: PtyService = new PtyService(
    {
      emit: (event, data) => {
        if (event !== 'data') return;
        prompted.add((data as { session_id: string }).session_id);
        if (prompted.size === SESSIONS) allPrompted();
      },
    },
    { createTextLog: () => new TextPipeline() },
  );
  try {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `idle-${i}`);
    for (const id of ids) {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv() };
      service.spawn({ session_id: id, shell: '/bin/sh', args: ['-c', `printf '$ '; exec cat`], cwd: tmpdir(), env, rows: 24, cols: 80 });
    }
    await ready;
    assert.deepEqual(await countObjects(LAZY), { ScreenModel: 0, InputQueue: 0 });

    const screen = service.readScreen({ session_id: ids[0]! });
    assert.equal(screen.rows[0], '$');
    service.input(ids[1]!, Buffer.from('typed\n'), undefined);
    service.resize({ session_id: ids[2]!, rows: 30, cols: 100 });
    assert.deepEqual(await countObjects(LAZY), { ScreenModel: 1, InputQueue: 1 });
    // A screen made after a resize has the new size.
    assert.equal(service.readScreen({ session_id: ids[2]! }).rows_count, 30);
  } finally {
    await service.shutdown(2_000);
  }
});

/**
 * Closures made per session beyond these were per-session listeners (issue 29): 41 per idle session
 * before, 25 after; then 15 once the text stage made none (the stripper's options, the parser's
 * timers, PendingText.drain), in the pty host.
 */
const MAX_CLOSURES_PER_SESSION = 18;

test('an idle session holds no listener lists or disposable store and few closures: the service observes every session with one object', async () => {
  let printed = 0;
  let wanted = 0;
  let allPrinted: () => void = () => {};
  const service: PtyService = new PtyService(
    {
      emit: (event) => {
        if (event === 'data' && ++printed === wanted) allPrinted();
      },
    },
    { createTextLog: () => new TextPipeline() },
  );
  const spawnAll = async (from: number, count: number): Promise<void> => {
    const done = new Promise<void>((resolve) => (allPrinted = resolve));
    wanted += count;
    for (let i = from; i < from + count; i++) {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv() };
      service.spawn({ session_id: `observed-${i}`, shell: '/bin/sh', args: ['-c', `printf '$ '; exec cat`], cwd: tmpdir(), env, rows: 24, cols: 80 });
    }
    await done;
  };
  const closures = async (): Promise<number> => (await heapNodes((n) => n.type === 'closure')).length;
  try {
    // The first spawn loads node-pty and runs code paths for the first time: counted before the baseline.
    await spawnAll(0, 1);
    const before = await closures();
    await spawnAll(1, SESSIONS);
    const perSession = ((await closures()) - before) / SESSIONS;
    assert.deepEqual(await countObjects(['Listeners', 'DisposableStore']), { Listeners: 0, DisposableStore: 0 });
    assert.ok(perSession <= MAX_CLOSURES_PER_SESSION, `${perSession} closures per idle session (at most ${MAX_CLOSURES_PER_SESSION})`);
  } finally {
    await service.shutdown(2_000);
  }
});

test('a session that has printed nothing holds no text stage; its first output builds one, served as an eager one serves it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-lazy-text-'));
  const fifo = join(dir, 'go');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const TEXT_STAGE = ['TextPipeline', 'AnsiStripper', 'LineLog', 'OutputParser'] as const;
  const parsed: unknown[] = [];
  let gotProgress: () => void = () => {};
  const progressed = new Promise<void>((resolve) => (gotProgress = resolve));
  const service: PtyService = new PtyService(
    {
      emit: (event, data) => {
        if (event !== 'parsed') return;
        parsed.push(...(data as { events: unknown[] }).events);
        gotProgress();
      },
    },
    { createTextLog: () => new TextPipeline() },
  );
  try {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv() };
    // Silent until the test writes the fifo (not the terminal: input would build the stage too).
    const script = `read go < '${fifo}'; printf 'hello\\n\\033]9;4;1;42\\007partial'; exec cat`;
    service.spawn({ session_id: 'silent', shell: '/bin/sh', args: ['-c', script], cwd: tmpdir(), env, rows: 24, cols: 80 });
    assert.deepEqual(await countObjects(TEXT_STAGE), { TextPipeline: 0, AnsiStripper: 0, LineLog: 0, OutputParser: 0 });

    writeFileSync(fifo, 'go\n');
    await progressed;
    assert.deepEqual(parsed, [{ type: 'progress', state: 1, value: 42 }]);
    const log = service.readLog({ session_id: 'silent' });
    assert.deepEqual(await countObjects(TEXT_STAGE), { TextPipeline: 1, AnsiStripper: 1, LineLog: 1, OutputParser: 1 });
    const eager = new TextPipeline();
    eager.push(service.readRaw({ session_id: 'silent' }).payload!);
    assert.deepEqual(log, eager.read({}));
    assert.deepEqual(log.lines, ['hello']);
    assert.equal(log.partial, 'partial');
  } finally {
    await service.shutdown(2_000);
    rmSync(dir, { recursive: true, force: true });
  }
});
