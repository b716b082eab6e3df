/**
 * A TCP port is never shared. uWS sets SO_REUSEPORT unless told otherwise, so a second tuicd on the
 * same port used to bind it too and the kernel split connections between the two; the documented
 * walk to port+1 never ran.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';

import { holdThreePorts } from '../../helpers/ports.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

/** A port whose next two are free too (held, then let go). */
async function freeRun(): Promise<number> {
  const ports = await holdThreePorts();
  await ports.close();
  return ports.base;
}

describe('exclusive TCP bind', { timeout: 60_000 }, () => {
  it('a second tuicd on a taken port moves to port+1, and every connection to the port reaches the first', async () => {
    const base = await freeRun();
    // /health over TCP names its instance only to a caller with credentials.
    const config = { services: { server: { enabled: true, port: base }, auth: { username: 'u', password_hash: await hash('p', { cost: 4 }) } } };
    const auth = { Authorization: 'Basic ' + Buffer.from('u:p').toString('base64') };
    const a = await Tuicd.start({ config });
    let b: Tuicd | undefined;
    try {
      assert.equal(a.tcpPort, base);
      b = await Tuicd.start({ config, args: ['--instance', 'second'] });
      assert.equal(b.tcpPort, base + 1, 'the second walked to the next port');
      const idA = (await a.socket('GET', '/health')).json().instance_id;
      const idB = (await b.socket('GET', '/health')).json().instance_id;
      assert.notEqual(idA, idB);
      for (let i = 0; i < 20; i++) assert.equal((await a.tcp('GET', '/health', undefined, auth, base)).json().instance_id, idA, `connection ${i} to ${base}`);
      assert.equal((await b.tcp('GET', '/health', undefined, auth, base + 1)).json().instance_id, idB);
    } finally {
      await b?.stop();
      await a.stop();
    }
  });
});
