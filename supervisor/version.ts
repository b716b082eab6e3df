/** The commit tuicd runs from, read once: .git sits two levels above the compiled file (dist/supervisor/). */
import { fileURLToPath } from 'node:url';

import { readGitHash } from './gitHash.js';

/** The checkout's commit, or null when tuicd runs without its .git. */
export const GIT_HASH: string | null = readGitHash(fileURLToPath(new URL('../../', import.meta.url)));
