/**
 * Checks a value against a typebox schema, compiled once per schema object, and turns the first
 * failure into one sentence naming the field (`data must be a string`, `rows must be <= 500`): the
 * invalid_input error routes and tools answer. A schema may pin its own wording with
 * `errorMessage`, where `{got}` stands for the value sent, `{quoted}` for it quoted, `{json}` for
 * it as JSON text (a string quoted, anything else as it is) and `{field}` for the field's name.
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

import { ApiError } from './apiError.js';
import { clipClientInput, quoteClientInput } from './quoteClientInput.js';

type Validator = ReturnType<typeof Compile>;
/** Schemas declared at module level are shared by every server a process starts: compile each once. */
const compiled = new WeakMap<TSchema, Validator>();

export function validatorOf(schema: TSchema): Validator {
  let v = compiled.get(schema);
  if (v === undefined) compiled.set(schema, (v = Compile(schema)));
  return v;
}

/** Where a checked value came from, as the error names it. */
export type Location = 'path' | 'query' | 'body' | 'arguments';

/** A compiled check that returns the value, or throws invalid_input naming the field. */
export function checker(schema: TSchema, where: Location): (value: unknown) => unknown {
  const v = validatorOf(schema);
  return (value) => {
    if (v.Check(value)) return value;
    throw invalidInput(schema, v, value, where);
  };
}

interface SchemaError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** The first failure as one sentence naming the field: `data must be a string`, `rows must be <= 500`. */
function invalidInput(schema: TSchema, v: Validator, value: unknown, where: Location): ApiError {
  const errors = v.Errors(value) as unknown as SchemaError[];
  const { field, message } = describeFailure(schema, errors, value, where);
  return new ApiError('invalid_input', message, { extra: { field, in: where } });
}

function describeFailure(root: TSchema, errors: SchemaError[], value: unknown, where: Location): { field: string; message: string } {
  // A field sent with the wrong type is named before one left out: it is what the caller got wrong.
  let e = errors.find((x) => x.keyword !== 'required') ?? errors[0];
  if (e === undefined) return { field: '', message: `${subjectOf(where)} does not match its schema` };
  // A branch of a union failed: report the union (its choices), not one branch's const.
  const union = e.schemaPath.lastIndexOf('/anyOf/');
  if (union >= 0) {
    const unionPath = e.schemaPath.slice(0, union);
    const branch = e;
    // typebox stops listing errors after a few, so the union's own error may be missing: stand it in.
    e = errors.find((x) => x.keyword === 'anyOf' && x.schemaPath === unionPath && x.instancePath === branch.instancePath) ?? {
      keyword: 'anyOf',
      schemaPath: unionPath,
      instancePath: branch.instancePath,
      params: {},
      message: 'must match a schema in anyOf',
    };
  }
  if (e.keyword === 'boolean') e = errors.find((x) => x.keyword === 'additionalProperties') ?? e;
  let pointer = e.instancePath;
  let schemaPath = e.schemaPath;
  if (e.keyword === 'required') {
    const missing = (e.params['requiredProperties'] as string[] | undefined)?.[0] ?? '';
    pointer = `${pointer}/${missing}`;
    schemaPath = `${schemaPath}/properties/${missing}`;
  } else if (e.keyword === 'additionalProperties') {
    const extra = (e.params['additionalProperties'] as string[] | undefined)?.[0] ?? '';
    pointer = `${pointer}/${extra}`;
  }
  // A field name can be client input too (an unknown key): quoted at most 200 characters, like any.
  const field = clipClientInput(fieldName(pointer));
  // A missing field is "x is required" whatever the field's own wording for a wrong value.
  const own = e.keyword === 'required' ? undefined : (schemaAt(root, schemaPath) as { errorMessage?: unknown } | undefined);
  if (typeof own?.errorMessage === 'string') {
    const got = valueAt(value, pointer);
    // One pass: a placeholder inside the client's own value is not substituted again.
    const message = own.errorMessage.replace(/\{(got|quoted|json|field)\}/g, (_, which: string) =>
      which === 'field'
        ? field
        : which === 'quoted'
          ? quoteClientInput(got)
          : clipClientInput(which === 'got' && typeof got === 'string' ? got : (JSON.stringify(got) ?? String(got))),
    );
    return { field, message };
  }
  const subject = field === '' ? subjectOf(where) : field;
  return { field, message: `${subject} ${phrase(e, root, value)}` };
}

function phrase(e: SchemaError, root: TSchema, _value: unknown): string {
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type': {
      const t = e.params['type'];
      const types = Array.isArray(t) ? t : [t];
      return `must be ${types.map((x) => TYPE_NAMES[String(x)] ?? String(x)).join(' or ')}`;
    }
    case 'anyOf':
    case 'enum': {
      const choices = choicesOf(schemaAt(root, e.schemaPath));
      return choices ? `must be one of: ${choices.join(', ')}` : 'does not match any allowed form';
    }
    case 'const':
      return `must be ${JSON.stringify(e.params['allowedValue'])}`;
    case 'minLength':
      return e.params['limit'] === 1 ? 'must not be empty' : `must be at least ${String(e.params['limit'])} characters`;
    case 'maxLength':
      return `must be at most ${String(e.params['limit'])} characters`;
    case 'minItems':
      return `must have at least ${String(e.params['limit'])} items`;
    case 'maxItems':
      return `must have at most ${String(e.params['limit'])} items`;
    case 'pattern':
      return `must match ${String(e.params['pattern'])}`;
    default:
      return e.message;
  }
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'a JSON object',
  array: 'an array',
  null: 'null',
};

/** The literal values a union or enum allows, when it is only literals. */
function choicesOf(schema: TSchema | undefined): string[] | null {
  const s = schema as { anyOf?: Array<{ const?: unknown }>; enum?: unknown[] } | undefined;
  if (s?.enum) return s.enum.map(String);
  if (s?.anyOf?.every((b) => b.const !== undefined)) return s.anyOf.map((b) => String(b.const));
  return null;
}

/** `/args/0/name` → `args[0].name`. */
function fieldName(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(seg) ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  }
  return out;
}

/** The sub-schema a `#/properties/a/items` path names, or undefined. */
function schemaAt(root: TSchema, path: string): TSchema | undefined {
  let node: unknown = root;
  for (const raw of path.replace(/^#\/?/, '').split('/')) {
    if (raw === '') continue;
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node as TSchema | undefined;
}

function subjectOf(where: Location): string {
  return where === 'body' ? 'body' : where === 'arguments' ? 'arguments' : `${where} parameters`;
}

/** The value a JSON pointer names inside `root`, or undefined. */
function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}
