// Fallback when no Secret Service answers. Linux only: elsewhere the native keyring is always there.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { CredentialStore, STORE_ENV } from '../../../supervisor/secrets/credentialStore.js';
import { entryOptions, platformKeyring } from '../../../supervisor/secrets/keyringBackend.js';

const PROBE_TIMEOUT_MS = 600;
/** Node start-up of the probe child is not counted by the probe timeout; on a loaded box it takes ~1 s. */
const START_MARGIN_MS = 4_000;

let root: string;

function envWithBus(address: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DBUS_SESSION_BUS_ADDRESS: address };
  delete env[STORE_ENV];
  return env;
}

describe('platform keyring choice', () => {
  it('maps platforms to backend names', () => {
    assert.equal(platformKeyring('linux'), 'secret-service');
    assert.equal(platformKeyring('darwin'), 'macos-keychain');
    assert.equal(platformKeyring('win32'), 'windows-credential-manager');
    assert.equal(platformKeyring('aix'), null);
  });

  it('pins Linux to the Secret Service, never the non-persistent keyutils fallback', () => {
    assert.deepEqual(entryOptions('secret-service'), { linux: { store: 'secret-service' } });
    assert.equal(entryOptions('macos-keychain'), undefined);
  });
});

describe('fallback without a Secret Service', { skip: process.platform !== 'linux' && 'Linux only' }, () => {
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'tuicd-keyring-fallback-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('no session bus socket → file backend with the D-Bus error as reason, quickly', async () => {
    const started = Date.now();
    const store = await CredentialStore.open({
      configDir: join(root, 'nobus'),
      probeTimeoutMs: PROBE_TIMEOUT_MS,
      env: envWithBus(`unix:path=${join(root, 'no-such-bus.sock')}`),
    });
    const elapsed = Date.now() - started;
    assert.equal(store.backend, 'file');
    assert.match(store.reason ?? '', /Secret Service/);
    assert.match(store.reason ?? '', /no-such-bus\.sock|No such file/);
    assert.ok(store.reason?.includes(store.vaultPath), 'the reason names the file that now holds the secrets');
    assert.ok(elapsed < PROBE_TIMEOUT_MS + START_MARGIN_MS, `took ${elapsed} ms`);
    await store.set('session_token', 'kept');
    assert.equal(await store.get('session_token'), 'kept');
  });

  it('a bus that accepts but never answers → file backend after the probe timeout, probe child killed', async () => {
    const sockets = new Set<Socket>();
    let closedConnections = 0;
    const server: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', () => undefined); // swallow the D-Bus handshake, answer nothing
      socket.on('close', () => closedConnections++);
    });
    const path = join(root, 'hung-bus.sock');
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      const started = Date.now();
      const store = await CredentialStore.open({ configDir: join(root, 'hung'), probeTimeoutMs: PROBE_TIMEOUT_MS, env: envWithBus(`unix:path=${path}`) });
      const elapsed = Date.now() - started;
      assert.equal(store.backend, 'file');
      assert.match(store.reason ?? '', new RegExp(`did not answer within ${PROBE_TIMEOUT_MS} ms`));
      assert.ok(elapsed >= PROBE_TIMEOUT_MS, `took ${elapsed} ms`);
      assert.ok(elapsed < PROBE_TIMEOUT_MS + START_MARGIN_MS, `took ${elapsed} ms`);
      // The probe child held the only connection; it is gone once the kernel closes it.
      const deadline = Date.now() + 2_000;
      while (closedConnections < sockets.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(sockets.size >= 1, 'the probe did reach the fake bus');
      assert.equal(closedConnections, sockets.size, 'the probe child was killed');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('TUIC_CREDENTIAL_STORE=keyring without a Secret Service fails with KEYRING_UNAVAILABLE', async () => {
    const env = { ...envWithBus(`unix:path=${join(root, 'no-such-bus.sock')}`), [STORE_ENV]: 'keyring' };
    await assert.rejects(
      CredentialStore.open({ configDir: join(root, 'forced'), probeTimeoutMs: PROBE_TIMEOUT_MS, env }),
      (err: unknown) => err instanceof SupervisorError && err.code === ErrorCode.KEYRING_UNAVAILABLE && err.message.includes(STORE_ENV),
    );
  });
});
