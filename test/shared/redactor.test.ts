/** Secret redaction: one positive example per kind, look-alikes it must keep (hashes, checksums, plain settings), PEM blocks, linear time. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { marker, RedactConstants, redactLineText, Redactor, redactSecrets } from '../../shared/redactor.js';

const R = (kind: string): string => `[REDACTED:${kind}]`;
const rep = (s: string, n: number): string => s.repeat(n);
const HEX40 = rep('3f2a9d1e8c', 4);
const HEX64 = rep('a1b2c3d4', 8);

/** [kind, input, expected output]. Secrets are built from repeats so no real-looking key sits in the repo. */
const POSITIVES: Array<[string, string, string]> = [
  ['openai', `key: sk-${rep('a1B2', 6)} ok`, `key: ${R('openai')} ok`],
  ['openai', `"sk-proj-${rep('x9Y8_', 10)}"`, `"${R('openai')}"`],
  ['anthropic', `use sk-ant-api03-${rep('Qw-', 15)}AA`, `use ${R('anthropic')}`],
  ['stripe', `stripe sk_live_${rep('4eC3', 6)}`, `stripe ${R('stripe')}`],
  ['stripe', `rk_live_${rep('Zx9', 8)}.`, `${R('stripe')}.`],
  ['aws_access_key', 'id AKIAIOSFODNN7EXAMPLE,', `id ${R('aws_access_key')},`],
  ['aws_access_key', 'ASIAY34FZKBOKMUTVV7A', R('aws_access_key')],
  ['github_pat', `ghp_${rep('A1b2', 9)}`, R('github_pat')],
  ['github_oauth', `token gho_${rep('Z9y8', 9)}`, `token ${R('github_oauth')}`],
  ['github_token', `ghs_${rep('Q7w6', 10)}`, R('github_token')],
  ['github_token', `user-to-server ghu_${rep('M3n4', 9)} ok`, `user-to-server ${R('github_token')} ok`],
  ['github_token', `refresh=ghr_${rep('K5j6', 10)}`, `refresh=${R('github_token')}`],
  ['github_pat', `github_pat_11ABCDEFG0_${rep('x1Y2', 20)}`, R('github_pat')],
  ['gitlab', `glpat-${rep('xY-z', 5)}`, R('gitlab')],
  ['slack', 'xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOp', R('slack')],
  ['slack', `SLACK xoxp-${rep('12ab-', 4)}`, `SLACK ${R('slack')}`],
  ['google_oauth', `ya29.a0AfH6SMB${rep('x_Y-', 8)}`, R('google_oauth')],
  ['google_api_key', `key=AIza${rep('SyD-', 8)}abc&x=1`, `key=${R('google_api_key')}&x=1`],
  ['npm', `npm_${rep('a1B2', 9)}`, R('npm')],
  ['huggingface', `hf_${rep('AbCd', 8)}xy`, R('huggingface')],
  ['jwt', 'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end', `jwt ${R('jwt')} end`],
  ['bearer', 'Authorization: Bearer abc.def_ghi-123', `Authorization: Bearer ${R('bearer')}`],
  ['db_url', 'postgres://admin:hunter2@db.internal:5432/app', `postgres://${R('db_url')}@db.internal:5432/app`],
  ['db_url', 'MONGODB+SRV://u:p@ss@cluster0.example.net/db', `MONGODB+SRV://${R('db_url')}@cluster0.example.net/db`],
  ['db_url', 'redis://:secretpw@cache:6379 mysql://root:pw@localhost/x', `redis://${R('db_url')}@cache:6379 mysql://${R('db_url')}@localhost/x`],
  ['db_url', 'DATABASE_URL=sqlite:///var/app.db', `DATABASE_URL=${R('db_url')}`],
  ['hex_secret', `session_id: ${HEX40}`, `session_id: ${R('hex_secret')}`],
  ['hex_secret', `"signature":"${HEX64}"`, `"signature":"${R('hex_secret')}"`],
  ['hex_secret', `Authorization = ${HEX40}`, `Authorization = ${R('hex_secret')}`],
  ['env_secret', 'API_KEY=abc123', `API_KEY=${R('env_secret')}`],
  ['env_secret', 'export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', `export AWS_SECRET_ACCESS_KEY=${R('env_secret')}`],
  ['env_secret', 'db_password = "two words" # note', `db_password = ${R('env_secret')} # note`],
  ['env_secret', 'PASSWD=x MY_CREDENTIALS=y github_token=z', `PASSWD=${R('env_secret')} MY_CREDENTIALS=${R('env_secret')} github_token=${R('env_secret')}`],
  ['env_secret', `STRIPE_KEY=${rep('aB3+', 6)}`, `STRIPE_KEY=${R('env_secret')}`],
  ['env_secret', `API_KEY=sk-proj-${rep('a1B2', 10)}`, `API_KEY=${R('env_secret')}`],
  ['docker_auth', '{"auths": {"ghcr.io": {"auth": "dXNlcjpwYXNzd29yZA=="}}}', `{"auths": {"ghcr.io": {"auth": "${R('docker_auth')}"}}}`],
  ['docker_auth', '"identitytoken": "eyJabc.def.ghi"', `"identitytoken": "${R('docker_auth')}"`],
  ['npmrc_auth', '//registry.npmjs.org/:_authToken=abcdef-1234', `//registry.npmjs.org/:_authToken=${R('npmrc_auth')}`],
  ['npmrc_auth', '_auth = dXNlcjpw', `_auth = ${R('npmrc_auth')}`],
  ['netrc', 'machine example.com login alice password s3cr3t!', `machine example.com login alice password ${R('netrc')}`],
];

