/** Repository path arguments of the /repo, /worktrees and /fs routes: validated the same way everywhere (400). */
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

import { HttpError } from '../http/types.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';

const MAX_PATH_CHARS = 4096;

/** True when a path has a `..` segment: it must be refused before any resolution hides it. */
export function hasDotDot(path: string): boolean {
  return path.split(/[\\/]/).includes('..');
}

/** REFERENCE §1 validate_path_string: required, no traversal, absolute; then it must be a directory. */
export function repoPathArg(value: unknown, key = 'path'): string {
  if (typeof value !== 'string' || value === '') throw new HttpError(400, `'${key}' is required (an absolute repository path)`);
  if (value.includes('\0') || hasDotDot(value)) throw new HttpError(400, 'Path traversal is not allowed');
  if (!isAbsolute(value)) throw new HttpError(400, `'${key}' must be an absolute path, got ${quoteClientInput(value)}`);
  if (value.length > MAX_PATH_CHARS) throw new HttpError(400, `'${key}' must be at most ${MAX_PATH_CHARS} characters`);
  let isDir = false;
  try {
    isDir = statSync(value).isDirectory();
  } catch {
    /* answered below */
  }
  if (!isDir) throw new HttpError(400, `'${key}' is not an existing directory: ${quoteClientInput(value)}`);
  return resolve(value);
}

/** The first of several accepted spellings (`path`, `repoPath`, `repo_path`) that is present. */
export function pick(source: { get(k: string): string | null } | Record<string, unknown>, keys: readonly string[]): { key: string; value: unknown } {
  for (const k of keys) {
    const v =
      'get' in source && typeof source.get === 'function' ? (source as { get(k: string): string | null }).get(k) : (source as Record<string, unknown>)[k];
    if (v !== undefined && v !== null) return { key: k, value: v };
  }
  return { key: keys[0]!, value: undefined };
}

/** The spellings a repository path arrives under, the usual one first. */
export const REPO_PATH_KEYS = ['path', 'repoPath', 'repo_path'] as const;

/** The repository path from a query or a JSON body, under the first of `keys` present, validated (400). */
export function repoPathFrom(source: Parameters<typeof pick>[0], keys: readonly string[] = REPO_PATH_KEYS): string {
  const { key, value } = pick(source, keys);
  return repoPathArg(value, key);
}

export function stringArg(value: unknown, key: string): string {
  if (typeof value !== 'string' || value === '') throw new HttpError(400, `'${key}' is required (a non-empty string)`);
  return value;
}

export function stringListArg(value: unknown, key: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v !== ''))
    throw new HttpError(400, `'${key}' must be an array of non-empty strings`);
  return value as string[];
}

/** A path relative to the repository (a file argument): no traversal, not absolute, no NUL. */
export function relativeFileArg(value: unknown, key: string): string {
  const s = stringArg(value, key);
  if (s.includes('\0') || hasDotDot(s)) throw new HttpError(403, `'${key}' escapes the repository (path traversal is not allowed)`);
  if (isAbsolute(s)) throw new HttpError(403, `'${key}' must be relative to the repository`);
  return s;
}

export function intArg(raw: string | null | undefined, key: string, dflt: number, min: number, max: number): number {
  if (raw === null || raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new HttpError(400, `'${key}' must be an integer between ${min} and ${max}, got ${quoteClientInput(raw)}`);
  return n;
}

export function boolArg(raw: unknown, key: string, dflt: boolean): boolean {
  if (raw === null || raw === undefined || raw === '') return dflt;
  if (raw === true || raw === 'true' || raw === '1') return true;
  if (raw === false || raw === 'false' || raw === '0') return false;
  throw new HttpError(400, `'${key}' must be true or false, got ${quoteClientInput(raw)}`);
}
