/** `session action=input special_key`: the 21 key names an agent may send and the bytes a terminal sends for each. */

const ESC = '\x1b';

/** Name → bytes, in the order the tool description lists them. Cursor keys use normal (CSI) mode, which readline and TUIs accept. */
export const SPECIAL_KEYS: Readonly<Record<string, string>> = {
  enter: '\r',
  tab: '\t',
  'ctrl+c': '\x03',
  'ctrl+d': '\x04',
  'ctrl+z': '\x1a',
  'ctrl+l': '\x0c',
  'ctrl+a': '\x01',
  'ctrl+e': '\x05',
  'ctrl+k': '\x0b',
  'ctrl+u': '\x15',
  'ctrl+w': '\x17',
  'ctrl+r': '\x12',
  up: `${ESC}[A`,
  down: `${ESC}[B`,
  left: `${ESC}[D`,
  right: `${ESC}[C`,
  home: `${ESC}[H`,
  end: `${ESC}[F`,
  backspace: '\x7f',
  delete: `${ESC}[3~`,
  escape: ESC,
};

export const SPECIAL_KEY_NAMES: readonly string[] = Object.keys(SPECIAL_KEYS);

/** The bytes for a key name (case-insensitive); `Unknown special key: X` otherwise. */
export function translateSpecialKey(name: string): Buffer {
  const key = name.trim().toLowerCase();
  // hasOwn: 'constructor' or '__proto__' must not resolve through the prototype.
  if (!Object.hasOwn(SPECIAL_KEYS, key)) throw new Error(`Unknown special key: ${name}`);
  return Buffer.from(SPECIAL_KEYS[key]!, 'latin1');
}
