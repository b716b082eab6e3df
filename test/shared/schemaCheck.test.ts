// The one input check of routes and tools: what each kind of failure says, and which field it names.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { checker, type Location, validatorOf } from '../../shared/schemaCheck.js';

const LETTERS = 'abcdefghij'.split('');

const Body = Type.Object({
  data: Type.String(),
  rows: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, errorMessage: 'rows must be between 1 and 500, got {got}' })),
  name: Type.Optional(Type.String({ minLength: 1, errorMessage: 'name must be a non-empty string, got {quoted}' })),
  mode: Type.Optional(Type.Union([Type.Literal('raw'), Type.Literal('text')])),
  many: Type.Optional(Type.Union(LETTERS.map((l) => Type.Literal(l)))),
  args: Type.Optional(Type.Array(Type.String())),
  nested: Type.Optional(Type.Object({ inner: Type.Boolean() }, { additionalProperties: false })),
});

function refusal(value: unknown, where: Location = 'body'): { message: string; field: unknown; in: unknown; code: string } {
  try {
    checker(Body, where)(value);
  } catch (err) {
    assert.ok(err instanceof ApiError, `an ApiError, got ${String(err)}`);
    return { message: err.message, field: err.extra['field'], in: err.extra['in'], code: err.code };
  }
  assert.fail(`accepted ${JSON.stringify(value)}`);
}

test('a valid value comes back as it is', () => {
  const value = { data: 'x', rows: 3, mode: 'raw' };
  assert.equal(checker(Body, 'body')(value), value);
});

test('each failure is one sentence naming the field, with code invalid_input and where it was', () => {
  assert.deepEqual(refusal({ data: 5 }), { message: 'data must be a string', field: 'data', in: 'body', code: 'invalid_input' });
  assert.deepEqual(refusal({}), { message: 'data is required', field: 'data', in: 'body', code: 'invalid_input' });
  assert.equal(refusal(null).message, 'body must be a JSON object');
  assert.equal(refusal([]).message, 'body must be a JSON object');
  assert.deepEqual(refusal({ data: 'x', args: ['a', 7] }).field, 'args[1]');
  assert.equal(refusal({ data: 'x', args: ['a', 7] }).message, 'args[1] must be a string');
  assert.equal(refusal({ data: 'x', nested: { inner: 'no' } }).message, 'nested.inner must be a boolean');
  assert.equal(refusal({ data: 'x', nested: { inner: true, other: 1 } }).message, 'nested.other is not a known field');
  assert.equal(refusal({ data: 1 }, 'query').in, 'query');
});

test('a wrong-typed field is named before a missing one', () => {
  assert.equal(refusal({ rows: 'many' }).field, 'rows');
});

test("a schema's own wording is kept, with the value sent bare or quoted", () => {
  assert.equal(refusal({ data: 'x', rows: 0 }).message, 'rows must be between 1 and 500, got 0');
  assert.equal(refusal({ data: 'x', name: '' }).message, 'name must be a non-empty string, got ""');
});

test('a union of literals lists its choices, also past the few errors typebox reports', () => {
  assert.equal(refusal({ data: 'x', mode: 'zz' }).message, 'mode must be one of: raw, text');
  assert.equal(refusal({ data: 'x', many: 'zz' }).message, `many must be one of: ${LETTERS.join(', ')}`);
  assert.equal(refusal({ data: 'x', many: 3 }).message, `many must be one of: ${LETTERS.join(', ')}`);
});

test('an unknown key of any length is named clipped, in the message and in field', () => {
  const key = 'k'.repeat(50_000);
  const { message, field } = refusal({ data: 'x', nested: { inner: true, [key]: 1 } });
  assert.ok(message.length < 400 && String(field).length < 300, `clipped: message ${message.length}, field ${String(field).length} characters`);
});

test('client input in a message is clipped', () => {
  const long = 'y'.repeat(5000);
  const { message } = refusal({ data: 'x', name: '', rows: long as unknown as number });
  assert.ok(message.length < 400, `clipped: ${message.length} characters`);
});

test('a schema is compiled once, however many checkers use it', () => {
  assert.equal(validatorOf(Body), validatorOf(Body));
});
