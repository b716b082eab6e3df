/**
 * Markdown pieces shared by the doc renderers: JSON Schema → a short type label and field rows,
 * table cells, and text escaped so a description renders as written (outside code spans `<`, `>`
 * and `|` would turn into HTML or cut a table).
 */

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Escapes text for Markdown prose and table cells; code spans stay as they are, pipes are escaped everywhere. */
export function text(raw: string): string {
  const parts = raw.replace(/\r?\n+/g, ' ').split('`');
  return parts
    .map((part, i) => {
      const piped = part.replace(/\|/g, '\\|');
      // Odd parts sit between backticks; an unmatched last backtick leaves the tail as prose.
      const inCode = i % 2 === 1 && i < parts.length - 1;
      return inCode ? piped : piped.replace(/</g, '&lt;').replace(/>/g, '&gt;');
    })
    .join('`');
}

/** Prose that may hold paragraphs and lists: kept line by line, each line escaped. */
export function paragraphs(raw: string): string {
  return raw
    .split(/\r?\n/)
    .map((line) => (line.trim() === '' ? '' : textLine(line)))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function textLine(line: string): string {
  const m = /^(\s*(?:[-*]|\d+\.)\s+)(.*)$/.exec(line);
  return m ? `${m[1]!.replace('*', '-')}${text(m[2]!)}` : text(line);
}

/** Inline code that survives backticks inside it. */
export function code(value: string): string {
  const fence = value.includes('`') ? '``' : '`';
  const pad = fence === '``' || value.startsWith('`') || value.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${value.replace(/\|/g, '\\|')}${pad}${fence}`;
}

export function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A GitHub-style heading anchor. */
export function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

const refName = (ref: string): string => ref.slice(ref.lastIndexOf('/') + 1);

function literal(value: unknown): string {
  return JSON.stringify(value);
}

function variants(schema: Json): Json[] | undefined {
  const list = schema['anyOf'] ?? schema['oneOf'];
  return Array.isArray(list) ? (list.filter(isObject) as Json[]) : undefined;
}

/** Bounds and formats as a short suffix: `≥ 1`, `1–500`, `≤ 128 chars`. */
function bounds(schema: Json): string {
  const out: string[] = [];
  const min = schema['minimum'];
  const max = schema['maximum'];
  if (typeof min === 'number' && typeof max === 'number') out.push(`${min}–${max}`);
  else if (typeof min === 'number') out.push(`≥ ${min}`);
  else if (typeof max === 'number') out.push(`≤ ${max}`);
  if (typeof schema['exclusiveMinimum'] === 'number') out.push(`> ${schema['exclusiveMinimum']}`);
  const minLen = schema['minLength'];
  const maxLen = schema['maxLength'];
  if (typeof minLen === 'number' && typeof maxLen === 'number') out.push(`${minLen}–${maxLen} chars`);
  else if (typeof maxLen === 'number') out.push(`≤ ${maxLen} chars`);
  else if (typeof minLen === 'number' && minLen > 1) out.push(`≥ ${minLen} chars`);
  else if (minLen === 1) out.push('non-empty');
  const minItems = schema['minItems'];
  const maxItems = schema['maxItems'];
  if (typeof minItems === 'number' && typeof maxItems === 'number') out.push(`${minItems}–${maxItems} items`);
  else if (typeof maxItems === 'number') out.push(`≤ ${maxItems} items`);
  else if (typeof minItems === 'number' && minItems > 0) out.push(`≥ ${minItems} items`);
  if (typeof schema['pattern'] === 'string') out.push(`matching ${code(schema['pattern'])}`);
  if (typeof schema['format'] === 'string') out.push(schema['format']);
  return out.length > 0 ? ` (${out.join(', ')})` : '';
}

/** A one-line type for a schema: `string`, `integer (1–500)`, `"raw" \| "text"`, `Session[]`, `object`. */
export function typeLabel(schema: unknown): string {
  if (!isObject(schema)) return schema === true || schema === undefined ? 'any' : 'never';
  if (typeof schema['$ref'] === 'string') return refName(schema['$ref']);
  if ('const' in schema) return literal(schema['const']);
  if (Array.isArray(schema['enum'])) return schema['enum'].map(literal).join(' | ');
  const alts = variants(schema);
  if (alts) return [...new Set(alts.map((a) => (typeof a['title'] === 'string' && isObject(a['properties']) ? a['title'] : typeLabel(a))))].join(' | ');
  const type = schema['type'];
  if (Array.isArray(type)) return type.map((t) => typeLabel({ ...schema, type: t })).join(' | ');
  switch (type) {
    case 'array': {
      const item = typeLabel(schema['items']);
      // `string (1–253 chars)` items read better as `string[] (each 1–253 chars)`.
      const bounded = /^(\w+) \((.*)\)$/.exec(item);
      if (bounded) return `${bounded[1]}[]${bounds(schema)} (each ${bounded[2]})`;
      return `${item.includes(' ') ? `(${item})` : item}[]${bounds(schema)}`;
    }
    case 'object': {
      const extra = schema['additionalProperties'] ?? schema['patternProperties'];
      if (!isObject(schema['properties']) && isObject(extra) && !isObject(schema['patternProperties'])) return `map of ${typeLabel(extra)}`;
      return 'object';
    }
    case 'string':
    case 'integer':
    case 'number':
      return `${type}${bounds(schema)}`;
    case 'boolean':
    case 'null':
      return type;
    default:
      return 'any';
  }
}

export interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The schema's description, its default and its examples, as one line. */
export function describe(schema: unknown): string {
  if (!isObject(schema)) return '';
  const parts: string[] = [];
  if (typeof schema['description'] === 'string') parts.push(text(schema['description']));
  if ('default' in schema) parts.push(`Default ${code(literal(schema['default']))}.`);
  return parts.join(' ');
}

/** The variants of a union whose every branch is an object with properties, or undefined. */
function objectVariants(schema: Json): Json[] | undefined {
  const alts = variants(schema);
  return alts && alts.length > 1 && alts.every((a) => isObject(a['properties'])) ? alts : undefined;
}

/** An object on one line: `{type: "pr-url", number: number, hint?: string}`. */
export function inlineObject(schema: Json): string {
  const props = isObject(schema['properties']) ? schema['properties'] : {};
  const required = new Set((schema['required'] as string[] | undefined) ?? []);
  const label = (v: unknown): string => {
    if (isObject(v) && isObject(v['properties'])) return inlineObject(v);
    if (isObject(v) && v['type'] === 'array' && isObject(v['items']) && isObject(v['items']['properties'])) return `${inlineObject(v['items'])}[]`;
    return typeLabel(v);
  };
  const fields = Object.entries(props).map(([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${label(v)}`);
  return `{${fields.join(', ')}}`;
}

