/**
 * The checks on repository and file path arguments no schema can make: traversal, an existing
 * directory, staying inside the repository. The shapes (a string, absolute, how long) are the
 * routes' schemas (repoSchemas.ts); these run on what passed them, and on the repo tool's arguments,
 * which no schema checked (so a repository path's absoluteness is checked here again).
 */
import { isAbsolute } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { hasDotDot, RootGate } from '../fs/rootGate.js';

export { hasDotDot };

/** The longest path a route takes (the schemas' maxLength too). */
export const MAX_PATH_CHARS = 4096;

/** Where a refused argument came from, as the error names it. */
export type ArgLocation = 'query' | 'body' | 'arguments';

const invalid = (key: string, message: string, where?: ArgLocation) =>
  new ApiError('invalid_input', message, { extra: where ? { field: key, in: where } : { field: key } });

/**
 * A repository path: no traversal, absolute (invalid_input otherwise; `..` and NUL are refused
 * before anything resolves the path), inside a root of the gate (forbidden otherwise, whether it
 * exists or not), an existing directory (invalid_input); answered resolved.
 */
export function checkRepoPath(gate: RootGate, value: string, key = 'path', where?: ArgLocation): string {
  if (value.includes('\0') || hasDotDot(value)) throw invalid(key, 'Path traversal is not allowed', where);
  if (!isAbsolute(value)) throw invalid(key, `'${key}' must be an absolute path, got ${quoteClientInput(value)}`, where);
  const full = gate.contain(value, key);
  if (!RootGate.isDirectory(full)) throw invalid(key, `'${key}' is not an existing directory: ${quoteClientInput(value)}`, where);
  return full;
}

/** A repository path from input no schema checked (the repo tool's arguments): required, bounded, then checkRepoPath. */
export function repoPathArg(gate: RootGate, value: unknown, key = 'path'): string {
  if (typeof value !== 'string' || value === '') throw invalid(key, `'${key}' is required (an absolute repository path)`);
  if (value.length > MAX_PATH_CHARS) throw invalid(key, `'${key}' must be at most ${MAX_PATH_CHARS} characters`);
  return checkRepoPath(gate, value, key);
}

/** The spellings a repository path arrives under, the usual one first. */
export const REPO_PATH_KEYS = ['path', 'repoPath', 'repo_path'] as const;

/**
 * The first of several accepted spellings (`path`, `repoPath`, `repo_path`) that is present, or a
 * refusal naming the first spelling: one of them is required, which a schema cannot say per field.
 */
export function firstOf(input: Readonly<Record<string, unknown>>, keys: readonly string[], where: ArgLocation, what: string): { key: string; value: string } {
  for (const key of keys) {
    const value = input[key];
    if (typeof value === 'string') return { key, value };
  }
  const key = keys[0]!;
  throw invalid(key, `'${key}' is required (${what})`, where);
}

/** The repository path of a checked query or body, under the first of `keys` present, validated. */
export function repoPathFrom(gate: RootGate, input: Readonly<Record<string, unknown>>, where: ArgLocation, keys: readonly string[] = REPO_PATH_KEYS): string {
  const { key, value } = firstOf(input, keys, where, 'an absolute repository path');
  return checkRepoPath(gate, value, key, where);
}

/** A path relative to the repository (a file argument): no traversal, not absolute, no NUL (forbidden otherwise). */
export function relativeFile(value: string, key: string): string {
  if (value.includes('\0') || hasDotDot(value)) throw new ApiError('forbidden', `'${key}' escapes the repository (path traversal is not allowed)`);
  if (isAbsolute(value)) throw new ApiError('forbidden', `'${key}' must be relative to the repository`);
  return value;
}
