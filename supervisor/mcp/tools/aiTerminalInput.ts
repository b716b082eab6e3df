/**
 * The input side of `ai_terminal_*`: send_input (a command, submitted with a receipt as `session
 * submit` does), send_key (one named key) and drive_agent (send, wait, read in one call). Each asks
 * the person first (confirmOrRefuse) and types nothing without a yes; arguments are checked before
 * anyone is asked.
 */
import { Type } from 'typebox';

import { clientSubmit, commandText } from '../../sessions/submission.js';
import { confirmOrRefuse, sessionFor, sessionIdArg, type AiTerminalDeps } from './aiTerminalGuard.js';
import { AiTerminalScreenConstants, clampWaitMs, patternArg, screenText, waitForScreen } from './aiTerminalScreen.js';
import { sessionState } from '../../sessions/sessionRecord.js';
import { waitForSession } from '../../sessions/sessionWaiter.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';
import { SPECIAL_KEY_NAMES, translateSpecialKey } from './specialKeys.js';

const AiTerminalInputConstants = {
  DRIVE_DEFAULT_MS: 30_000,
  DRIVE_DEFAULT_LINES: 80,
} as const;

/** The command of send_input: `command`, or `text` as older clients name it. */
function commandArg(args: Record<string, unknown>, tool: string): string {
  const raw = (args['command'] ?? args['text']) as string | undefined;
  if (raw === undefined || commandText(raw) === '') throw new ToolError('invalid_input', `${tool} requires a non-empty 'command'`, { field: 'command' });
  return raw;
}

const commandProp = Type.String({ description: 'The command to type; Enter is pressed for it', errorMessage: "'command' must be a string" });

export function createInputTools(deps: AiTerminalDeps): NativeTool[] {
  const { sessions } = deps;
  return [
    defineTool({
      name: 'ai_terminal_send_input',
      summary:
        'Type a command into a session and press Enter (the line is cleared first; multi-line text goes as one paste). Always asks the user first. → the submit receipt {submitted, write_state, acknowledged, retry_safe, reason?, …}.',
      properties: {
        session_id: sessionIdArg,
        command: Type.Optional(commandProp),
        text: Type.Optional(Type.String({ description: 'Another name for command', errorMessage: "'text' must be a string" })),
      },
      required: ['session_id'],
      handler: async (args, caller) => {
        const command = commandArg(args, 'ai_terminal_send_input');
        const record = sessionFor(sessions, args['session_id'] as string, { live: true });
        await confirmOrRefuse(deps, caller, 'ai_terminal_send_input', record, `Type and run: ${command}`);
        return { ...(await clientSubmit(sessions, record.session_id, command, { signal: caller.signal })) };
      },
    }),
    defineTool({
      name: 'ai_terminal_send_key',
      summary: `Send one special key to a session. Always asks the user first. Keys: ${SPECIAL_KEY_NAMES.join(', ')}. → {ok:true}.`,
      properties: {
        session_id: sessionIdArg,
        key: Type.String({ minLength: 1, description: 'A key name (enter, tab, ctrl+c, escape, up, …)', errorMessage: "'key' must be a non-empty string" }),
      },
      required: ['session_id', 'key'],
      handler: async (args, caller) => {
        let bytes: Buffer;
        try {
          bytes = translateSpecialKey(args['key'] as string);
        } catch (err) {
          throw new ToolError('invalid_input', `${(err as Error).message}. Keys: ${SPECIAL_KEY_NAMES.join(', ')}`, { field: 'key' });
        }
        const record = sessionFor(sessions, args['session_id'] as string, { live: true });
        await confirmOrRefuse(deps, caller, 'ai_terminal_send_key', record, `Press ${(args['key'] as string).trim().toLowerCase()}`);
        await sessions.writeSequence(record.session_id, [bytes]);
        return { ok: true };
      },
    }),
    defineTool({
      name: 'ai_terminal_drive_agent',
      summary:
        'Send, wait, read in one call: submits command (if given; asks the user first), waits until wait_pattern shows or the session is idle again (timeout_ms, default 30000), then reads. → {screen, cursor, shell_state, session_state, receipt?, matched, timed_out}. Pass since_cursor to read only newer lines.',
      properties: {
        session_id: sessionIdArg,
        command: Type.Optional(commandProp),
        timeout_ms: Type.Optional(
          Type.Integer({ minimum: 0, description: 'How long to wait (default 30000, at most 295000)', errorMessage: "'timeout_ms' must be an integer >= 0" }),
        ),
        wait_pattern: Type.Optional(
          Type.String({
            minLength: 1,
            description: 'A regular expression to wait for instead of idle',
            errorMessage: "'wait_pattern' must be a non-empty string",
          }),
        ),
        lines: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: AiTerminalScreenConstants.READ_MAX_LINES,
            description: `Lines to return (default ${AiTerminalInputConstants.DRIVE_DEFAULT_LINES})`,
            errorMessage: `'lines' must be an integer between 1 and ${AiTerminalScreenConstants.READ_MAX_LINES}`,
          }),
        ),
        since_cursor: Type.Optional(Type.Integer({ minimum: 0, errorMessage: "'since_cursor' must be an integer >= 0" })),
      },
      required: ['session_id'],
      handler: async (args, caller) => {
        const pattern = args['wait_pattern'] === undefined ? undefined : patternArg(args['wait_pattern'] as string, 'wait_pattern');
        const command = args['command'] === undefined ? undefined : commandArg(args, 'ai_terminal_drive_agent');
        const record = sessionFor(sessions, args['session_id'] as string, { live: command !== undefined });
        const timeoutMs = clampWaitMs(args['timeout_ms'] as number | undefined, AiTerminalInputConstants.DRIVE_DEFAULT_MS);
        const out: Record<string, unknown> = {};
        if (command !== undefined) {
          await confirmOrRefuse(deps, caller, 'ai_terminal_drive_agent', record, `Type and run: ${command}`);
          const receipt = await clientSubmit(sessions, record.session_id, command, { signal: caller.signal });
          out['receipt'] = receipt;
          if (!receipt.submitted) throw new ToolError('conflict', `ai_terminal_drive_agent could not submit: ${receipt.reason ?? 'refused'}`, { receipt });
        }
        if (pattern) {
          const outcome = await waitForScreen(sessions, record, { pattern, timeoutMs, stabilityMs: 0, signal: caller.signal });
          out['matched'] = outcome.matched;
          out['timed_out'] = outcome.timed_out;
        } else {
          const answer = await waitForSession(sessions, record.session_id, 'idle', timeoutMs, caller.signal);
          out['matched'] = 'met' in answer && answer.met;
          out['timed_out'] = 'timed_out' in answer && answer.timed_out;
        }
        const lines = (args['lines'] as number | undefined) ?? AiTerminalInputConstants.DRIVE_DEFAULT_LINES;
        const text = await screenText(sessions, record, lines, args['since_cursor'] as number | undefined);
        const state = sessionState(record);
        return { ...text, shell_state: record.exit ? 'exited' : (state['shell_state'] ?? 'unknown'), session_state: state, ...out };
      },
    }),
  ];
}
