/** Branch names for worktrees created without one: short, readable, unique among those given. */
import { randomInt } from 'node:crypto';

const ADJECTIVES = [
  'amber',
  'brisk',
  'calm',
  'deft',
  'eager',
  'fleet',
  'gentle',
  'hardy',
  'keen',
  'lucid',
  'mellow',
  'nimble',
  'quiet',
  'rapid',
  'steady',
  'tidy',
  'vivid',
  'witty',
];
const NOUNS = [
  'badger',
  'comet',
  'delta',
  'ember',
  'falcon',
  'grove',
  'harbor',
  'island',
  'juniper',
  'lantern',
  'meadow',
  'otter',
  'pine',
  'quartz',
  'river',
  'spruce',
  'tundra',
  'willow',
];

export function generateBranchName(existing: Iterable<string>): string {
  const taken = new Set(existing);
  for (let attempt = 0; attempt < 50; attempt++) {
    const name = `${ADJECTIVES[randomInt(ADJECTIVES.length)]}-${NOUNS[randomInt(NOUNS.length)]}`;
    if (!taken.has(name)) return name;
  }
  // 324 pairs all taken (or unlucky): a numeric suffix always finds a free one.
  const base = `${ADJECTIVES[0]}-${NOUNS[0]}`;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** A branch name as a directory name: slashes would nest directories under the worktree base. */
export function directoryNameFor(branch: string): string {
  return branch.replace(/[/\\:]+/g, '-');
}
