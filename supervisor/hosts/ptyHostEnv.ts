/**
 * How the pty host is started, for its memory to come back once sessions end (issue 29 item 2;
 * measured with 80 sessions × 1 MB ended and their tombstones expired, RSS over the host's start):
 * - `--expose-gc`: shared/idleGc.ts runs a full collection once the host is idle after a large
 *   free (without it nothing collected an idle host's old generation: +36 MiB against +20);
 * - `--max-semi-space-size=4` (MiB): a flood grows V8's young generation to its 16 MiB default ×2, and
 *   V8 keeps it committed after the flood (+35-42 MiB with it, +19-23 MiB with 4 MiB; the host's CPU
 *   for the same output did not change measurably: 4.8 s against 4.7-5.3 s).
 * MALLOC_ARENA_MAX=2 (+19.6) and MALLOC_TRIM_THRESHOLD_=128 KiB (+21.6) changed nothing measurable
 * beside the pinned mmap threshold below, so neither is set.
 */
export const PTY_HOST_NODE_ARGS: readonly string[] = ['--expose-gc', '--max-semi-space-size=4'];

/**
 * The pty host's node flags: PTY_HOST_NODE_ARGS, then any in TUIC_PTY_NODE_ARGS (split on white space),
 * for diagnostics such as `--cpu-prof --cpu-prof-dir=/tmp/prof` or `--trace-gc`, which NODE_OPTIONS
 * refuses or would hand to the supervisor as well.
 */
export function ptyHostNodeArgs(env: NodeJS.ProcessEnv): string[] {
  const extra = env['TUIC_PTY_NODE_ARGS']?.split(/\s+/).filter((arg) => arg !== '') ?? [];
  return [...PTY_HOST_NODE_ARGS, ...extra];
}

/**
 * The pty host's own environment: the supervisor's, with glibc's mmap threshold pinned at its
 * default 128 KiB. glibc otherwise raises the threshold to the size of the first freed mmapped
 * block, so after one session's 2 MiB output ring is freed the next rings come from the heap, where
 * long-lived closed-session tails allocated between them keep the freed space from ever going back
 * to the system (measured: a churn of 300 sessions × 2 MB left the host 135 MB larger, 56-60 MB with
 * the threshold pinned; with the idle collection, 80 sessions × 1 MB ended and expired leave +20 MiB
 * pinned against +27 MiB unpinned). A value the user set is kept. Shells never see it: their environment is
 * built by the supervisor, not inherited from the pty host.
 */
const MMAP_THRESHOLD_BYTES = '131072';

export function ptyHostEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env['MALLOC_MMAP_THRESHOLD_'] === undefined ? { ...env, MALLOC_MMAP_THRESHOLD_: MMAP_THRESHOLD_BYTES } : env;
}
