// The environment a session's shell starts with, read from the real child's
// /proc/<pid>/environ: the capability variables and tuicd's own, and nothing of the terminal or the
// agent tuicd itself was started from.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { endpointCandidates } from '../../../bridge/endpoint.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

function environOf(pid: number): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return env;
}

test('a session shell gets the capability variables and its own identity, not its parent terminal or agent', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'tuicd-session-env-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  // As if tuicd were started from a tmux pane inside another agent's session, with colours off there.
  const tuicd = await Tuicd.start({
    env: {
      SHELL: '/bin/sh',
      TMUX: '/tmp/tmux-0/default,4242,0',
      TMUX_PANE: '%3',
      STY: '4242.pts-0.host',
      CLAUDECODE: '1',
      NO_COLOR: '1',
      TUIC_SESSION: 'the-parent',
      KEEP_ME: 'inherited',
    },
  });
  t.after(() => tuicd.stop());
  const created = await tuicd.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', tuic_session: 'agent-7' }));
  assert.equal(created.status, 201, created.text);
  const { session_id } = created.json<{ session_id: string }>();
  const list = (await tuicd.socket('GET', '/sessions')).json<Array<{ session_id: string; pid: number }>>();
  const pid = list.find((s) => s.session_id === session_id)!.pid;
  // Between node-pty's fork and the shell's exec the child is still a copy of the pty host, with
  // the host's environment (TERM of the terminal tests run in): read it once the shell runs.
  for (let i = 0; readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'sh'; i++) {
    assert.ok(i < 200, "the shell was exec'd");
    await new Promise((r) => setTimeout(r, 10));
  }
  const env = environOf(pid);

  const expected: Record<string, string> = {
    TERM: 'xterm-256color',
    COLORTERM: 'truecolor',
    KITTY_WINDOW_ID: '1',
    TERM_PROGRAM: 'ghostty',
    TERM_PROGRAM_VERSION: '3.0.0',
    TERM_FEATURES: 'T2PHUBSyMF',
    CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1',
    TUIC_SESSION: 'agent-7',
    TUIC_CONFIG_DIR: tuicd.configDir,
    KEEP_ME: 'inherited',
  };
  for (const [name, value] of Object.entries(expected)) assert.equal(env.get(name), value, name);
  assert.ok(env.get('LANG'), 'LANG inherited or en_US.UTF-8');
  for (const name of ['CLAUDECODE', 'NO_COLOR', 'TMUX', 'TMUX_PANE', 'STY']) assert.equal(env.has(name), false, `${name} must not reach the session`);
  assert.equal(env.has('TUIC_APP_INSTANCE'), false, 'the default instance names none');
});

test("a named instance's sessions carry TUIC_APP_INSTANCE: a bridge started inside finds that instance's socket", async (t) => {
  const tuicd = await Tuicd.start({ args: ['--instance', 'work'], env: { SHELL: '/bin/sh' } });
  t.after(() => tuicd.stop());
  const created = await tuicd.socket('POST', '/sessions', JSON.stringify({ shell: '/bin/sh' }));
  assert.equal(created.status, 201, created.text);
  const { session_id } = created.json<{ session_id: string }>();
  const pid = (await tuicd.socket('GET', '/sessions')).json<Array<{ session_id: string; pid: number }>>().find((s) => s.session_id === session_id)!.pid;
  for (let i = 0; readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'sh'; i++) {
    assert.ok(i < 200, "the shell was exec'd");
    await new Promise((r) => setTimeout(r, 10));
  }
  const env = environOf(pid);
  assert.equal(env.get('TUIC_APP_INSTANCE'), 'work');
  assert.deepEqual(endpointCandidates({}, Object.fromEntries(env)), [tuicd.socketPath]);
});
