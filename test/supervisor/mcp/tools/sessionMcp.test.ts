// The session and task tools through a real tuicd's POST /mcp on the unix socket: the wiring, the
// caller context (loopback, the x-tuic-session binding behind is_caller and the self-close guard).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { initialize, rpc } from '../transport/mcpHttp.js';

describe('session tool over /mcp', () => {
  let t: Tuicd;
  const work = mkdtempSync(join(tmpdir(), 'tuicd-session-mcp-'));
  before(async () => {
    t = await Tuicd.start({ env: { SHELL: '/bin/bash' } });
  });
  after(async () => {
    await t.stop();
    rmSync(work, { recursive: true, force: true });
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool answers are free-form JSON
  const tool = async (name: string, args: object, headers: Record<string, string> = {}): Promise<any> => {
    const answer = await rpc(t, 'tools/call', { name, arguments: args }, headers);
    assert.equal(answer.status, 200, answer.text);
    const result = answer.json().result;
    const value = JSON.parse(result.content[0].text);
    assert.equal(result.isError, 'error' in value, 'isError follows the error key');
    return value;
  };

  /**
   * As the tool tells clients: a refusal with retry_safe (on a loaded machine the prompt can arrive after
   * the 500 ms of quiet a wait saw, making the shell busy again) means wait until idle and submit again.
   */
  const submitWhenIdle = async (id: string, input: string) => {
    let receipt = await tool('session', { action: 'submit', session_id: id, input });
    for (let attempt = 0; attempt < 5 && !receipt.submitted && receipt.retry_safe && receipt.reason === 'shell_busy'; attempt++) {
      await tool('session', { action: 'wait', session_id: id, until: 'idle', timeout_ms: 20_000 });
      receipt = await tool('session', { action: 'submit', session_id: id, input });
    }
    return receipt;
  };

  it('creates, submits, reads and waits; a bound caller sees itself and cannot close itself; exit 3 is reported', async () => {
    const { session_id: id } = await tool('session', { action: 'create', cwd: work });
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal((await tool('session', { action: 'wait', session_id: id, until: 'idle', timeout_ms: 20_000 })).met, true);
    const receipt = await submitWhenIdle(id, 'echo mcp-$((6*7))');
    assert.equal(receipt.acknowledged, true, JSON.stringify(receipt));
    assert.equal((await tool('session', { action: 'wait', session_id: id, until: 'idle', timeout_ms: 20_000 })).met, true);
    assert.ok((await tool('session', { action: 'output', session_id: id })).data.includes('mcp-42'));

    // The session's tuic_session is its id: an agent inside it initializes with that identity.
    const { id: mcpId } = await initialize(t, { clientInfo: { name: 'inside-agent', version: '1' } }, { 'x-tuic-session': id });
    const bound = { 'Mcp-Session-Id': mcpId };
    const mine = (await tool('session', { action: 'list' }, bound)).find((e: { session_id: string }) => e.session_id === id);
    assert.equal(mine.is_caller, true);
    assert.deepEqual(await tool('session', { action: 'close', session_id: id }, bound), {
      error: 'Cannot close own session. Use exit to terminate yourself.',
      code: 'forbidden',
    });
    assert.equal(
      (await tool('session', { action: 'list' })).find((e: { session_id: string }) => e.session_id === id).is_caller,
      false,
      'an unbound caller is not it',
    );

    const exitReceipt = await submitWhenIdle(id, 'exit 3');
    assert.equal(exitReceipt.submitted, true, JSON.stringify(exitReceipt));
    assert.deepEqual(await tool('session', { action: 'wait', session_id: id, until: 'exited', timeout_ms: 20_000 }), {
      met: true,
      timed_out: false,
      until: 'exited',
      shell_state: 'idle',
      exit_code: 3,
    });
    assert.deepEqual(await tool('task', { action: 'get', task_id: 'no-such-task' }), { error: 'unknown or expired task_id', code: 'not_found' });
  });
});
