/** URL encoding for generated requests, byte-exact (shared by every case generator). */

/** Percent-encodes the UTF-8 bytes of `s` (lone surrogates become U+FFFD, never a throw). */
export function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `?k=v&…` with both sides percent-encoded; '' for no parameters. */
export function query(params: Array<[string, string]> | Record<string, string>): string {
  const entries = Array.isArray(params) ? params : Object.entries(params);
  if (entries.length === 0) return '';
  return '?' + entries.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&');
}
