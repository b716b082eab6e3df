// Turns a parsed config.json (or a merged save) into a valid AppConfig: fills defaults, migrates
// legacy values, applies the lenient TLS rule, and refuses anything else naming the field.

import { Compile } from 'typebox/compile';
import Value from 'typebox/value';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { isPlainObject, objectAt, type JsonObject } from './merge.js';
import { AppConfigSchema, LEGACY_SESSION_TOKEN_DURATION_SECS, SESSION_TOKEN_DURATION_SECS, TlsManualSchema, TlsSchema, type AppConfig } from './schema.js';
import { stripSecretFlags } from './secrets.js';

const appConfigCheck = Compile(AppConfigSchema);
const tlsCheck = Compile(TlsSchema);
const tlsManualCheck = Compile(TlsManualSchema);

export interface NormalizeOptions {
  /** A save that touches services.tls is checked strictly; a load falls back to `{mode:"off"}`. */
  strictTls: boolean;
  /** File the document came from, appended to error messages. */
  source?: string;
}

/** Dotted form of a JSON pointer: `/services/server/port` -> `services.server.port`. */
export function pointerToField(pointer: string): string {
  if (pointer === '' || pointer === '/') return '(root)';
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

/** The CONFIG_INVALID error: `Invalid config: <field>: <reason>`; data carries field and pointer. */
export function invalidConfig(pointer: string, reason: string, source?: string): SupervisorError {
  const field = pointerToField(pointer);
  const where = source === undefined ? '' : ` (in ${source})`;
  return new SupervisorError(ErrorCode.CONFIG_INVALID, `Invalid config: ${field}: ${reason}${where}`, {
    field,
    pointer,
    reason,
    ...(source === undefined ? {} : { path: source }),
  });
}

interface ValidationIssue {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: object;
  message: string;
}

/** Picks the first error and words it for a human: one field, one reason. */
function describeFirst(errors: readonly ValidationIssue[]): { pointer: string; reason: string } {
  const first = errors[0];
  if (first === undefined) return { pointer: '', reason: 'does not match the schema' };
  const anyOfAt = first.schemaPath.indexOf('/anyOf/');
  if (anyOfAt >= 0) {
    // A nullable field fails every branch; name the field once with all the allowed types.
    const unionPath = first.schemaPath.slice(0, anyOfAt);
    const branches = errors.filter((e) => e.schemaPath.startsWith(`${unionPath}/anyOf/`));
    const types = branches.map((e) => (e.keyword === 'type' ? (e.params as { type?: string }).type : undefined));
    const reason = types.every((t) => t !== undefined) ? `must be ${types.join(' or ')}` : 'does not match any allowed shape';
    const union = errors.find((e) => e.keyword === 'anyOf' && e.schemaPath === unionPath);
    return { pointer: union?.instancePath ?? first.instancePath, reason };
  }
  if (first.keyword === 'required') {
    const missing = (first.params as { requiredProperties?: string[] }).requiredProperties?.[0] ?? '?';
    return { pointer: `${first.instancePath}/${missing}`, reason: 'is required' };
  }
  return { pointer: first.instancePath, reason: first.message };
}

function applyTlsRule(doc: JsonObject, options: NormalizeOptions): void {
  const services = objectAt(doc, ['services']);
  if (services === undefined || services['tls'] === undefined) return;
  const tls = services['tls'];
  if (tlsCheck.Check(tls)) return;
  if (!options.strictTls) {
    services['tls'] = { mode: 'off' };
    return;
  }
  if (isPlainObject(tls) && tls['mode'] === 'manual') {
    const { pointer, reason } = describeFirst(tlsManualCheck.Errors(tls) as ValidationIssue[]);
    throw invalidConfig(`/services/tls${pointer}`, reason, options.source);
  }
  if (isPlainObject(tls)) throw invalidConfig('/services/tls/mode', 'must be "off" or "manual"', options.source);
  throw invalidConfig('/services/tls', 'must be an object', options.source);
}

function migrate(doc: JsonObject): void {
  const auth = objectAt(doc, ['services', 'auth']);
  if (auth !== undefined && auth['session_token_duration_secs'] === LEGACY_SESSION_TOKEN_DURATION_SECS) {
    auth['session_token_duration_secs'] = SESSION_TOKEN_DURATION_SECS;
  }
}

/**
 * Returns a new, valid AppConfig built from `input` (never mutated). Unknown keys are carried along
 * untouched; `*_exists` flags are dropped. Throws CONFIG_INVALID naming the first bad field.
 */
export function normalizeConfig(input: unknown, options: NormalizeOptions): AppConfig {
  if (!isPlainObject(input)) throw invalidConfig('', 'must be a JSON object', options.source);
  const doc = structuredClone(input);
  stripSecretFlags(doc);
  applyTlsRule(doc, options);
  Value.Default(AppConfigSchema, doc);
  migrate(doc);
  if (!appConfigCheck.Check(doc)) {
    const { pointer, reason } = describeFirst(appConfigCheck.Errors(doc) as ValidationIssue[]);
    throw invalidConfig(pointer, reason, options.source);
  }
  return doc as AppConfig;
}

/** A fresh AppConfig holding only defaults (what a missing config.json reads as). */
export function defaultConfig(): AppConfig {
  return normalizeConfig({}, { strictTls: false });
}

/** Property names a schema node declares (object properties, or the union of anyOf branches). */
function declaredKeys(schema: unknown): Map<string, unknown> | undefined {
  if (!isPlainObject(schema)) return undefined;
  if (isPlainObject(schema['properties'])) return new Map(Object.entries(schema['properties']));
  if (Array.isArray(schema['anyOf'])) {
    const keys = new Map<string, unknown>();
    for (const branch of schema['anyOf']) for (const [k, v] of declaredKeys(branch) ?? []) keys.set(k, v);
    return keys.size > 0 ? keys : undefined;
  }
  return undefined;
}

/** Deepest nesting a save may have; the schema needs a handful of levels, foreign data a few more. */
export const MAX_SAVE_DEPTH = 64;

/**
 * Refuses a save nested deeper than MAX_SAVE_DEPTH before anything recursive (structuredClone, the
 * merge) walks it: a body of a few thousand `{"x":` overflowed the stack, a 500 instead of a 400.
 */
export function assertDepth(value: unknown, pointer = '', depth = 0): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_SAVE_DEPTH) throw invalidConfig(pointer, `nests deeper than ${MAX_SAVE_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) assertDepth(item, `${pointer}/${i}`, depth + 1);
  } else for (const [key, child] of Object.entries(value)) assertDepth(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1);
}

/**
 * Refuses keys in a save that the schema does not know (most often a typo such as `prot`), unless
 * the same key is already on disk: that is foreign data round-tripping, which we keep. `null` is
 * always allowed (it clears).
 */
export function assertKnownFields(partial: JsonObject, current: unknown, schema: unknown = AppConfigSchema, pointer = ''): void {
  const known = declaredKeys(schema);
  if (known === undefined) return;
  for (const [key, value] of Object.entries(partial)) {
    if (value === null || value === undefined) continue;
    const childPointer = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const childCurrent = isPlainObject(current) ? current[key] : undefined;
    if (!known.has(key)) {
      // Own keys only: `in` also finds Object.prototype's names (toString, constructor, __proto__).
      if (isPlainObject(current) && Object.hasOwn(current, key)) continue;
      throw invalidConfig(childPointer, 'unknown field');
    }
    if (isPlainObject(value)) assertKnownFields(value, childCurrent, known.get(key), childPointer);
  }
}
