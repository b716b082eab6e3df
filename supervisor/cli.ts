/** Command-line parsing for `tuicd`: flags, the `status` and `install-bridge` subcommands, help and version text. */
import { parseArgs } from 'node:util';

export interface CliOptions {
  command: 'serve' | 'status' | 'stop' | 'restart' | 'install-bridge' | 'help' | 'version';
  /** SIGTERM leaves the pty host and its sessions running for the next tuicd (services.keep_sessions_on_stop). */
  keepSessions?: boolean;
  configDir?: string;
  instance?: string;
  logLevel?: string;
  /** --http-engine: force uws or node instead of the fastest that loads. */
  httpEngine?: string;
  json: boolean;
  /** install-bridge: say what would change, write nothing. */
  dryRun?: boolean;
  /** install-bridge: remove the entries and the launcher instead. */
  uninstall?: boolean;
}

export const HELP_TEXT = `Usage: tuicd [status | stop | restart | install-bridge] [options]

Runs the tuicd supervisor: terminal sessions, the /events bus and the MCP endpoint, served on
an always-on unix socket (no auth) and, when remote access is on, an authenticated TCP port.

Commands:
  (none)              start the server in the foreground
  status              say whether a tuicd answers on this config dir's socket (exit 0 alive, 1 not);
                      without one, a pty host still holding sessions and those sessions
  stop                stop the running tuicd and end every session (a pty host left without a
                      supervisor too)
  restart             restart the running tuicd (in the background) keeping every session
  install-bridge      add a "tuicommander" MCP server entry, running this install's tuic-bridge
                      (through <config dir>/mcp-bridge/tuic-bridge), to the config of every agent
                      installed here: Claude Code, Cursor, Windsurf, Gemini, Droid, pi, VS Code, Zed,
                      Amp, opencode, Codex, Grok, goose. Other keys, comments and formatting stay; a
                      changed file is backed up beside itself; an unparseable one is left untouched and
                      reported (exit 0); exit 1 only when a file could not be read, written or
                      edited safely

Options:
  --config-dir DIR    config directory (default: $TUIC_CONFIG_DIR, else ~/.config/com.tuic.commander)
  --instance NAME     a named instance: own config subdirectory and a short socket in the temp dir
  --log-level LEVEL   trace|debug|info|warn|error (default info)
  --http-engine NAME  uws|node: force an HTTP engine (default: uWebSockets.js where a build
                      loads on this Node and libc, else Node's http + ws)
  --keep-sessions     on SIGTERM, leave the sessions running for the next tuicd to adopt (default:
                      config services.keep_sessions_on_stop); SIGINT and \`tuicd stop\` end them
  --json              status: print the /health answer as JSON
  --dry-run           install-bridge: print what would change per agent, write nothing
  --uninstall         install-bridge: remove the tuicommander entries and the launcher
  -h, --help          this text
  -v, --version       print the version

Environment:
  TUIC_CONFIG_DIR     config directory when --config-dir is absent
  TUIC_PORT           TCP port for this process only (not saved)
  TUIC_APP_INSTANCE   instance name when --instance is absent
  TUIC_HTTP_ENGINE    uws|node when --http-engine is absent
`;

export function parseCli(argv: string[]): CliOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'config-dir': { type: 'string' },
      instance: { type: 'string' },
      'log-level': { type: 'string' },
      'http-engine': { type: 'string' },
      json: { type: 'boolean', default: false },
      'keep-sessions': { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      uninstall: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  let command: CliOptions['command'] = 'serve';
  if (values.help) command = 'help';
  else if (values.version) command = 'version';
  else if (positionals.length > 0) {
    if (positionals[0] === 'status' && positionals.length === 1) command = 'status';
    else if (positionals[0] === 'stop' && positionals.length === 1) command = 'stop';
    else if (positionals[0] === 'restart' && positionals.length === 1) command = 'restart';
    else if (positionals[0] === 'install-bridge' && positionals.length === 1) command = 'install-bridge';
    else throw new Error(`unknown command "${positionals.join(' ')}" (try --help)`);
  }
  if ((values['dry-run'] || values.uninstall) && command !== 'install-bridge' && command !== 'help' && command !== 'version') {
    throw new Error(`${values['dry-run'] ? '--dry-run' : '--uninstall'} goes with install-bridge (try --help)`);
  }
  const opts: CliOptions = { command, json: values.json ?? false };
  if (values['keep-sessions']) opts.keepSessions = true;
  if (values['dry-run']) opts.dryRun = true;
  if (values.uninstall) opts.uninstall = true;
  if (values['config-dir'] !== undefined) opts.configDir = values['config-dir'];
  if (values.instance !== undefined) opts.instance = values.instance;
  if (values['log-level'] !== undefined) opts.logLevel = values['log-level'];
  if (values['http-engine'] !== undefined) opts.httpEngine = values['http-engine'];
  return opts;
}
