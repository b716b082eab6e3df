/** The parser's line rules: the rate-limit table in order, the code-line guard, usage, errors, links and markers. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ParsedEvent } from '../../../../shared/protocol/parsedEvents.js';
import { TextPipeline } from '../../../../workers/pty/textPipeline.js';
import {
  LINE_TRIGGER,
  agentLineEvents,
  isStructuralMarker,
  looksLikeCode,
  markerOf,
  matchRateLimit,
  parseIntent,
  parseSuggest,
  sessionLineEvents,
} from '../../../../workers/pty/agentParser/lineRules.js';
import { replay } from './replayHarness.js';

const triggered = (line: string): boolean => {
  LINE_TRIGGER.lastIndex = 0;
  return LINE_TRIGGER.test(line);
};

describe('rate-limit table', () => {
  const cases: Array<[string, string, number]> = [
    [
      'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}',
      'claude-http-429',
      60_000,
    ],
    ['API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', 'claude-overloaded', 30_000],
    ['We are temporarily limiting requests to this model. Please try again later.', 'claude-overloaded-friendly', 30_000],
    ['openai.RateLimitError: Error code: 429', 'openai-http-429', 60_000],
    ['User Provided API Key Rate Limit Exceeded', 'cursor-rate-limit', 60_000],
    ['[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}]', 'gemini-resource-exhausted', 60_000],
    ['Request failed: 429 Too Many Requests', 'http-429', 60_000],
    ['< HTTP/1.1 429', 'http-429', 60_000],
    ['Retry-After: 17', 'retry-after-header', 17_000],
    ['Rate limit reached. Retry after 20 seconds.', 'openai-retry-after', 20_000],
    ['Rate limit reached for gpt-4 on tokens per minute (TPM): Limit 30000', 'openai-tpm-limit', 60_000],
    ['You exceeded your requests per minute limit', 'openai-rpm-limit', 60_000],
    // A 429 body that names its wait: the first rule names it, the wait comes from the text.
    ['error: rate_limit_error; Retry-After: 5', 'claude-http-429', 5_000],
  ];
  for (const [line, name, retry] of cases) {
    it(`${name}: ${line.slice(0, 50)}`, () => {
      assert.ok(triggered(line), 'the batch trigger must see it');
      const m = matchRateLimit(line);
      assert.equal(m?.pattern_name, name);
      assert.equal(m?.retry_after_ms, retry);
      assert.equal(m?.matched_text, line.trim());
    });
  }

  it('the code-line guard keeps quoted, commented, diffed and tabled mentions out', () => {
    for (const line of [
      '// handle rate_limit_error here',
      '# rate_limit_error is retried',
      'const e = "rate_limit_error";',
      'let kind = RateLimitError;',
      'assert.equal(kind, "overloaded_error")',
      '    if (body.includes("rate_limit_error")) {',
      '+  throw new RateLimitError()',
      '-  RESOURCE_EXHAUSTED',
      '| http-429 | 429 Too Many Requests | 60000 |',
      '- rate_limit_error: back off',
      '```rate_limit_error',
      'm = re.compile(r"Retry-After: (\\d+)")',
    ]) {
      assert.equal(looksLikeCode(line), true, line);
      assert.equal(matchRateLimit(line), null, line);
    }
    assert.equal(looksLikeCode('  ⎿  API Error: 429 rate_limit_error'), false);
  });

  it('plain text without any trigger costs no rule run', () => {
    for (const line of ['npm run build', 'aGVsbG8gd29ybGQ=', 'Compiling tuicd v0.1.0', 'Error 429 is in the docs']) assert.equal(triggered(line), false, line);
  });
});

describe('other agent lines', () => {
  const events = (line: string): ParsedEvent[] => {
    const out: ParsedEvent[] = [];
    agentLineEvents(line, out);
    return out;
  };

  it('usage notices and exhaustion', () => {
    assert.deepEqual(events("You've used 91% of your weekly limit · resets Oct 9 at 2pm"), [{ type: 'usage-limit', percentage: 91, limit_type: 'weekly' }]);
    assert.deepEqual(events('You’ve used 75% of your session limit'), [{ type: 'usage-limit', percentage: 75, limit_type: 'session' }]);
    assert.deepEqual(events('You are out of extra usage · resets 3pm (Europe/Rome)'), [{ type: 'usage-exhausted', reset_time: '3pm (Europe/Rome)' }]);
    assert.deepEqual(events('Claude is out of usage'), [{ type: 'usage-exhausted' }]);
  });

  it('API errors by kind; a rate limit is not also an API error', () => {
    assert.equal((events('API Error: 500 {"type":"error","error":{"type":"api_error"}}')[0] as { error_kind: string }).error_kind, 'server');
    assert.equal((events('API Error: 401 {"type":"error","error":{"type":"authentication_error"}}')[0] as { error_kind: string }).error_kind, 'auth');
    assert.equal(
      (events('⎿ API Error (Connection error.) · Retrying in 4 seconds… (attempt 3/10)')[0] as { pattern_name: string }).pattern_name,
      'api-retrying',
    );
    assert.deepEqual(
      events('API Error: 429 rate_limit_error').map((e) => e.type),
      ['rate-limit'],
    );
  });

  it('plan files and session conflicts', () => {
    assert.deepEqual(events('Plan saved to ~/.claude/plans/curious-otter.md'), [{ type: 'plan-file', path: '~/.claude/plans/curious-otter.md' }]);
    assert.deepEqual(events('No conversation found with session ID: 1b2c'), [
      { type: 'agent-session-conflict', matched_text: 'No conversation found with session ID: 1b2c', kind: 'not-found' },
    ]);
    assert.deepEqual(events('Error: Session ID 1b2c is already in use'), [
      { type: 'agent-session-conflict', matched_text: 'Session ID 1b2c is already in use', kind: 'in-use' },
    ]);
  });

  it('PR links from any session', () => {
    const out: ParsedEvent[] = [];
    sessionLineEvents('https://github.com/acme/app/pull/42', out);
    sessionLineEvents('See https://gitlab.example.com/group/app/-/merge_requests/7 for review', out);
    assert.deepEqual(out, [
      { type: 'pr-url', number: 42, url: 'https://github.com/acme/app/pull/42', platform: 'github' },
      { type: 'pr-url', number: 7, url: 'https://gitlab.example.com/group/app/-/merge_requests/7', platform: 'gitlab' },
    ]);
  });
});

describe('markers', () => {
  it('intent: column 0 after space and a bullet; title split; placeholders and short text rejected', () => {
    assert.deepEqual(markerOf('⏺ intent: Fix the flaky login test (Login fix)'), { kind: 'intent', rest: 'Fix the flaky login test (Login fix)' });
    assert.equal(markerOf('  the intent: of this'), null);
    assert.equal(markerOf('x intent: nope'), null);
    assert.deepEqual(parseIntent('Fix   the flaky\tlogin test (Login fix)'), { type: 'intent', text: 'Fix the flaky login test', title: 'Login fix' });
    assert.deepEqual(parseIntent('Refactor the parser'), { type: 'intent', text: 'Refactor the parser' });
    for (const bad of ['abc', '...', '<text>', '']) assert.equal(parseIntent(bad), null, bad);
  });

  it('suggest: bracketed, 2–4 items, nothing nested', () => {
    assert.deepEqual(parseSuggest('[ Run the tests | Open a PR | Update the docs ]'), {
      type: 'suggest',
      items: ['Run the tests', 'Open a PR', 'Update the docs'],
    });
    assert.equal(parseSuggest('[ Only one ]'), null);
    assert.equal(parseSuggest('[ a | b | c | d | e ]'), null);
    assert.equal(parseSuggest('[ a | [b] | c ]'), null);
    assert.equal(parseSuggest('[ a | | c ]'), null);
    assert.equal(parseSuggest('no brackets | here'), null);
    assert.equal(parseSuggest('[ a | b'), 'open');
  });

  it('a soft-wrapped suggest is rejoined within 4 lines, in any chunking; markers need an agent', () => {
    const text = '⏺ Done.\r\n  suggest: [ Run the full test\r\n  suite | Open a pull request |\r\n  Update the changelog ]\r\n';
    for (let cut = 0; cut <= text.length; cut += 3) {
      const r = replay({ agent: 'claude' });
      r.push(text.slice(0, cut));
      r.push(text.slice(cut));
      assert.deepEqual(r.events, [{ type: 'suggest', items: ['Run the full test suite', 'Open a pull request', 'Update the changelog'] }], `cut ${cut}`);
    }
    const tooLong = replay({ agent: 'claude' });
    tooLong.push('suggest: [ a |\r\nb |\r\nc\r\nd\r\ne\r\nf ]\r\n');
    assert.deepEqual(tooLong.events, []);
    const plain = replay({ agent: null });
    plain.push('intent: Fix the login test\r\nsuggest: [ a | b | c ]\r\n');
    assert.deepEqual(plain.events, []);
  });

  it('a suggest repainted in a later turn is history, not a new completion', () => {
    const r = replay({ agent: 'claude' });
    r.push('suggest: [ Run tests | Ship it ]\r\n');
    r.input('next task\r');
    r.push('suggest: [ Run tests | Ship it ]\r\n');
    r.push('suggest: [ Review | Ship it ]\r\n');
    assert.deepEqual(
      r.events.map((e) => (e as { items: string[] }).items[0]),
      ['Run tests', 'Review'],
    );
  });
});

describe('structural markers in served log lines', () => {
  it('well-formed marker lines read blank (offsets kept); other lines, and malformed markers, as printed', () => {
    assert.equal(isStructuralMarker('⏺ intent: Fix the build (CI)'), true);
    assert.equal(isStructuralMarker('suggest: [ a | b ]'), true);
    assert.equal(isStructuralMarker('suggest: [ a ]'), false);
    assert.equal(isStructuralMarker('intent: ...'), false);
    assert.equal(isStructuralMarker('the intent: is clear'), false);
    const p = new TextPipeline();
    p.push(Buffer.from('before\r\n⏺ intent: Fix the build (CI)\r\nmiddle\r\nsuggest: [ Run tests | Ship ]\r\nafter\r\n'));
    assert.deepEqual(p.read({ offset: 0 }).lines, ['before', '', 'middle', '', 'after']);
  });
});

describe('OSC strings', () => {
  it('133: A/B are prompt marks (nothing), C starts a block, D ends it with its exit code when given', async () => {
    const { parseOsc } = await import('../../../../workers/pty/agentParser/oscRules.js');
    assert.equal(parseOsc('133;A'), null);
    assert.equal(parseOsc('133;B'), null);
    assert.deepEqual(parseOsc('133;C'), { kind: 'osc133', mark: 'C' });
    assert.deepEqual(parseOsc('133;D'), { kind: 'osc133', mark: 'D' });
    assert.deepEqual(parseOsc('133;D;0'), { kind: 'osc133', mark: 'D', exitCode: 0 });
    assert.deepEqual(parseOsc('133;D;127;aid=3'), { kind: 'osc133', mark: 'D', exitCode: 127 });
    assert.deepEqual(parseOsc('133;D;'), { kind: 'osc133', mark: 'D' });
    assert.deepEqual(parseOsc('9;4;1;50'), { kind: 'progress', state: 1, value: 50 });
    assert.equal(parseOsc('9;4;7;50'), null);
    assert.deepEqual(parseOsc('777;notify;Claude Code;Claude needs; your permission'), { kind: 'notify', body: 'Claude needs; your permission' });
    assert.deepEqual(parseOsc('7770;state=busy;agent=claude;block=start'), { kind: 'hook', fields: { state: 'busy', agent: 'claude', block: 'start' } });
  });

  it('a replayed OSC 133 block gives agent-block events with the line they came at; hooks hold the session busy', () => {
    const r = replay({ agent: 'claude' });
    const working: boolean[] = [];
    (r.parser as unknown as { opts: { onWorking?: (w: boolean) => void } }).opts.onWorking = (w) => working.push(w);
    r.push('$ make\r\n\x1b]133;C\x07building\r\n\x1b]133;D;2\x07$ \x1b]7770;state=busy;agent=claude\x07');
    assert.deepEqual(r.events, [
      { type: 'agent-block', action: 'start', line: 1 },
      { type: 'agent-block', action: 'end', line: 2, exit_code: 2 },
      { type: 'shell-state', state: 'busy', agent_type: 'claude' },
    ]);
    assert.deepEqual(working, [true, false, true]);
  });
});
