/**
 * initialize.instructions, the second way (beside tool descriptions) to tell an agent how to work
 * with tuicd. Instructions reach only clients that surface them, so they own just what no tool
 * description can: the wire markers, rules about tools that are not ours (git worktree), rules
 * spanning several calls (Submit) and live state.
 * Everything about a tool lives in its description; the test
 * `instructions_do_not_repeat_what_tool_descriptions_already_say` keeps it that way.
 */
import type { InstructionContext } from './surface.js';

/** Short session ids in the list: enough to tell a dozen sessions apart, cheap per turn. */
const SESSION_ID_CHARS = 8;

/**
 * The one-call Submit rule, byte-identical in both surfaces: it spans a write, an Enter and a
 * polling loop, so no single action's description can own it.
 */
export const SUBMIT_RULE =
  "Submit: to give another terminal's agent a prompt or command, make one `session action=submit` call with the complete text. Never split it into `action=input` text and a separate Enter, and never poll the screen to decide when to press Enter.";

/** Forbids a command of a tool that is not ours, which no TUIC tool description can reliably ban. */
export const WORKTREES_RULE =
  "Worktrees: never run `git worktree add` or `git worktree remove` yourself; a worktree made behind TUICommander's back gets no tab, no session and no cleanup.";

const COLLAPSED_GUIDE =
  'Only the meta-tools (and progress, when on) are listed here. To do anything else: search_tools with a few keywords, then get_tool_schema for the arguments of the tool you picked, then call_tool with tool_name and arguments.';

function markers(ctx: InstructionContext): string[] {
  const lines = [
    `- Start the first message of each MCP connection or reconnect with \`TUICommander v${ctx.version} is connected.\` Once per connection, never once per turn.`,
  ];
  if (ctx.intentMarkers) {
    lines.push(
      '- At the start of every user task and on a material phase change, print one line at column 0: `intent: <what you are doing> (<title of at most 3 words>)`.',
    );
  }
  if (ctx.suggestFollowups) {
    lines.push(
      '- When a task is finished, end with one line at column 0: `suggest: [ A | B | C ]`, exactly three follow-ups of at most 40 characters each. It marks the task completed.',
    );
  }
  return lines;
}

export function renderInstructions(ctx: InstructionContext): string {
  const out = [`# TUICommander v${ctx.version}`, '', '## Protocol', ...markers(ctx), '', '## Tools'];
  if (ctx.surface === 'collapsed') out.push(COLLAPSED_GUIDE);
  out.push(`- ${WORKTREES_RULE}`, `- ${SUBMIT_RULE}`);
  if (ctx.progressTracking) {
    out.push(
      '',
      '## Progress — mandatory',
      'Call progress when you finish a user task (type done) and whenever you cannot go on without the user (type blocked). A task is not finished until it is reported.',
    );
  }
  if (ctx.sessions.length > 0) {
    out.push('', `## Sessions (${ctx.sessions.length})`);
    for (const s of ctx.sessions) out.push(`- ${s.session_id.slice(0, SESSION_ID_CHARS)}${s.alias ? ` ${s.alias}` : ''} ${s.cwd}`);
  }
  if (ctx.repos.length > 0) {
    out.push('', `## Repos (${ctx.repos.length})`);
    for (const r of ctx.repos) out.push(`- ${r}`);
  }
  if (ctx.peerCount > 0) out.push('', `Connected peer agents: ${ctx.peerCount}`);
  return out.join('\n') + '\n';
}
