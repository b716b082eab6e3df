/**
 * The config as clients see it over HTTP, derived from the one schema (schema.ts) so neither can
 * drift from it: GET /config answers the config with each secret replaced by its `*_exists` flag,
 * and PUT /config takes a deep partial of it, where any field may be left out and `null` resets a
 * field to its default.
 */
import { type TObject, type TProperties, type TSchema, Type } from 'typebox';

import { AppConfigSchema } from './schema.js';
import { SECRET_FIELDS, type SecretField } from './secrets.js';

type Json = Record<string, unknown>;

const isObjectSchema = (s: unknown): s is TObject => typeof s === 'object' && s !== null && (s as Json)['type'] === 'object' && 'properties' in s;

/** Only the description of a schema's options: defaults describe a file, not a request or an answer. */
function described(schema: TSchema): { description?: string } {
  const d = (schema as Json)['description'];
  return typeof d === 'string' ? { description: d } : {};
}

/** A copy of `schema` without its `default`, every other keyword kept. */
function withoutDefault(schema: TSchema): TSchema {
  const { default: _default, ...rest } = schema as Json;
  return rest as TSchema;
}

function allowsNull(schema: TSchema): boolean {
  const s = schema as Json;
  return s['type'] === 'null' || (Array.isArray(s['anyOf']) && (s['anyOf'] as Json[]).some((b) => b['type'] === 'null'));
}

/** The object at `path` under `schema`, rebuilt by `change`; the objects above it are rebuilt around it. */
function changeObjectAt(schema: TObject, path: readonly string[], change: (o: TObject) => TObject): TObject {
  const [head, ...rest] = path;
  if (head === undefined) return change(schema);
  const child = schema.properties[head];
  if (!isObjectSchema(child)) throw new Error(`config schema: ${head} is not an object`);
  return Type.Object({ ...schema.properties, [head]: changeObjectAt(child, rest, change) }, described(schema));
}

const flagDescription = (field: SecretField) => `Whether \`${field.key}\` is set; the value itself is never returned.`;

/** GET /config: AppConfig with each secret replaced by its `*_exists` flag. Unknown keys on disk come back as they are. */
export const ClientConfigSchema: TObject = SECRET_FIELDS.reduce<TObject>(
  (schema, field) =>
    changeObjectAt(schema, field.parent, (parent) => {
      const { [field.key]: _secret, ...kept } = parent.properties;
      return Type.Object({ ...kept, [field.flag]: Type.Boolean({ description: flagDescription(field) }) }, described(parent));
    }),
  AppConfigSchema,
);

/**
 * PUT /config: every field optional and nullable (null resets it to its default), objects merged
 * key by key, arrays and scalars replaced; TLS in either of its shapes. Keys the schema does not
 * name are let through here: the store keeps those already on disk and refuses the others. The
 * secret flags may come back as GET /config gave them.
 */
function patchOf(schema: TSchema, path: readonly string[]): TSchema {
  if (isObjectSchema(schema)) {
    const properties: TProperties = {};
    for (const [name, child] of Object.entries(schema.properties)) {
      const patch = patchOf(child, [...path, name]);
      properties[name] = Type.Optional(allowsNull(patch) ? patch : Type.Union([patch, Type.Null()], described(child)));
    }
    for (const field of SECRET_FIELDS) {
      if (field.parent.join('.') !== path.join('.')) continue;
      properties[field.flag] = Type.Optional(
        Type.Unknown({ description: `As GET /config gives it: \`false\` with no new \`${field.key}\` clears the secret; any other value is ignored.` }),
      );
    }
    return Type.Object(properties, described(schema));
  }
  const anyOf = (schema as Json)['anyOf'];
  if (Array.isArray(anyOf) && anyOf.some(isObjectSchema))
    return Type.Union(
      (anyOf as TSchema[]).map((branch) => patchOf(branch, path)),
      described(schema),
    );
  return withoutDefault(schema);
}

export const ConfigPatchSchema = patchOf(AppConfigSchema, []) as TObject;
