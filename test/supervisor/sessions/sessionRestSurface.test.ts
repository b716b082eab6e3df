/**
 * The session routes a TUICommander client expects, on a real tuicd with real /bin/sh sessions:
 * introspection (leaf-pid, has-foreground, foreground, input-buffer, kitty-flags, raw-ring,
 * prompt-receipt), the terminal questions answered by the pty host's screen (logical-line over a
 * wrapped line, selection-text, hyperlink-span over an OSC 8 link), submit's REST face, write-parts,
 * visible, rename, and SessionInfo's worktree fields; with their bad input.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { inStandby, type SessionRecord } from '../../../supervisor/sessions/sessionRecord.js';
import { gitSandbox } from '../../helpers/gitRepo.js';
import { until } from '../../helpers/poll.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';

const ESC = '\x1b';

describe('session REST surface', { timeout: 120_000 }, () => {
  const suite = sessionSuite('tuicd-rest-surface-');
  const git = gitSandbox();
  after(() => git.cleanup());

  const get = async (id: string, tail: string) => suite.t.socket('GET', `/sessions/${encodeURIComponent(id)}/${tail}`);
  const post = (id: string, tail: string, body: object, method = 'POST') =>
    suite.t.socket(method, `/sessions/${encodeURIComponent(id)}/${tail}`, JSON.stringify(body));
  const screenRows = async (id: string): Promise<string[]> => ((await get(id, 'output?format=text')).json().data as string).split('\n');
  const info = async (id: string) => (await suite.t.socket('GET', '/sessions')).json().find((s: { session_id: string }) => s.session_id === id);
  const idle = (id: string) =>
    until(
      () => get(id, 'shell-state').then((r) => r.json().state),
      (s) => s === 'idle',
      `${id} idle`,
    );

  /** Runs a script file (its bytes never echo as the command line does) and waits for `marker` on the screen. */
  async function runScript(id: string, name: string, body: string, marker: string): Promise<string[]> {
    const path = join(suite.work, name);
    writeFileSync(path, body);
    await suite.write(id, `sh ${path}\n`);
    return until(
      () => screenRows(id),
      (rows) => rows.some((r) => r.includes(marker)),
      `${marker} on screen`,
    );
  }

  it('terminal/logical-line joins a line the terminal wrapped; selection-text reads across the wrap', async () => {
    const s = await suite.create({ cols: 20 });
    await idle(s.session_id);
    const long = `AAAAAAAAAA${'0123456789'.repeat(3)}END`; // 43 characters: three rows at 20 columns
    const rows = await runScript(s.session_id, 'wrap.sh', `printf '%s\\n' '${long}'\n`, 'END');
    const last = rows.findIndex((r) => r.includes('END'));
    const first = last - 2;
    assert.equal(rows[first], long.slice(0, 20));

    const line = await get(s.session_id, `terminal/logical-line?row=${last}`);
    assert.equal(line.status, 200, line.text);
    assert.deepEqual(line.json(), [first, long]);
    assert.deepEqual((await get(s.session_id, `terminal/logical-line?row=${first}`)).json(), [first, long]);
    // The caller's numbering: screen row 0 is its row 100.
    assert.deepEqual((await get(s.session_id, `terminal/logical-line?row=${last + 100}&historyBase=100`)).json(), [first + 100, long]);

    const sel = await get(s.session_id, `terminal/selection-text?startRow=${first}&startCol=5&endRow=${last}&endCol=3`);
    assert.equal(sel.status, 200, sel.text);
    assert.deepEqual(sel.json(), { text: long.slice(5, 43) });
    // Reversed ends read the same; a selection over an unwrapped row boundary gets a newline.
    assert.deepEqual((await get(s.session_id, `terminal/selection-text?startRow=${last}&startCol=3&endRow=${first}&endCol=5`)).json(), {
      text: long.slice(5, 43),
    });
    const twoLines = (await get(s.session_id, `terminal/selection-text?startRow=${last}&startCol=0&endRow=${last + 1}&endCol=20`)).json().text as string;
    assert.match(twoLines, /^END\n\S/);

    // Rows above the screen in the caller's numbering are gone: 409 with the documented text.
    const gone = await get(s.session_id, `terminal/selection-text?startRow=1&startCol=0&endRow=150&endCol=2&historyBase=100`);
    assert.equal(gone.status, 409);
    assert.match(gone.text, /selection rows are no longer retained/);
    assert.equal((await get(s.session_id, 'terminal/logical-line?row=500')).status, 409, 'past the screen');
    assert.equal((await get(s.session_id, 'terminal/logical-line')).status, 400, 'row is required');
    assert.equal((await get(s.session_id, 'terminal/logical-line?row=-1')).status, 400);
    assert.equal((await get(s.session_id, 'terminal/selection-text?startRow=0&startCol=0&endRow=x&endCol=1')).status, 400);
    assert.equal((await get('no-such-session', 'terminal/logical-line?row=0')).status, 404);
  });

  it('terminal/hyperlink-span finds an OSC 8 link printed by the shell: its columns and URI; null off it', async () => {
    const s = await suite.create({ cols: 60 });
    await idle(s.session_id);
    const url = 'https://example.com/docs?q=1';
    const rows = await runScript(s.session_id, 'link.sh', `printf 'see \\033]8;;${url}\\033\\\\the docs\\033]8;;\\033\\\\ here LINKDONE\\n'\n`, 'LINKDONE');
    const row = rows.findIndex((r) => r.includes('LINKDONE'));
    assert.equal(rows[row], 'see the docs here LINKDONE');
    for (const col of [4, 7, 11]) assert.deepEqual((await get(s.session_id, `terminal/hyperlink-span?row=${row}&col=${col}`)).json(), [4, 11, url]);
    for (const col of [3, 12, 59]) assert.equal((await get(s.session_id, `terminal/hyperlink-span?row=${row}&col=${col}`)).text, 'null');
    assert.equal((await get(s.session_id, `terminal/hyperlink-span?row=${row}&col=500`)).text, 'null');
    assert.equal((await get(s.session_id, `terminal/hyperlink-span?row=${row}`)).status, 400, 'col is required');
  });

  it('kitty-flags follows the program pushing, setting and popping the kitty keyboard flags', async () => {
    const s = await suite.create();
    await idle(s.session_id);
    const flags = async () => (await get(s.session_id, 'kitty-flags')).json();
    assert.equal(await flags(), 0);
    await runScript(s.session_id, 'kitty1.sh', `printf '\\033[>1u'; echo K1DONE\n`, 'K1DONE');
    assert.equal(await flags(), 1);
    await runScript(s.session_id, 'kitty2.sh', `printf '\\033[>5u'; echo K2DONE\n`, 'K2DONE');
    assert.equal(await flags(), 5);
    await runScript(s.session_id, 'kitty3.sh', `printf '\\033[=2;2u'; echo K3DONE\n`, 'K3DONE');
    assert.equal(await flags(), 7, 'mode 2 ors the flags in');
    await runScript(s.session_id, 'kitty4.sh', `printf '\\033[<u'; echo K4DONE\n`, 'K4DONE');
    assert.equal(await flags(), 1);
    await runScript(s.session_id, 'kitty5.sh', `printf '\\033[<u'; echo K5DONE\n`, 'K5DONE');
    assert.equal(await flags(), 0);
  });

  it('leaf-pid, has-foreground and foreground name the running job; input-buffer the line being typed', async () => {
    const s = await suite.create();
    await idle(s.session_id);
    const shellPid = (await info(s.session_id)).pid as number;
    assert.deepEqual((await get(s.session_id, 'has-foreground')).json(), { process: null });
    assert.deepEqual((await get(s.session_id, 'foreground')).json(), { agent: null });
    assert.deepEqual((await get(s.session_id, 'leaf-pid')).json(), { pid: shellPid });

    await suite.write(s.session_id, 'sleep 30\n');
    const fg = await until(
      () => get(s.session_id, 'has-foreground').then((r) => r.json()),
      (v) => v.process === 'sleep',
      'sleep in the foreground',
    );
    assert.deepEqual(fg, { process: 'sleep' });
    const leaf = (await get(s.session_id, 'leaf-pid')).json().pid as number;
    assert.notEqual(leaf, shellPid);
    assert.equal(readFileSync(`/proc/${leaf}/comm`, 'utf8').trim(), 'sleep');
    await suite.write(s.session_id, '\x03');
    await until(
      () => get(s.session_id, 'has-foreground').then((r) => r.json().process),
      (p) => p === null,
      'back at the prompt',
    );

    await suite.write(s.session_id, 'echo partial line');
    assert.deepEqual((await get(s.session_id, 'input-buffer')).json(), { content: 'echo partial line' });
    await suite.write(s.session_id, '\x15');
    assert.deepEqual((await get(s.session_id, 'input-buffer')).json(), { content: '' });
    assert.equal((await get('no-such-session', 'leaf-pid')).status, 404);
  });

  it('raw-ring answers the output bytes; prompt-receipt the description and last prompt, redacted', async () => {
    const s = await suite.create();
    await idle(s.session_id);
    await runScript(s.session_id, 'ring.sh', `printf '\\033[1mRINGMARK\\033[0m\\n'\n`, 'RINGMARK');
    const ring = await get(s.session_id, 'raw-ring');
    assert.equal(ring.status, 200);
    assert.equal(ring.headers['content-type'], 'application/octet-stream');
    assert.equal(ring.headers['x-ring-offset'], '0');
    assert.ok(ring.body.includes(Buffer.from(`${ESC}[1mRINGMARK${ESC}[0m`)), 'escapes kept');

    assert.deepEqual((await get(s.session_id, 'prompt-receipt')).json(), { sections: [], captureLimited: true });
    const secret = `ghp_${'A1b2C3d4E5'.repeat(3)}123456`;
    const prompt = `echo one two three four five six seven eight nine ${secret}`;
    // Refused (retry_safe) while the shell still counts as busy from the script's output: retried as a client does.
    const r = await until(
      () => post(s.session_id, 'submit', { input: prompt, pty_description: 'count to nine' }),
      (a) => a.status !== 409,
      'the submit taken',
    );
    assert.equal(r.status, 200, r.text);
    const receipt = (await get(s.session_id, 'prompt-receipt')).json();
    assert.equal(receipt.captureLimited, true);
    assert.deepEqual(
      receipt.sections.map((x: any) => [x.label, x.source, x.status, x.truncated]),
      [
        ['Task description', 'pty_description', 'delivered', false],
        ['Last prompt', 'terminal_input', 'delivered', false],
      ],
    );
    assert.equal(receipt.sections[0].text, 'count to nine');
    assert.equal(receipt.sections[1].bytes, Buffer.byteLength(prompt));
    assert.ok(!receipt.sections[1].text.includes(secret), 'the secret is redacted');
    assert.match(receipt.sections[1].text, /^echo one two three .*REDACTED/);
  });

  it('POST submit is the session tool submit: a receipt; 404 for an unknown session; 409 with the reason while busy; bad input 400', async () => {
    const s = await suite.create();
    await idle(s.session_id);
    const ok = await post(s.session_id, 'submit', { input: 'echo SUBMITTED_OK\n', timeout_ms: 5000 });
    assert.equal(ok.status, 200, ok.text);
    const receipt = ok.json();
    assert.equal(receipt.submitted, true);
    assert.equal(receipt.write_state, 'complete');
    assert.equal(receipt.acknowledged, true);
    assert.equal(receipt.retry_safe, false);
    assert.equal(receipt.composer_state, 'cleared');
    assert.ok(receipt.acknowledgement.output_offset > receipt.acknowledgement.enter_offset);
    await until(
      () => screenRows(s.session_id),
      (rows) => rows.includes('SUBMITTED_OK'),
      'the command ran',
    );

    const missing = await post('no-such-session', 'submit', { input: 'ls' });
    assert.equal(missing.status, 404);
    assert.deepEqual([missing.json().submitted, missing.json().reason, missing.json().retry_safe], [false, 'session_not_found', true]);

    await idle(s.session_id);
    await suite.write(s.session_id, 'sleep 30\n');
    await until(
      () => get(s.session_id, 'has-foreground').then((r) => r.json().process),
      (p) => p === 'sleep',
      'sleep runs',
    );
    const busy = await post(s.session_id, 'submit', { input: 'echo NOT_TYPED' });
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.json().write_state, 'not_started');
    assert.ok(['shell_busy', 'foreground_job_running'].includes(busy.json().reason), busy.text);
    await suite.write(s.session_id, '\x03');

    assert.equal((await post(s.session_id, 'submit', { input: '' })).status, 400);
    assert.equal((await post(s.session_id, 'submit', { input: '\n\n' })).status, 400);
    assert.equal((await post(s.session_id, 'submit', {})).status, 400);
    assert.equal((await post(s.session_id, 'submit', { input: 'ls', timeout_ms: 'soon' })).status, 400);
    assert.equal((await post(s.session_id, 'submit', { input: 'ls', pty_description: 5 })).status, 400);
  });

  it('write-parts types every part in order; visible and name; display_name_is_custom follows the rename', async () => {
    const s = await suite.create({ display_name: 'from-spawn' });
    await idle(s.session_id);
    const before = await info(s.session_id);
    assert.equal(before.display_name, 'from-spawn');
    assert.equal(before.display_name_is_custom, false);
    assert.equal(before.display_name_from_spawn, true);
    assert.equal(before.is_remote, true);

    const w = await post(s.session_id, 'write-parts', { parts: ['echo PART', 'S_JOINED', '\r'] });
    assert.equal(w.status, 200, w.text);
    await until(
      () => screenRows(s.session_id),
      (rows) => rows.includes('PARTS_JOINED'),
      'the parts ran as one command',
    );
    assert.equal((await post(s.session_id, 'write-parts', { parts: [] })).status, 400);
    assert.equal((await post(s.session_id, 'write-parts', { parts: 'echo' })).status, 400);
    assert.equal((await post(s.session_id, 'write-parts', { parts: Array(257).fill('x') })).status, 400);

    assert.deepEqual((await post(s.session_id, 'visible', { visible: true })).json(), { ok: true });
    assert.equal((await post(s.session_id, 'visible', { visible: 'yes' })).status, 400);
    assert.equal((await post('no-such-session', 'visible', { visible: true })).status, 404);

    assert.deepEqual((await post(s.session_id, 'name', { name: 'build box' }, 'PUT')).json(), { ok: true });
    let row = await info(s.session_id);
    assert.deepEqual([row.display_name, row.display_name_is_custom, row.display_name_from_spawn], ['build box', true, undefined]);
    await post(s.session_id, 'name', { name: 'auto title', isCustom: false }, 'PUT');
    row = await info(s.session_id);
    assert.deepEqual([row.display_name, row.display_name_is_custom], ['auto title', false]);
    assert.equal((await post(s.session_id, 'name', { name: '   ' }, 'PUT')).status, 400);
    assert.equal((await post(s.session_id, 'name', { name: 'x'.repeat(257) }, 'PUT')).status, 400);
    assert.equal((await post(s.session_id, 'name', {}, 'PUT')).status, 400);
  });

  it('SessionInfo names the linked worktree and its branch for a session whose cwd is inside one', async () => {
    const repo = git.initRepo('wt-repo', { 'a.txt': 'a\n' });
    const wt = join(git.root, 'wt-repo__wt', 'feature-x');
    git.git(repo, 'worktree', 'add', '-q', '-b', 'feature-x', wt);
    git.write(wt, { 'sub/b.txt': 'b\n' });
    const inWorktree = await suite.create({ cwd: join(wt, 'sub') });
    const inMain = await suite.create({ cwd: repo });
    const row = await info(inWorktree.session_id);
    assert.equal(row.worktree_path, wt);
    assert.equal(row.worktree_branch, 'feature-x');
    const main = await info(inMain.session_id);
    assert.equal(main.worktree_path, undefined, 'a main checkout is not a worktree');
    git.git(wt, 'checkout', '-q', '-b', 'feature-y');
    assert.equal((await info(inWorktree.session_id)).worktree_branch, 'feature-y', 'the branch is read when listed');
  });

  it('standby: alive, idle and untouched for the configured time; never with 0', () => {
    const now = 1_000_000;
    const r = { exit: null, shell_state: 'idle', last_activity_ms: now - 300_000 } as unknown as SessionRecord;
    assert.equal(inStandby(r, 300_000, now), true);
    assert.equal(inStandby(r, 300_001, now), false);
    assert.equal(inStandby(r, 0, now), false);
    assert.equal(inStandby({ ...r, shell_state: 'busy' }, 300_000, now), false);
    assert.equal(inStandby({ ...r, exit: { reason: 'exit' } } as unknown as SessionRecord, 300_000, now), false);
  });
});