for (const [kind, input, expected] of POSITIVES) {
  test(`redacts ${kind}: ${input.slice(0, 40)}`, () => {
    assert.equal(redactLineText(input), expected);
    assert.equal(new Redactor().line(input), expected);
  });
}

const NON_GOALS: Array<[string, string]> = [
  ['git SHA (40 hex)', `commit ${HEX40} (HEAD -> main)`],
  ['sha256 (64 hex)', `sha256:${HEX64}  app.tar.gz`],
  ['128 hex', `digest ${HEX64}${HEX64}`],
  ['npm integrity', `"integrity": "sha512-${rep('AbC+dEf/', 11)}==",`],
  ['Cargo.lock checksum', `checksum = "${HEX64}"`],
  ['DATABASE_HOST', 'DATABASE_HOST=db.internal'],
  ['PATH', 'PATH=/usr/local/bin:/usr/bin:/bin'],
  ['PORT', 'PORT=5432'],
  ['Docker "auths"', '{"auths": {"https://index.docker.io/v1/": {}}}'],
  ['a branch name with sk- inside', 'git checkout task-implement-redaction-for-the-pty-host'],
  ['a short sk- word', 'ask-me sk-short'],
  ['a short _KEY value', 'FOO_KEY=short'],
  ['comparison, not assignment', 'if (token == other) return;'],
  ['a URL without credentials', 'postgres://db.internal:5432/app and https://user@example.com/x'],
  ['Bearer alone', 'uses Bearer'],
  ['unicode text', '→ café 日本語 ✓ 🎉'],
];

for (const [name, input] of NON_GOALS) {
  test(`keeps ${name}`, () => {
    assert.equal(redactLineText(input), input);
  });
}

test('unicode around a secret is preserved', () => {
  assert.equal(redactLineText(`→ café sk-${rep('Ab1', 8)} ✓ 日本`), `→ café ${R('openai')} ✓ 日本`);
});

test('marker() is the documented shape', () => {
  assert.equal(marker('jwt'), '[REDACTED:jwt]');
});

const KEY_BODY = Array.from({ length: 25 }, (_, i) => rep(String.fromCharCode(65 + i), 64));
const PEM = ['-----BEGIN RSA PRIVATE KEY-----', ...KEY_BODY, 'AAAA==', '-----END RSA PRIVATE KEY-----'];

