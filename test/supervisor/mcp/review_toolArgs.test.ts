/**
 * Wrongly typed tool arguments are refused with the tool's own validation error. An object whose
 * `toString` is not a function (`{"toString": 1}` is valid JSON) made the error message itself
 * throw — String() on it is a TypeError — so the caller got "Tool 'x' failed: Cannot convert object
 * to primitive value" and the server logged a handler bug; and a debug `level` naming an
 * Object.prototype member ("toString") was taken as a level and filtered every record out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';
import { rpc } from './transport/mcpHttp.js';

const UNPRINTABLE = { toString: 1 };

describe('tool argument validation over POST /mcp', () => {
  let t: Tuicd;

  before(async () => {
    t = await Tuicd.start({ config: { disabled_native_tools: [], progress_tracking: true } });
  });
  after(async () => {
    await t?.stop();
  });

  async function toolError(name: string, args: object): Promise<string> {
    const answer = await rpc(t, 'tools/call', { name, arguments: args });
    assert.equal(answer.status, 200, answer.text);
    const result = answer.json().result;
    assert.equal(result.isError, true, `${name} ${JSON.stringify(args)} should be refused: ${answer.text}`);
    return JSON.parse(result.content[0].text).error as string;
  }

  const cases: Array<[string, object, RegExp]> = [
    ['session', { action: UNPRINTABLE }, /^Unknown action '\{"toString":1\}' for tool 'session'/],
    ['progress', { type: UNPRINTABLE, text: 'x' }, /^Invalid type '\{"toString":1\}'/],
    ['ui', { action: 'toast', title: 't', level: UNPRINTABLE }, /^Invalid level '\{"toString":1\}'/],
    ['ui', { action: 'toast', title: 't', sound: UNPRINTABLE }, /^Invalid sound '\{"toString":1\}'/],
    ['debug', { action: 'logs', level: UNPRINTABLE }, /^Invalid level '\{"toString":1\}'/],
    ['debug', { action: 'logs', level: 'toString' }, /^Invalid level 'toString'/],
    ['debug', { action: 'logs', level: '__proto__' }, /^Invalid level '__proto__'/],
  ];
  for (const [name, args, expected] of cases) {
    it(`${name} ${JSON.stringify(args)} is a validation error`, async () => {
      assert.match(await toolError(name, args), expected);
    });
  }

  it('logged no tool handler failure', () => {
    assert.doesNotMatch(t.stdout + t.stderr, /tool handler failed/);
  });
});