/** The name a variant is told apart by: the value of its first constant property. */
function discriminator(schema: Json): string | undefined {
  const props = isObject(schema['properties']) ? schema['properties'] : {};
  for (const v of Object.values(props)) if (isObject(v) && typeof v['const'] === 'string') return v['const'];
  return typeof schema['title'] === 'string' ? schema['title'] : undefined;
}

/** The object behind a schema: itself, the items of an array of objects, or none. */
function objectOf(schema: Json): { props: Json; required: Set<string> } | undefined {
  if (isObject(schema['properties'])) return { props: schema['properties'], required: new Set((schema['required'] as string[] | undefined) ?? []) };
  return undefined;
}

/**
 * One row per field, nested objects (and arrays of objects) flattened to `a.b` / `a[].b` down to
 * `depth` levels; deeper structure shows as its type label.
 */
export function fieldRows(schema: unknown, depth = 2, prefix = ''): FieldRow[] {
  if (!isObject(schema)) return [];
  const obj = objectOf(schema);
  if (!obj) return [];
  const rows: FieldRow[] = [];
  for (const [name, prop] of Object.entries(obj.props)) {
    const full = `${prefix}${name}`;
    rows.push({ name: full, type: typeLabel(prop), required: obj.required.has(name), description: describe(prop) });
    if (depth <= 1 || !isObject(prop)) continue;
    const alts = objectVariants(prop);
    if (alts) {
      // One row per variant, each on one line: a union of 20 objects stays readable.
      for (const alt of alts) {
        const tag = discriminator(alt);
        rows.push({ name: tag ? `${full} (${tag})` : full, type: inlineObject(alt), required: true, description: describe(alt) });
      }
    } else if (objectOf(prop)) rows.push(...fieldRows(prop, depth - 1, `${full}.`));
    else if (prop['type'] === 'array' && isObject(prop['items']) && objectOf(prop['items'])) rows.push(...fieldRows(prop['items'], depth - 1, `${full}[].`));
  }
  return rows;
}

/**
 * Input fields (`withRequired`) say which are required; answer fields say which may be absent,
 * which is the exception there.
 */
export function fieldTable(rows: readonly FieldRow[], withRequired = true): string {
  if (withRequired)
    return table(
      ['Field', 'Type', 'Required', 'Description'],
      rows.map((r) => [code(r.name), text(r.type), r.required ? 'yes' : '', r.description]),
    );
  return table(
    ['Field', 'Type', 'Description'],
    rows.map((r) => [code(r.name), text(r.type), `${r.required ? '' : '(optional) '}${r.description}`.trim()]),
  );
}

/**
 * A schema as Markdown: a field table for an object, one table per variant for a union of
 * objects (titled when the variants have titles), else its type on one line.
 */
export function schemaBlock(schema: unknown, opts: { withRequired?: boolean; depth?: number } = {}): string {
  const withRequired = opts.withRequired ?? true;
  const depth = opts.depth ?? 2;
  if (!isObject(schema)) return `Type: ${code(typeLabel(schema))}.`;
  if (objectOf(schema)) {
    const rows = fieldRows(schema, depth);
    const open = schema['additionalProperties'] === true ? ' Other fields may appear.' : '';
    return rows.length > 0 ? `${fieldTable(rows, withRequired)}${open ? `\n\n${open.trim()}` : ''}` : `An object${open ? ` (any fields)` : ' with no fields'}.`;
  }
  const alts = variants(schema);
  if (alts?.every((a) => objectOf(a))) {
    return alts
      .map((a, i) => {
        const title = typeof a['title'] === 'string' ? a['title'] : `variant ${i + 1}`;
        const about = typeof a['description'] === 'string' ? ` ${text(a['description'])}` : '';
        return `*${text(title)}*:${about}\n\n${fieldTable(fieldRows(a, depth), withRequired)}`;
      })
      .join('\n\n');
  }
  if (schema['type'] === 'array' && isObject(schema['items']) && objectOf(schema['items'])) {
    return `An array of:\n\n${fieldTable(fieldRows(schema['items'], depth), withRequired)}`;
  }
  const about = describe(schema);
  return `${code(typeLabel(schema))}${about ? `: ${about}` : '.'}`;
}
