/**
 * Reads and checks the certificate and key `services.tls` names, before the TCP listener binds and
 * before a config save that touches `services.tls` is written: a missing, unreadable or non-PEM
 * file, or a key that does not belong to the certificate, is refused with an error naming the file
 * and its field, instead of every handshake failing later. Config owns it (the save needs it); the
 * HTTP listeners import it from here.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import type { DeepReadonly, TlsConfig } from './schema.js';

/** A PEM certificate chain and its unencrypted private key, checked to belong together. */
export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
}

const CERT_PEM = /-----BEGIN CERTIFICATE-----/;
const KEY_PEM = /-----BEGIN (?:RSA |EC |ENCRYPTED )?PRIVATE KEY-----/;

/** The refused file and its config field (`cert_path` or `key_path`), so a config save can name the field. */
export interface TlsCredentialsErrorData {
  path: string;
  field: 'cert_path' | 'key_path';
}

function invalid(message: string, what: 'certificate' | 'key', file: string): SupervisorError {
  const data: TlsCredentialsErrorData = { path: file, field: what === 'certificate' ? 'cert_path' : 'key_path' };
  return new SupervisorError(ErrorCode.TLS_CREDENTIALS_INVALID, message, data);
}

/** What the file is, for messages: `TLS certificate file /x/c.pem (services.tls.cert_path)`. */
function label(what: 'certificate' | 'key', path: string): string {
  return `TLS ${what} file ${path} (services.tls.${what === 'certificate' ? 'cert' : 'key'}_path)`;
}

function readPem(what: 'certificate' | 'key', path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'not found'
        : code === 'EACCES' || code === 'EPERM'
          ? 'not readable (permission denied)'
          : code === 'EISDIR'
            ? 'is a directory'
            : (err as Error).message;
    throw invalid(`${label(what, path)}: ${why}`, what, path);
  }
}

/** The absolute certificate and key paths of a manual TLS setting; relative ones are from `baseDir`. */
export function tlsFilePaths(settings: DeepReadonly<Extract<TlsConfig, { mode: 'manual' }>>, baseDir: string): { cert: string; key: string } {
  return { cert: resolve(baseDir, settings.cert_path), key: resolve(baseDir, settings.key_path) };
}

/**
 * Null when TLS is off. Relative paths are taken from `baseDir` (the config directory), not from
 * wherever tuicd happened to be started.
 */
export function loadTlsCredentials(settings: DeepReadonly<TlsConfig>, baseDir: string): TlsCredentials | null {
  if (settings.mode === 'off') return null;
  const { cert: certPath, key: keyPath } = tlsFilePaths(settings, baseDir);
  const cert = readPem('certificate', certPath);
  const key = readPem('key', keyPath);
  const certText = cert.toString('latin1');
  const keyText = key.toString('latin1');
  if (!CERT_PEM.test(certText))
    throw invalid(`${label('certificate', certPath)}: not a PEM certificate (no "-----BEGIN CERTIFICATE-----" line)`, 'certificate', certPath);
  if (!KEY_PEM.test(keyText)) throw invalid(`${label('key', keyPath)}: not a PEM private key (no "-----BEGIN … PRIVATE KEY-----" line)`, 'key', keyPath);
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(keyText)) {
    throw invalid(`${label('key', keyPath)}: the key is encrypted; tuicd needs it unencrypted (e.g. openssl pkey -in key.pem -out plain.pem)`, 'key', keyPath);
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw invalid(`${label('certificate', certPath)}: not a valid certificate: ${(err as Error).message}`, 'certificate', certPath);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw invalid(`${label('key', keyPath)}: not a valid private key: ${(err as Error).message}`, 'key', keyPath);
  }
  // The first certificate of the chain is the server's own: its public key must be this key's.
  if (!x509.checkPrivateKey(privateKey)) throw invalid(`${label('key', keyPath)}: does not match the certificate in ${certPath}`, 'key', keyPath);
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw invalid(`TLS certificate ${certPath} with key ${keyPath}: refused by OpenSSL: ${(err as Error).message}`, 'certificate', certPath);
  }
  return { cert, key };
}
