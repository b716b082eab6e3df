/**
 * The `ai_terminal_*` family: thirteen tools that let an external agent watch and drive a terminal
 * session and read, write and run in its sandboxed repository. Off unless ai_terminal_mcp_enabled
 * (the catalog hides and refuses every tool named AI_TERMINAL_PREFIX…); the write tools
 * (send_input, send_key, drive_agent with a command, write_file, edit_file, run_command) act only
 * after the user confirms.
 */
import { createCommandTool } from './aiTerminalCommand.js';
import { createFileTools } from './aiTerminalFiles.js';
import type { AiTerminalDeps } from './aiTerminalGuard.js';
import { createInputTools } from './aiTerminalInput.js';
import { createScreenTools } from './aiTerminalScreen.js';
import type { NativeTool } from './nativeTool.js';

export { AI_TERMINAL_PREFIX, type AiTerminalDeps } from './aiTerminalGuard.js';

/** The order tools/list shows them in: read_screen, send_input, send_key, wait_for, get_state, get_context, drive_agent, then the file tools and run_command. */
const ORDER = [
  'ai_terminal_read_screen',
  'ai_terminal_send_input',
  'ai_terminal_send_key',
  'ai_terminal_wait_for',
  'ai_terminal_get_state',
  'ai_terminal_get_context',
  'ai_terminal_drive_agent',
  'ai_terminal_read_file',
  'ai_terminal_write_file',
  'ai_terminal_edit_file',
  'ai_terminal_list_files',
  'ai_terminal_search_files',
  'ai_terminal_run_command',
];

export function createAiTerminalTools(deps: AiTerminalDeps): NativeTool[] {
  const all = [...createScreenTools(deps), ...createInputTools(deps), ...createFileTools(deps), createCommandTool(deps)];
  return ORDER.map((name) => all.find((t) => t.definition.name === name)!);
}
