/** The environment a session's shell starts with: ours minus what would confuse it, plus the terminal capability variables. */

/** What agents running inside expect of the terminal: a modern, truecolor, graphics-capable one. */
const CAPABILITY_VARS: Readonly<Record<string, string>> = {
  TERM: 'xterm-256color',
  COLORTERM: 'truecolor',
  KITTY_WINDOW_ID: '1',
  TERM_PROGRAM: 'ghostty',
  TERM_PROGRAM_VERSION: '3.0.0',
  TERM_FEATURES: 'T2PHUBSyMF',
  CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1',
};

/**
 * CLAUDECODE makes a nested agent think it runs inside another; NO_COLOR may belong to a parent agent,
 * not to the session's terminal. TMUX/TMUX_PANE/STY describe the multiplexer tuicd was started from, not the
 * session's terminal: left in, `tmux` commands and tmux-aware tools in the session act on that pane.
 */
const REMOVED_VARS = ['CLAUDECODE', 'NO_COLOR', 'TMUX', 'TMUX_PANE', 'STY'];

/**
 * TUIC_SESSION names the session (tuic-bridge sends it as x-tuic-session); TUIC_CONFIG_DIR and
 * TUIC_APP_INSTANCE name this tuicd, so a bridge or `tuicd status` started inside finds the tuicd
 * the session runs in, a named instance's socket included (not the default instance's).
 */
/** Variables a caller may not set: they name the session and the tuicd it runs in. */
export const RESERVED_ENV = ['TUIC_SESSION', 'TUIC_CONFIG_DIR', 'TUIC_APP_INSTANCE'] as const;

export function childEnv(
  base: NodeJS.ProcessEnv,
  opts: { tuicSession: string; configDir: string; instance: string | null; extra?: Readonly<Record<string, string>> },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && !REMOVED_VARS.includes(k)) env[k] = v;
  Object.assign(env, CAPABILITY_VARS);
  // The caller's variables (a spawn's `env`) win over ours, but never over the identity below.
  if (opts.extra) Object.assign(env, opts.extra);
  env['LANG'] = base['LANG'] || 'en_US.UTF-8';
  env['TUIC_SESSION'] = opts.tuicSession;
  env['TUIC_CONFIG_DIR'] = opts.configDir;
  if (opts.instance !== null) env['TUIC_APP_INSTANCE'] = opts.instance;
  else delete env['TUIC_APP_INSTANCE'];
  return env;
}
