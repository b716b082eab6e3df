/**
 * The TLS certificate and key check that runs before the TCP listener binds: real files made by
 * openssl, each bad case refused with the file it is about and what is wrong with it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { loadTlsCredentials } from '../../../supervisor/config/tlsCredentials.js';
import { CertDir, type TestCert } from '../../helpers/tlsCert.js';

describe('TLS credentials check', () => {
  const certs = new CertDir();
  let good: TestCert;
  let other: TestCert;
  before(() => {
    good = certs.make('good');
    other = certs.make('other');
  });
  after(() => certs.remove());

  const manual = (cert_path: string, key_path: string) => ({ mode: 'manual' as const, cert_path, key_path });

  /** Asserts the check refuses, naming `file`, with a message matching `why`. */
  const refuses = (cert: string, key: string, file: string, why: RegExp) =>
    assert.throws(
      () => loadTlsCredentials(manual(cert, key), certs.dir),
      (err: unknown) => {
        assert.ok(err instanceof SupervisorError, String(err));
        assert.equal(err.code, ErrorCode.TLS_CREDENTIALS_INVALID);
        assert.ok(err.message.includes(file), `names ${file}: ${err.message}`);
        assert.match(err.message, why);
        return true;
      },
    );

  it('is null when TLS is off', () => {
    assert.equal(loadTlsCredentials({ mode: 'off' }, certs.dir), null);
  });

  it('reads a matching pair, relative paths from the config directory', () => {
    const abs = loadTlsCredentials(manual(good.certPath, good.keyPath), '/nonexistent');
    assert.ok(abs?.cert.equals(good.cert));
    const rel = loadTlsCredentials(manual(basename(good.certPath), basename(good.keyPath)), certs.dir);
    assert.ok(rel?.cert.equals(good.cert));
  });

  it('refuses a missing file, saying which setting names it', () => {
    const missing = join(certs.dir, 'nope.pem');
    refuses(missing, good.keyPath, missing, /TLS certificate file .* \(services\.tls\.cert_path\): not found/);
    refuses(good.certPath, missing, missing, /TLS key file .* \(services\.tls\.key_path\): not found/);
  });

  it('refuses a directory', () => {
    refuses(certs.dir, good.keyPath, certs.dir, /is a directory/);
  });

  it('refuses an unreadable file', { skip: process.getuid?.() === 0 && 'root reads any file' }, () => {
    const locked = join(certs.dir, 'locked-key.pem');
    writeFileSync(locked, '');
    chmodSync(locked, 0o000);
    refuses(good.certPath, locked, locked, /not readable \(permission denied\)/);
  });

  it('refuses files that are not PEM, or the two swapped', () => {
    const text = join(certs.dir, 'notes.txt');
    writeFileSync(text, 'not a certificate\n');
    refuses(text, good.keyPath, text, /not a PEM certificate/);
    refuses(good.certPath, text, text, /not a PEM private key/);
    refuses(good.keyPath, good.certPath, good.keyPath, /not a PEM certificate/);
  });

  it('refuses PEM armour around garbage', () => {
    const fake = join(certs.dir, 'fake-cert.pem');
    writeFileSync(fake, '-----BEGIN CERTIFICATE-----\nAAAAbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n');
    refuses(fake, good.keyPath, fake, /not a valid certificate/);
    const fakeKey = join(certs.dir, 'fake-key.pem');
    writeFileSync(fakeKey, '-----BEGIN PRIVATE KEY-----\nAAAAbm90IGEga2V5\n-----END PRIVATE KEY-----\n');
    refuses(good.certPath, fakeKey, fakeKey, /not a valid private key/);
  });

  it('refuses a key that belongs to another certificate', () => {
    refuses(
      good.certPath,
      other.keyPath,
      other.keyPath,
      new RegExp(`does not match the certificate in ${good.certPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });

  it('refuses an encrypted key, saying it must be unencrypted', () => {
    const sub = join(certs.dir, 'enc');
    mkdirSync(sub);
    const encrypted = join(sub, 'key.pem');
    execFileSync('openssl', ['pkey', '-in', good.keyPath, '-aes256', '-passout', 'pass:secret', '-out', encrypted], { stdio: 'ignore' });
    refuses(good.certPath, encrypted, encrypted, /encrypted; tuicd needs it unencrypted/);
  });
});