test('a PEM block across lines becomes one marker', () => {
  assert.equal(redactSecrets(['before', ...PEM, 'after'].join('\n')), ['before', R('pem_private_key'), 'after'].join('\n'));
});

test('text around a PEM block on its first and last lines is kept (and redacted)', () => {
  const lines = [`key: ${PEM[0]!}`, ...KEY_BODY, `${PEM.at(-1)!} then token=abc`];
  assert.equal(redactSecrets(lines.join('\n')), [`key: ${R('pem_private_key')}`, ` then token=${R('env_secret')}`].join('\n'));
});

test('a PEM block on one line (JSON with escaped newlines)', () => {
  const json = `"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQ${rep('AB', 30)}\\n-----END PRIVATE KEY-----\\n", "x": 1`;
  assert.equal(redactLineText(json), json); // the single-line rules do not see PEM...
  assert.equal(new Redactor().line(json), `"private_key": "${R('pem_private_key')}\\n", "x": 1`);
});

test('an encrypted PEM block with headers and an indented body', () => {
  const lines = [
    '  -----BEGIN ENCRYPTED PRIVATE KEY-----',
    '  Proc-Type: 4,ENCRYPTED',
    '  DEK-Info: AES-128-CBC,ABC',
    '',
    ...KEY_BODY.map((l) => `  ${l}`),
    '  -----END ENCRYPTED PRIVATE KEY-----',
    'done',
  ];
  assert.equal(redactSecrets(lines.join('\n')), [`  ${R('pem_private_key')}`, 'done'].join('\n'));
});

test('a lone BEGIN header (grep output) hides the header, not the lines after it', () => {
  const out = redactSecrets(["src/keys.ts:12:  const h = '-----BEGIN OPENSSH PRIVATE KEY-----';", 'src/keys.ts:13:  return h;', 'done'].join('\n'));
  assert.equal(out, [`src/keys.ts:12:  const h = '${R('pem_private_key')}`, 'src/keys.ts:13:  return h;', 'done'].join('\n'));
  assert.equal(redactSecrets(`${PEM[0]!}\nWarning: not a key\nok`), `${R('pem_private_key')}\nWarning: not a key\nok`);
});

test('an unterminated PEM block hides at most PEM_MAX_LINES lines', () => {
  const extra = 30;
  const body = Array.from({ length: RedactConstants.PEM_MAX_LINES + extra }, () => rep('QUJD', 16));
  const out = redactSecrets([PEM[0]!, ...body].join('\n')).split('\n');
  assert.equal(out[0], R('pem_private_key'));
  assert.equal(out.length, 1 + extra);
});

test('peek() redacts a PEM body line without moving the state', () => {
  const r = new Redactor();
  assert.equal(r.line(PEM[0]!), R('pem_private_key'));
  assert.equal(r.peek(KEY_BODY[0]!.slice(0, 20)), '');
  assert.equal(r.peek('-----END RSA PRIV'), '-----END RSA PRIV'); // not a body line, not END yet: shown
  assert.equal(r.line(KEY_BODY[0]!), null, 'still inside the block after peeks');
  assert.equal(r.line(PEM.at(-1)!), null);
  assert.equal(r.line('after'), 'after');
});

test('peek() hides a GitHub token of every prefix while it is still being printed', () => {
  for (const prefix of ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_']) {
    const partial = `${prefix}${rep('a1B2', 3)}`; // shorter than a whole token: no rule matches it yet
    assert.equal(redactLineText(`push ${partial}`), `push ${partial}`, prefix);
    assert.equal(new Redactor().peek(`push ${partial}`), `push ${R('partial_token')}`, prefix);
  }
});

test('100 KB of ordinary text is returned unchanged', () => {
  const text = rep('the quick brown fox: jumps = over the lazy dog. ', 2100);
  assert.equal(redactLineText(text), text);
});

// ---- linear time ------------------------------------------------------------------------------

