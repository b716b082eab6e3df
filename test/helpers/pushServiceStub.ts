/**
 * A loopback stand-in for a browser vendor's push service: HTTPS on 127.0.0.1 with a certificate
 * made by `openssl` for the test, recording each push; plus a browser-side subscription (a P-256
 * key pair and an auth secret) that decrypts an aes128gcm payload (RFC 8291 / RFC 8188) by hand,
 * independently of the web-push package that encrypted it.
 */
import { execFileSync } from 'node:child_process';
import { createDecipheriv, createECDH, createHmac, randomBytes } from 'node:crypto';
import type { ECDH } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReceivedPush {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export class PushServiceStub {
  readonly received: ReceivedPush[] = [];
  /** Path → status to answer (default 201). */
  readonly statusFor = new Map<string, number>();
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    readonly certPath: string,
    readonly cert: Buffer,
    private readonly dir: string,
  ) {}

  static async start(): Promise<PushServiceStub> {
    const dir = mkdtempSync(join(tmpdir(), 'tuicd-push-stub-'));
    const certPath = join(dir, 'cert.pem');
    const keyPath = join(dir, 'key.pem');
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
        '-keyout',
        keyPath,
        '-out',
        certPath,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(certPath);
    let stub!: PushServiceStub;
    const server = createServer({ cert, key: readFileSync(keyPath) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        stub.received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(stub.statusFor.get(req.url ?? '') ?? 201).end();
        for (const w of stub.waiters.splice(0)) w();
      });
    });
    stub = new PushServiceStub(server, certPath, cert, dir);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return stub;
  }

  endpoint(path: string): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > end) throw new Error(`push stub got ${this.received.length} pushes, expected ${count}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** What a browser holds for one push subscription. */
export class BrowserSubscription {
  private readonly ecdh: ECDH = createECDH('prime256v1');
  readonly auth = randomBytes(16);
  readonly publicKey: Buffer;

  constructor(readonly endpoint: string) {
    this.publicKey = this.ecdh.generateKeys();
  }

  toJSON(): { endpoint: string; keys: { p256dh: string; auth: string } } {
    return { endpoint: this.endpoint, keys: { p256dh: this.publicKey.toString('base64url'), auth: this.auth.toString('base64url') } };
  }

  /** RFC 8291 §3.4 + RFC 8188: header (salt, rs, keyid = the sender's public key), then one AES-128-GCM record. */
  decrypt(body: Buffer): string {
    const salt = body.subarray(0, 16);
    const idlen = body.readUInt8(20);
    const senderKey = body.subarray(21, 21 + idlen);
    const record = body.subarray(21 + idlen);
    const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();
    const shared = this.ecdh.computeSecret(senderKey);
    const prkKey = hmac(this.auth, shared);
    const ikm = hmac(prkKey, Buffer.concat([Buffer.from('WebPush: info\0'), this.publicKey, senderKey, Buffer.from([1])]));
    const prk = hmac(salt, ikm);
    const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01', 'latin1')).subarray(0, 16);
    const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01', 'latin1')).subarray(0, 12);
    const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
    decipher.setAuthTag(record.subarray(record.length - 16));
    const plain = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
    // The last record ends with the delimiter 0x02, then zero padding.
    const end = plain.lastIndexOf(2);
    if (end < 0) throw new Error('no padding delimiter in the decrypted record');
    return plain.subarray(0, end).toString('utf8');
  }
}
