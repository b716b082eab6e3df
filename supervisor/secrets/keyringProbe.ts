// Child-process entry point of probeKeyring: a "ready" line once node and the addon are loaded, then
// one set/get/delete round trip on a throwaway account and its verdict as one JSON line on stdout.
// Out of process so a hung D-Bus can be killed (see probeKeyring). argv: <service> <account> <backend>

import { randomBytes } from 'node:crypto';

import { entryOptions, platformKeyring, PROBE_READY_LINE, type KeyringBackendName } from './keyringBackend.js';

let announced = false;

/** Resolves once the line is handed to the OS: pipes are asynchronous on macOS and Windows. */
function writeLine(line: string): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}

/** From here on the parent's probe timeout runs: node start-up and the addon load are not the keyring's time. */
async function announceReady(): Promise<void> {
  if (announced) return;
  announced = true;
  await writeLine(PROBE_READY_LINE);
}

async function roundTrip(service: string, account: string, backend: KeyringBackendName): Promise<string | null> {
  const { AsyncEntry } = await import('@napi-rs/keyring');
  await announceReady();
  const entry = new AsyncEntry(service, account, entryOptions(backend));
  const value = randomBytes(16).toString('hex');
  await entry.setPassword(value);
  try {
    const readBack = await entry.getPassword();
    if (readBack !== value) return 'a value written to it read back differently';
  } finally {
    await entry.deleteCredential();
  }
  return null;
}

async function verdict(): Promise<{ ok: boolean; reason?: string }> {
  const [service, account, backend] = process.argv.slice(2);
  if (!service || !account || backend !== platformKeyring()) {
    return { ok: false, reason: `bad probe arguments: ${JSON.stringify(process.argv.slice(2))}` };
  }
  try {
    const problem = await roundTrip(service, account, backend);
    return problem === null ? { ok: true } : { ok: false, reason: problem };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

const result = await verdict();
await announceReady(); // failed before touching the keyring (bad arguments, addon not loadable)
await writeLine(JSON.stringify(result));
