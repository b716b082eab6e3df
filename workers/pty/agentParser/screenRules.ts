/**
 * Rules for an agent's current screen: where its input box is, numbered choice
 * prompts, per-agent status lines, the active-subtask mode line, the slash menu, and which rows may
 * be a question. Screens, not lines: agents redraw these in place with cursor moves.
 */
import type { ChoiceOption, ParsedEvent, SlashMenuItem } from '../../../shared/protocol/parsedEvents.js';

type ChoicePrompt = Extract<ParsedEvent, { type: 'choice-prompt' }>;
type StatusLine = Extract<ParsedEvent, { type: 'status-line' }>;

/** A horizontal rule of an agent's input box (Claude draws one above and one below its composer). */
const BOX_RULE = /^\s*[─━]{20,}/;
/** A composer row: Claude's `❯`, Codex's `›`, older builds' `>`. */
const COMPOSER = /^\s*[❯›>](?:\s|$)/;

/**
 * Index of the first row that belongs to the agent's chrome (the input box and what is under it),
 * or rows.length when there is none: chat content lies above it. The box is searched bottom-up,
 * so a rule printed in the transcript does not count.
 */
export function chromeStart(rows: readonly string[]): number {
  for (let y = rows.length - 1; y >= 1; y--) {
    if (COMPOSER.test(rows[y]!) && BOX_RULE.test(rows[y - 1]!)) return y - 1;
  }
  // Codex: no rules; the composer row is the last `›` row with only footer text below it.
  for (let y = rows.length - 1; y >= Math.max(0, rows.length - 8); y--) {
    if (/^\s*›/.test(rows[y]!) && rows.slice(y + 1).every((r) => !/^\s*•/.test(r))) return y;
  }
  return rows.length;
}

const OPTION = /^\s*(?:([❯›>])\s*)?(\d{1,2})[.)]\s+(.+?)\s*$/;
const TITLE_VERB = /^(?:do you want|would you like|proceed with|continue|should i|confirm|apply|allow)\b/i;
const DESTRUCTIVE = /^(?:no|cancel|reject|abort|deny|don['’]t|do not)\b/i;
const FOOTER = /Esc to ([\w-]+)(?:\s*·\s*Tab to ([\w-]+))?/i;
const HINT = /^(.*?)\s*\(([^()]{1,30})\)$/;
/** How far below the options a footer is looked for, and above them a title. */
const FOOTER_REACH = 3;
const TITLE_REACH = 6;

/**
 * The numbered prompt on screen, bottom-most first: options 1..n (n ≥ 2) on consecutive rows under a
 * title that asks (ends in `?` or starts with a verb of consent). A numbered list under a plain
 * sentence (a markdown list in the transcript) is not a prompt.
 */
export function findChoicePrompt(rows: readonly string[]): ChoicePrompt | null {
  for (let end = rows.length - 1; end >= 1; end--) {
    const last = OPTION.exec(rows[end]!);
    if (!last) continue;
    let first = end;
    while (first > 0 && OPTION.test(rows[first - 1]!)) first--;
    const parsed = rows.slice(first, end + 1).map((r) => OPTION.exec(r)!);
    if (parsed.length < 2 || parsed.some((m, i) => Number(m[2]) !== i + 1)) {
      end = first;
      continue;
    }
    let t = first - 1;
    while (t >= 0 && first - t <= TITLE_REACH && rows[t]!.trim() === '') t--;
    const title = t >= 0 ? rows[t]!.trim() : '';
    if (!(title.endsWith('?') || TITLE_VERB.test(title))) {
      end = first;
      continue;
    }
    const options: ChoiceOption[] = parsed.map((m) => option(m[2]!, m[3]!, m[1] !== undefined));
    const prompt: ChoicePrompt = { type: 'choice-prompt', title, options };
    for (let y = end + 1; y < rows.length && y <= end + FOOTER_REACH; y++) {
      const f = FOOTER.exec(rows[y]!);
      if (!f) continue;
      prompt.dismiss_key = f[1]!.toLowerCase();
      if (f[2]) prompt.amend_key = f[2].toLowerCase();
      break;
    }
    return prompt;
  }
  return null;
}

function option(key: string, text: string, highlighted: boolean): ChoiceOption {
  let label = text.trim();
  let hint: string | undefined;
  const h = HINT.exec(label);
  if (h && h[1]!.length > 0) {
    label = h[1]!;
    hint = h[2]!.trim();
  }
  const o: ChoiceOption = { key, label, highlighted, destructive: DESTRUCTIVE.test(label) };
  if (hint !== undefined) o.hint = hint;
  return o;
}

const DURATION = /\b\d+[hms](?:\s*\d+[ms])*\b/;

interface StatusRule {
  rx: RegExp;
  /** Builds the event from the match; null rejects it. */
  build(m: RegExpExecArray, line: string): StatusLine | null;
}

function statusFrom(task: string, line: string, extra: string | undefined): StatusLine {
  const status: StatusLine = { type: 'status-line', task_name: task.trim(), full_line: line.trim() };
  if (extra !== undefined) {
    const time = DURATION.exec(extra);
    if (time) status.time_info = time[0];
    const tokens = /[↓↑]?\s*[\d.]+k?\s*tokens/.exec(extra);
    if (tokens) status.token_info = tokens[0].trim();
  }
  return status;
}

const CLAUDE_STATUS: StatusRule = {
  rx: /^\s*[·✢✳✶✻✽✺*]\s*([^\s…·][^…]{0,60}?)…\s*(?:\(([^)]*)\)?)?\s*$/,
  build: (m, line) => statusFrom(m[1]!, line, m[2]),
};
const CODEX_STATUS: StatusRule = {
  rx: /^\s*•\s*([A-Z][\w ]{0,40}?)\s*\(([^)]*?esc to interrupt)\)/,
  build: (m, line) => statusFrom(m[1]!, line, m[2]),
};
const GEMINI_STATUS: StatusRule = {
  rx: /^\s*[⠀-⣿]\s+(.+?)\s*\((esc to cancel[^)]*)\)/,
  build: (m, line) => statusFrom(m[1]!.replace(/\.{3}$|…$/, ''), line, m[2]),
};
const AIDER_STATUS: StatusRule = { rx: /^\s*[░█▒▓]{2,}\s+(\S.*)$/, build: (m, line) => statusFrom(m[1]!, line, undefined) };
const COPILOT_STATUS: StatusRule = { rx: /^\s*∴\s*(\S[^…]*?)…\s*(\(.*\))?\s*$/, build: (m, line) => statusFrom(m[1]!, line, m[2]) };
const GENERIC_STATUS: StatusRule = { rx: /^\s*\[Running\]\s*(.*)$/, build: (m, line) => statusFrom(m[1] || 'Running', line, undefined) };

