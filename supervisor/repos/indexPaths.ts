/**
 * The paths a git index tracks, read from the index file itself (formats 2, 3 and 4), so a pool
 * thread can stat a checkout's tracked files without starting git. Anything this reader does not
 * fully understand answers null, and the caller runs git instead of trusting a guess.
 */

/** Fixed part of an on-disk entry before the object id: ctime, mtime, dev, ino, mode, uid, gid, size (4 bytes each). */
const ENTRY_STAT_BYTES = 40;
const FLAG_EXTENDED = 0x4000;
const MODE_TYPE_MASK = 0o170000;
/** Submodules: their state is a HEAD inside another repository, which a stat of the directory does not show. */
const MODE_GITLINK = 0o160000;
/** A sparse index's directory entries stand for files this reader would not see. */
const MODE_DIRECTORY = 0o040000;
/** Extensions that move entries out of this file (split index) or collapse them (sparse directories). */
const UNREADABLE_EXTENSIONS = new Set(['link', 'sdir']);

/** git's offset varint (read-cache.c decode_varint): each continuation adds one before shifting. */
function readVarint(buf: Buffer, at: number): { value: number; next: number } | null {
  let i = at;
  if (i >= buf.length) return null;
  let c = buf[i++]!;
  let value = c & 0x7f;
  while (c & 0x80) {
    if (i >= buf.length) return null;
    c = buf[i++]!;
    value = ((value + 1) << 7) + (c & 0x7f);
  }
  return { value, next: i };
}

/**
 * Tracked paths (stage entries of a conflict each listed), or null for an index this reader must not
 * vouch for: unknown version, submodule or sparse-directory entries, a split index, a name that is
 * not UTF-8, or a truncated file. `hashBytes` is 20 for SHA-1 repositories, 32 for SHA-256.
 */
export function indexPaths(buf: Buffer, hashBytes: number): string[] | null {
  if (buf.length < 12 + hashBytes || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const end = buf.length - hashBytes; // the trailing checksum
  const paths: string[] = [];
  let off = 12;
  let previous = '';
  for (let n = 0; n < count; n++) {
    const flagsAt = off + ENTRY_STAT_BYTES + hashBytes;
    if (flagsAt + 2 > end) return null;
    const modeType = buf.readUInt32BE(off + 24) & MODE_TYPE_MASK;
    if (modeType === MODE_GITLINK || modeType === MODE_DIRECTORY) return null;
    const flags = buf.readUInt16BE(flagsAt);
    let nameAt = flagsAt + 2;
    if (flags & FLAG_EXTENDED) {
      if (version < 3) return null;
      nameAt += 2;
    }
    let name: string;
    if (version === 4) {
      // Prefix compression: drop `strip` characters of the previous name, then a NUL-ended suffix.
      const strip = readVarint(buf, nameAt);
      if (!strip || strip.value > Buffer.byteLength(previous)) return null;
      const nul = buf.indexOf(0, strip.next);
      if (nul < 0 || nul >= end) return null;
      const prefix = Buffer.from(previous).subarray(0, Buffer.byteLength(previous) - strip.value);
      const bytes = Buffer.concat([prefix, buf.subarray(strip.next, nul)]);
      name = bytes.toString('utf8');
      if (Buffer.byteLength(name) !== bytes.length || name.includes('\uFFFD')) return null;
      off = nul + 1;
    } else {
      const nul = buf.indexOf(0, nameAt);
      if (nul < 0 || nul >= end) return null;
      const bytes = buf.subarray(nameAt, nul);
      name = bytes.toString('utf8');
      if (name.includes('\uFFFD')) return null;
      // Entries are NUL-padded to a multiple of 8 bytes, with at least one NUL.
      off += (nul - off + 8) & ~7;
    }
    paths.push(name);
    previous = name;
  }
  // Extensions: a 4-byte signature and a 4-byte size each, up to the checksum.
  while (off + 8 <= end) {
    const signature = buf.toString('latin1', off, off + 4);
    if (UNREADABLE_EXTENSIONS.has(signature)) return null;
    off += 8 + buf.readUInt32BE(off + 4);
  }
  return off === end ? paths : null;
}
