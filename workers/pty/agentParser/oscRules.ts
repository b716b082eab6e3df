/**
 * OSC strings the parser reads, handed over by the stripper as they end: 777 notify bodies, 9;4 progress, 133 shell
 * integration marks and 7770 agent hooks. Everything else (titles, cwd, hyperlinks) is not ours.
 */

export type OscSignal =
  | { kind: 'notify'; body: string }
  | { kind: 'progress'; state: number; value: number }
  | { kind: 'osc133'; mark: string; exitCode?: number }
  | { kind: 'hook'; fields: Record<string, string> };

/** First bytes of the OSC strings above ('7' for 777/7770, '9' for 9;4, '1' for 133): the stripper copies no other. */
export const PARSED_OSC_FIRST_BYTES: readonly number[] = [0x37, 0x39, 0x31];

/** Whether an OSC payload that starts with these bytes can be one of ours: only those are kept. */
export function isParsedOscPrefix(payload: string): boolean {
  return payload.startsWith('777;') || payload.startsWith('9;4') || payload.startsWith('133;') || payload.startsWith('7770;');
}

export function parseOsc(payload: string): OscSignal | null {
  if (payload.startsWith('777;notify;')) {
    // 777;notify;<title>;<body>: the body may itself hold semicolons.
    const rest = payload.slice('777;notify;'.length);
    const sep = rest.indexOf(';');
    return { kind: 'notify', body: (sep < 0 ? rest : rest.slice(sep + 1)).trim() };
  }
  if (payload.startsWith('9;4')) {
    const [, , st, val] = payload.split(';');
    const state = Number(st ?? 0);
    if (!Number.isInteger(state) || state < 0 || state > 4) return null;
    const value = val === undefined || val === '' ? 0 : Number(val);
    return { kind: 'progress', state, value: Number.isFinite(value) ? Math.max(0, Math.min(100, Math.round(value))) : 0 };
  }
  if (payload.startsWith('133;')) {
    // Shell integration marks come with every prompt: A and B (prompt drawn) end here, without a split.
    const mark = payload.charCodeAt(4);
    if (mark !== 0x43 && mark !== 0x44) return null; // C (command runs), D[;exit] (it ended)
    if (mark === 0x43 || payload.charCodeAt(5) !== 0x3b) return { kind: 'osc133', mark: mark === 0x43 ? 'C' : 'D' };
    const end = payload.indexOf(';', 6);
    const exit = Number(payload.slice(6, end < 0 ? undefined : end));
    return Number.isInteger(exit) && payload.length > 6 ? { kind: 'osc133', mark: 'D', exitCode: exit } : { kind: 'osc133', mark: 'D' };
  }
  if (payload.startsWith('7770;')) {
    // 7770;key=value;key=value — `state=busy|idle`, `agent=<type>`, `block=start|end`, `exit=<code>`.
    const fields: Record<string, string> = {};
    for (const part of payload.slice(5).split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && eq < 32)
        fields[part.slice(0, eq).trim()] = part
          .slice(eq + 1)
          .trim()
          .slice(0, 200);
    }
    return { kind: 'hook', fields };
  }
  return null;
}

/** What an OSC 777 body says about a question: confident, low confidence, or nothing (attention). */
export function notifyQuestion(body: string): boolean | null {
  if (/needs your permission|approval required/i.test(body)) return true;
  if (/is waiting for your input/i.test(body)) return false;
  return null;
}