const STATUS_RULES: Readonly<Record<string, readonly StatusRule[]>> = {
  claude: [CLAUDE_STATUS, GENERIC_STATUS],
  codex: [CODEX_STATUS, GENERIC_STATUS],
  gemini: [GEMINI_STATUS, GENERIC_STATUS],
  aider: [AIDER_STATUS, GENERIC_STATUS],
};
const OTHER_STATUS: readonly StatusRule[] = [CLAUDE_STATUS, CODEX_STATUS, GEMINI_STATUS, COPILOT_STATUS, GENERIC_STATUS];

/** A status line is live only this close to the input box (in non-empty rows): further up it is transcript. */
const STATUS_ZONE_ROWS = 4;

/** The agent's status line just above its input box (bottom-most wins), else null. */
export function findStatusLine(rows: readonly string[], agentType: string, chrome: number): StatusLine | null {
  const rules = STATUS_RULES[agentType] ?? OTHER_STATUS;
  let seen = 0;
  for (let y = Math.min(chrome, rows.length) - 1; y >= 0 && seen < STATUS_ZONE_ROWS; y--) {
    const line = rows[y]!;
    if (line.trim().length === 0) continue;
    seen++;
    for (const rule of rules) {
      const m = rule.rx.exec(line);
      if (m) {
        const status = rule.build(m, line);
        if (status && status.task_name.length > 0) return status;
      }
    }
  }
  return null;
}

const SUBTASKS = /(?:⏵⏵|››).*?(\d+)\s+(local agents?|shells?|bash|background tasks?)/;
const CODEX_BACKGROUND = /·\s*(\d+)\s+(background terminals?)\s+running/;

/** Background work the agent's footer announces: `⏵⏵ … · 2 local agents`, Codex's `1 background terminal running`. */
export function findSubtasks(rows: readonly string[]): { count: number; task_type: string } | null {
  for (let y = rows.length - 1; y >= 0; y--) {
    const m = SUBTASKS.exec(rows[y]!) ?? CODEX_BACKGROUND.exec(rows[y]!);
    if (m) return { count: Number(m[1]), task_type: m[2]! };
  }
  return null;
}

const SLASH_ITEM = /^\s*([❯›>])?\s*(\/[\w:.-]+)\s{2,}(\S.*?)\s*$/;

/** The slash-command menu under a composer that holds `/…`, else null. */
export function findSlashMenu(rows: readonly string[], chrome: number): SlashMenuItem[] | null {
  let composer = -1;
  for (let y = chrome; y < rows.length; y++) {
    if (/^\s*[❯›>]\s*\/\S*$/.test(rows[y]!)) {
      composer = y;
      break;
    }
  }
  if (composer < 0) return null;
  const items: SlashMenuItem[] = [];
  for (let y = composer + 1; y < rows.length; y++) {
    const m = SLASH_ITEM.exec(rows[y]!);
    if (m) items.push({ command: m[2]!, description: m[3]!, highlighted: m[1] !== undefined });
    else if (items.length > 0 && rows[y]!.trim() !== '' && !BOX_RULE.test(rows[y]!)) break;
  }
  return items.length > 0 ? items : null;
}

/**
 * Whether a changed row ending in `?` may be the agent asking: not a comment, a diff line, an arrow
 * or a path (`->`, `=>`, `::`), nor a parenthesised aside `)?`.
 */
export function isQuestionCandidate(row: string): boolean {
  const t = row.trim();
  if (t.length < 2 || !t.endsWith('?') || t.endsWith(')?')) return false;
  // Comments, diff lines, and the user's own prompt echoed in the transcript (`❯ why?`).
  if (/^(?:\/\/|#|[+-]|[❯›>](?:\s|$))/.test(t)) return false;
  return !(t.includes('->') || t.includes('=>') || t.includes('::'));
}

/** The last `count` non-empty rows above the chrome: what the user sees as the latest chat. */
export function latestChat(rows: readonly string[], chrome: number, count: number): string[] {
  const out: string[] = [];
  for (let y = Math.min(chrome, rows.length) - 1; y >= 0 && out.length < count; y--) {
    const t = rows[y]!.trim();
    if (t.length > 0) out.push(t);
  }
  return out;
}
