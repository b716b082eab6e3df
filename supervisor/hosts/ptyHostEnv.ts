/**
 * The pty host's own environment: the supervisor's, with glibc's mmap threshold pinned at its
 * default 128 KiB. glibc otherwise raises the threshold to the size of the first freed mmapped
 * block, so after one session's 2 MiB output ring is freed the next rings come from the heap, where
 * long-lived closed-session tails allocated between them keep the freed space from ever going back
 * to the system (measured: a churn of 300 sessions × 2 MB left the host 135 MB larger, 56-60 MB with
 * the threshold pinned). A value the user set is kept. Shells never see it: their environment is
 * built by the supervisor, not inherited from the pty host.
 */
const MMAP_THRESHOLD_BYTES = '131072';

export function ptyHostEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env['MALLOC_MMAP_THRESHOLD_'] === undefined ? { ...env, MALLOC_MMAP_THRESHOLD_: MMAP_THRESHOLD_BYTES } : env;
}
