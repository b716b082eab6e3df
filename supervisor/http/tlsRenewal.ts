/**
 * Follows the TLS certificate and key files while the TCP listener serves them, so a renewal
 * (certbot, acme.sh, a cron job copying new files) takes effect without a save or a restart.
 * Polled with stat, not inotify: renewal tools swap symlinks and rename files into place, which a
 * watch on the old inode never sees; stat follows the link to whatever is there now.
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';

import type { DeepReadonly, TlsConfig } from '../config/schema.js';
import { loadTlsCredentials, type TlsCredentials, tlsFilePaths } from '../config/tlsCredentials.js';

/** Renewals are rare and a few seconds late is fine: two stat calls per period cost nothing. */
export const TLS_RENEWAL_POLL_MS = 5_000;

export interface TlsRenewalEvents {
  renewed(files: { cert: string; key: string }): void;
  /** The files changed but do not load (one written, the other not yet): the old credentials stay. */
  refused(message: string): void;
}

/** Starts following the files named by `settings` (now `serving`); the returned function stops it. */
export function followTlsFiles(
  settings: DeepReadonly<TlsConfig>,
  configDir: string,
  serving: TlsCredentials,
  apply: (credentials: TlsCredentials) => void,
  events: TlsRenewalEvents,
): () => void {
  if (settings.mode === 'off') return () => {};
  let current = serving;
  const files = tlsFilePaths(settings, configDir);
  const onChange = (now: Stats, before: Stats): void => {
    // watchFile also calls on a new atime (our own reads): only a change of the file counts.
    if (now.mtimeMs === before.mtimeMs && now.ctimeMs === before.ctimeMs && now.ino === before.ino && now.size === before.size) return;
    let credentials: TlsCredentials | null;
    try {
      credentials = loadTlsCredentials(settings, configDir);
    } catch (err) {
      events.refused((err as Error).message);
      return;
    }
    // Both files' watchers see one renewal: the second finds nothing new to apply.
    if (credentials === null || (credentials.cert.equals(current.cert) && credentials.key.equals(current.key))) return;
    current = credentials;
    apply(credentials);
    events.renewed(files);
  };
  const options = { persistent: false, interval: TLS_RENEWAL_POLL_MS };
  watchFile(files.cert, options, onChange);
  watchFile(files.key, options, onChange);
  return () => {
    unwatchFile(files.cert, onChange);
    unwatchFile(files.key, onChange);
  };
}