/** Best of several runs, in ms (the least noisy estimate of the work); stops early once `enough` is reached. */
function timeMs(fn: () => void, runs: number, enough = 0): number {
  let best = Infinity;
  for (let i = 0; i < runs && best > enough; i++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/** Pathological lines, as functions of a length n (characters, roughly). */
const PATHOLOGICAL: Array<[string, (n: number) => string]> = [
  ['sk- repeated', (n) => rep('sk-', n / 3)],
  ['sk- + 19 chars repeated', (n) => rep(' sk-abcdefghijklmnopqrs', n / 23)],
  ['a= repeated', (n) => rep('a=', n / 2)],
  ['TOKEN repeated (no =)', (n) => rep('TOKEN', n / 5)],
  ['TOKEN= repeated', (n) => rep('TOKEN=', n / 6)],
  ['password=" repeated, no closing quote', (n) => rep('password=\' x password=" ', n / 24)],
  ['secret + spaces, no =', (n) => `secret${rep(' ', n)}x`],
  ['word chars then =', (n) => `${rep('a', n)}=x`],
  ['eyJ repeated', (n) => rep('eyJ', n / 3)],
  ['eyJ. repeated', (n) => rep('eyJ.', n / 4)],
  ['JWT-like segments, no third dot', (n) => rep('eyJabcdefghij.abcdefghijk', n / 25)],
  ['postgres:// then no @', (n) => `postgres://${rep('a:b', n / 3)}`],
  ['postgres:// repeated', (n) => rep('postgres://', n / 11)],
  ['Bearer repeated', (n) => rep('Bearer ', n / 7)],
  ['login … passw repeated', (n) => rep('login a passw ', n / 14)],
  ['"auth": " repeated', (n) => rep('"auth": "', n / 9)],
  ['ghp_ / AKIA / AIza repeated', (n) => rep('ghp_AKIAAIza', n / 12)],
  ['separators only', (n) => rep('=:-_.', n / 5)],
  ['-----BEGIN PRIVATE KEY----- repeated', (n) => rep('-----BEGIN PRIVATE KEY-----', n / 27)],
  ['base64 soup', (n) => rep('QmFzZTY0IHNvdXA+/=_-.', n / 21)],
];

/**
 * Small on purpose: a quadratic rule must fail here in seconds, not hang the suite (a running regexp
 * cannot be interrupted). 16 K characters → 64 K: linear ≈ 4× the time, quadratic ≈ 16×.
 */
const SMALL_CHARS = 16 * 1024;
let superlinear = 0;

for (const [name, make] of PATHOLOGICAL) {
  test(`pathological input stays linear: ${name}`, () => {
    const run = (s: string) => () => new Redactor().line(s);
    const small = run(make(SMALL_CHARS));
    const large = run(make(4 * SMALL_CHARS));
    small(); // warm up the regexp code
    // A shared CI machine can stall any single measurement (GC, a neighbour's burst), so a rule is
    // called superlinear only when three fresh measurements in a row all say so: a quadratic rule
    // does every time (≈ 16×), noise does not.
    let tSmall = 0;
    let tLarge = Infinity;
    let bound = 0;
    for (let attempt = 0; attempt < 3 && tLarge >= bound; attempt++) {
      tSmall = timeMs(small, 7);
      // Allow 8× (noise) plus 1 ms of timer/GC slack on these sub-millisecond figures.
      bound = 8 * tSmall + 1;
      tLarge = timeMs(large, 5, bound);
    }
    if (tLarge >= bound) superlinear++;
    assert.ok(tLarge < bound, `4× input took ${(tLarge / tSmall).toFixed(1)}× the time (${tSmall.toFixed(2)} → ${tLarge.toFixed(2)} ms)`);
  });
}

test('a 1 MB line of mixed pathological input finishes quickly', (t) => {
  if (superlinear > 0) return t.skip('a rule is superlinear: 1 MB of it would not finish');
  const line = PATHOLOGICAL.map(([, make]) => make((1024 * 1024) / PATHOLOGICAL.length)).join('');
  const ms = timeMs(() => new Redactor().line(line), 1);
  assert.ok(ms < 2000, `took ${ms.toFixed(0)} ms`);
});
