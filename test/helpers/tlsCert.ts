/**
 * Throwaway self-signed certificates made by the real openssl in a temp dir, and HTTPS requests to
 * 127.0.0.1 that trust only such a certificate: its subjectAltName is IP:127.0.0.1, so the client
 * verifies the chain and the name for real (no rejectUnauthorized: false anywhere).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { request as httpRequestFn } from 'node:http';
import { request as httpsRequestFn, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { SseClient } from './sseClient.js';
import { httpRequest, type HttpAnswer } from './tuicdProcess.js';

export interface TestCert {
  certPath: string;
  keyPath: string;
  /** The certificate's PEM: a client's only trusted CA. */
  cert: Buffer;
}

/** A temp dir holding one or more certificate/key pairs; remove() deletes it. */
export class CertDir {
  readonly dir = mkdtempSync(join(tmpdir(), 'tuicd-tls-'));

  /** A new EC P-256 pair, `<name>-cert.pem` and `<name>-key.pem`, valid a day. */
  make(name = 'server'): TestCert {
    const certPath = join(this.dir, `${name}-cert.pem`);
    const keyPath = join(this.dir, `${name}-key.pem`);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-days',
        '1',
        '-keyout',
        keyPath,
        '-out',
        certPath,
      ],
      { stdio: 'ignore' },
    );
    return { certPath, keyPath, cert: readFileSync(certPath) };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** HTTPS on 127.0.0.1:`port`, trusting `cert` only. */
export function httpsRequest(
  cert: Buffer,
  port: number,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const opts: RequestOptions = { host: '127.0.0.1', port, method, path, headers, ca: cert };
  return httpRequest(opts, body, httpsRequestFn as typeof httpRequestFn);
}

/** An SSE stream over HTTPS on 127.0.0.1:`port`, trusting `cert` only. */
export function httpsSse(cert: Buffer, port: number, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const opts: RequestOptions = { host: '127.0.0.1', port, path, headers, ca: cert };
  return SseClient.open(opts, httpsRequestFn as typeof httpRequestFn);
}
