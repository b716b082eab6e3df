// Writes config.schema.json next to config.json so editors can complete and check the file.
// Derived from the typebox schema; fields with a default are not "required" in the editor view,
// because a missing key simply reads as its default.

import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { atomicWriteFile } from './atomicWrite.js';
import { isPlainObject, type JsonObject } from './merge.js';
import { AppConfigSchema } from './schema.js';

export const CONFIG_SCHEMA_FILE_NAME = 'config.schema.json';
const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

function relaxRequired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(relaxRequired);
  if (!isPlainObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) out[key] = relaxRequired(value);
  const properties = isPlainObject(node['properties']) ? node['properties'] : undefined;
  if (Array.isArray(node['required']) && properties !== undefined) {
    const required = node['required'].filter((name) => {
      const property = properties[String(name)];
      return !(isPlainObject(property) && 'default' in property);
    });
    if (required.length > 0) out['required'] = required;
    else delete out['required'];
  }
  return out;
}

/** The editor-facing JSON Schema of config.json. */
export function buildConfigJsonSchema(): JsonObject {
  const body = relaxRequired(JSON.parse(JSON.stringify(AppConfigSchema))) as JsonObject;
  return {
    $schema: JSON_SCHEMA_DIALECT,
    title: 'tuicd config.json',
    description: 'Settings of the tuicd supervisor. Secrets are never returned by GET /config.',
    ...body,
  };
}

/** Writes config.schema.json in the directory of `configFilePath`; returns the path written. */
export async function writeSchema(configFilePath: string): Promise<string> {
  const dir = dirname(configFilePath);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, CONFIG_SCHEMA_FILE_NAME);
  await atomicWriteFile(target, `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`, { mode: 0o644 });
  return target;
}
