/**
 * Output no longer pays for agent detection: while one program floods its terminal, tuicd looks
 * at the foreground process group once a second (one /proc stat read) and names the program again
 * only when that group changes. Counted by GET /metrics (`foreground_checks`,
 * `agent_classifications`) over a real PTY running a real program that prints for 4.5 s.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { sessionSuite } from '../../helpers/sessionSuite.js';
import { waitFor } from '../../helpers/poll.js';

/** Its last line is built at run time: the typed command, echoed, must not already contain it. */
const PRINTER = `let i = 0; const t = setInterval(() => { console.log('line ' + i); if (++i === 45) { clearInterval(t); console.log('printer ' + 'done'); } }, 100);`;

describe('agent detection on output', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-agent-recheck-');
  const metrics = async () => (await suite.t.socket('GET', '/metrics')).json<Record<string, number>>();

  it('a program printing for seconds: a group check a second, the program classified once', async () => {
    const s = await suite.create();
    await suite.write(s.session_id, 'echo ready\n');
    await waitFor(async () => JSON.stringify(await suite.raw(s.session_id)).includes('ready'), 'the shell answered');
    const before = await metrics();
    await suite.write(s.session_id, `${JSON.stringify(process.execPath)} -e ${JSON.stringify(PRINTER)}\n`);
    await waitFor(async () => JSON.stringify(await suite.raw(s.session_id)).includes('printer done'), 'the printer finished', 20_000);
    const after = await metrics();
    const checks = after['foreground_checks']! - before['foreground_checks']!;
    const classifications = after['agent_classifications']! - before['agent_classifications']!;
    assert.ok(checks >= 3, `foreground checks while it printed: ${checks}`);
    // Once when the printer took the terminal (its group is new); the shell prompt's return may add one.
    assert.ok(classifications <= 2, `classifications: ${classifications} for ${checks} checks`);
  });
});
