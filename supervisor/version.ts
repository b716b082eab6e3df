/** The package version and commit, read once: package.json and .git sit two levels above the compiled file. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { readGitHash } from './gitHash.js';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The checkout's commit, or null when tuicd runs without its .git. */
export const GIT_HASH: string | null = readGitHash(fileURLToPath(new URL('../../', import.meta.url)));
