// The TCP failed-login limit on a real tuicd against guesses sent all at once: every guess in flight
// counts, so a burst gets no more than auth_rate_limit_max answers before 429.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';

import { Tuicd } from '../../helpers/tuicdProcess.js';

const USER = 'alice';
const PASSWORD = 'correct horse';
const MAX_FAILURES = 3;
const basic = (user: string, pw: string) => 'Basic ' + Buffer.from(`${user}:${pw}`).toString('base64');

describe('TCP auth rate limit under a burst of guesses', () => {
  let t: Tuicd;
  before(async () => {
    // Cost 10: each bcrypt takes tens of ms, so a burst is still being verified when its last guess arrives.
    const passwordHash = await hash(PASSWORD, { cost: 10 });
    t = await Tuicd.start({
      config: {
        services: {
          server: { enabled: true, port: 0 },
          auth: { username: USER, password_hash: passwordHash, auth_rate_limit_max: MAX_FAILURES, auth_rate_limit_window_secs: 300 },
        },
      },
    });
  });
  after(() => t.stop());

  it('answers at most auth_rate_limit_max distinct wrong passwords sent together; the rest get 429', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, `guess-${i}`) })));
    const statuses = answers.map((a) => a.status);
    assert.ok(
      statuses.every((s) => s === 401 || s === 429),
      `unexpected statuses ${statuses.join(',')}`,
    );
    const guessed = statuses.filter((s) => s === 401).length;
    assert.ok(guessed <= MAX_FAILURES, `${guessed} guesses were checked, the limit is ${MAX_FAILURES}: ${statuses.join(',')}`);
    for (const a of answers.filter((x) => x.status === 429)) assert.ok(Number(a.headers['retry-after']) > 0);
    // The right password is locked out too, once the limit is reached.
    assert.equal((await t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, PASSWORD) })).status, 429);
  });
});

describe('TCP auth with the right password sent together', () => {
  let t: Tuicd;
  before(async () => {
    const passwordHash = await hash(PASSWORD, { cost: 10 });
    t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash, auth_rate_limit_max: 2 } } },
    });
  });
  after(() => t.stop());

  it('lets many requests with the same right header through, and counts no failure for them', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, PASSWORD) })));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(8).fill(200),
    );
    // Two wrong tries after that are still answered 401: the right ones left nothing on record.
    assert.equal((await t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, 'w1') })).status, 401);
    assert.equal((await t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, 'w2') })).status, 401);
    assert.equal((await t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, 'w3') })).status, 429);
  });
});
