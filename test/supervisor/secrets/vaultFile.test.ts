import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile, chmod, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { emptyVault, parseVault, VaultFile } from '../../../supervisor/secrets/vaultFile.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tuicd-vault-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function isCode(code: string) {
  return (err: unknown): boolean => err instanceof SupervisorError && err.code === code;
}

describe('VaultFile', () => {
  it('reads a missing file as an empty vault without creating it', async () => {
    const vault = new VaultFile(join(root, 'cfg', 'vault.json'));
    await vault.prepare();
    assert.deepEqual(await vault.read(), emptyVault());
    assert.deepEqual(await readdir(join(root, 'cfg')), []);
  });

  it('creates the directory 0700 and the file 0600, leaving no temp or lock files', async () => {
    const dir = join(root, 'a', 'b');
    const vault = new VaultFile(join(dir, 'vault.json'));
    await vault.prepare();
    await vault.update(async (doc) => {
      doc.secrets['k'] = 'v';
    });
    if (process.platform !== 'win32') {
      assert.equal((await stat(dir)).mode & 0o777, 0o700);
      assert.equal((await stat(vault.path)).mode & 0o777, 0o600);
    }
    assert.deepEqual(await readdir(dir), ['vault.json']);
    assert.equal((await vault.read()).secrets['k'], 'v');
  });

  it('tightens an existing group/world-readable directory and vault', { skip: process.platform === 'win32' }, async () => {
    const dir = join(root, 'loose');
    await mkdir(dir, { mode: 0o755 });
    await chmod(dir, 0o755);
    await writeFile(join(dir, 'vault.json'), JSON.stringify(emptyVault()), { mode: 0o644 });
    await chmod(join(dir, 'vault.json'), 0o644);
    await new VaultFile(join(dir, 'vault.json')).prepare();
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    assert.equal((await stat(join(dir, 'vault.json'))).mode & 0o777, 0o600);
  });

  it('does not write when the change leaves the document equal', async () => {
    const vault = new VaultFile(join(root, 'vault.json'));
    await vault.update(async () => undefined);
    assert.deepEqual(await readdir(root), []);
  });

  it('a throwing change writes nothing and later updates still run', async () => {
    const vault = new VaultFile(join(root, 'vault.json'));
    await assert.rejects(
      vault.update(async (doc) => {
        doc.secrets['lost'] = 'x';
        throw new Error('keyring said no');
      }),
      /keyring said no/,
    );
    assert.deepEqual(await readdir(root), []);
    await vault.update(async (doc) => {
      doc.secrets['kept'] = 'y';
    });
    assert.deepEqual((await vault.read()).secrets, { kept: 'y' });
  });

  it('serialises concurrent updates so none is lost', async () => {
    const vault = new VaultFile(join(root, 'vault.json'));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        vault.update(async (doc) => {
          doc.secrets[`n${i}`] = String(i);
        }),
      ),
    );
    assert.equal(Object.keys((await vault.read()).secrets).length, 20);
    assert.deepEqual(await readdir(root), ['vault.json']);
  });

  it('two VaultFile objects on one path (two processes) compose through the lock', async () => {
    const path = join(root, 'vault.json');
    const a = new VaultFile(path);
    const b = new VaultFile(path);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? a : b).update(async (doc) => {
          doc.secrets[`n${i}`] = String(i);
        }),
      ),
    );
    assert.equal(Object.keys((await a.read()).secrets).length, 10);
  });

  it('peek parses again only when the file changed, and always sees what another process wrote', async () => {
    const path = join(root, 'vault.json');
    const mine = new VaultFile(path);
    const other = new VaultFile(path);
    assert.deepEqual((await mine.peek()).secrets, {}, 'no file yet');
    await mine.update(async (doc) => {
      doc.secrets['a'] = '1';
    });
    const first = await mine.peek();
    assert.equal(first.secrets['a'], '1');
    assert.equal(await mine.peek(), first, 'unchanged file: the same parsed document');
    await other.update(async (doc) => {
      doc.secrets['a'] = '2';
    });
    assert.equal((await mine.peek()).secrets['a'], '2', 'a write by another process is seen at once');
    // Rewritten in place with the same size (no rename): the mtime still tells.
    const text = (await readFile(path, 'utf8')).replace('"2"', '"3"');
    await new Promise((r) => setTimeout(r, 5));
    await writeFile(path, text);
    assert.equal((await mine.peek()).secrets['a'], '3');
    await rm(path);
    assert.deepEqual((await mine.peek()).secrets, {}, 'a removed file is an empty vault');
  });

  it('refuses invalid JSON with VAULT_CORRUPT naming the file, and never overwrites it', async () => {
    const path = join(root, 'vault.json');
    await writeFile(path, '{"version":1,"secrets":{"session_token":"abc"', { mode: 0o600 });
    const vault = new VaultFile(path);
    await assert.rejects(vault.read(), (err: unknown) => isCode(ErrorCode.VAULT_CORRUPT)(err) && (err as Error).message.includes(path));
    await assert.rejects(
      vault.update(async (doc) => {
        doc.secrets['x'] = 'y';
      }),
      isCode(ErrorCode.VAULT_CORRUPT),
    );
    assert.equal(await readFile(path, 'utf8'), '{"version":1,"secrets":{"session_token":"abc"');
  });

  it('refuses wrong shapes and versions', () => {
    const bad = ['[]', '"x"', '{"version":2}', '{}', '{"version":1,"secrets":{"a":1}}', '{"version":1,"keyring":[]}', '{"version":1,"stale":"x"}'];
    for (const text of bad) {
      assert.throws(() => parseVault(text, '/p/vault.json'), isCode(ErrorCode.VAULT_CORRUPT), text);
    }
    assert.deepEqual(parseVault('{"version":1}', '/p'), emptyVault());
  });
});
