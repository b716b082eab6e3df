/** Command-line parsing for `tuicd`: flags, the `status`, `stop`, `restart`, `install-bridge` and `service` subcommands, help and version text. */
import { parseArgs } from 'node:util';

export interface CliOptions {
  command: 'serve' | 'status' | 'stop' | 'restart' | 'install-bridge' | 'service' | 'help' | 'version';
  /** SIGTERM leaves the pty host and its sessions running for the next tuicd (services.keep_sessions_on_stop). */
  keepSessions?: boolean;
  /** service: what to do with the service definition. */
  serviceAction?: 'install' | 'uninstall' | 'status';
  /** service: write the definition of another platform's manager (with --dry-run, to read it). */
  platform?: string;
  configDir?: string;
  instance?: string;
  logLevel?: string;
  /** --http-engine: force uws or node instead of the fastest that loads. */
  httpEngine?: string;
  json: boolean;
  /** install-bridge, service: say what would change, write nothing. */
  dryRun?: boolean;
  /** install-bridge: remove the entries and the launcher instead. */
  uninstall?: boolean;
}

export const HELP_TEXT = `Usage: tuicd [status | stop | restart | install-bridge | service install|uninstall|status] [options]

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
  service install     write a service definition that runs this install at login and restarts it
                      when it fails, keeping terminals across restarts: a systemd user unit on Linux
                      (~/.config/systemd/user/tuicd.service), a launchd agent on macOS
                      (~/Library/LaunchAgents/com.tuic.tuicd.plist); prints the commands that start it
  service uninstall   remove that definition
  service status      read it back: what it runs, whether it is this install, whether it is enabled

Options:
  --config-dir DIR    config directory (default: $TUIC_CONFIG_DIR, else ~/.config/com.tuic.commander)
  --instance NAME     a named instance: own config subdirectory and a short socket in the temp dir
  --log-level LEVEL   trace|debug|info|warn|error (default info)
  --http-engine NAME  uws|node: force an HTTP engine (default: uWebSockets.js where a build
                      loads on this Node and libc, else Node's http + ws)
  --keep-sessions     on SIGTERM, leave the sessions running for the next tuicd to adopt (default:
                      config services.keep_sessions_on_stop); SIGINT and \`tuicd stop\` end them
  --json              status: print the /health answer as JSON
  --dry-run           install-bridge: print what would change per agent, write nothing;
                      service install|uninstall: print the file it would write or remove
  --user              service: a per-user service (the default and the only kind)
  --platform NAME     service: linux|darwin, the definition for that platform (default: this one)
  --uninstall         install-bridge: remove the tuicommander entries and the launcher
  -h, --help          this text
  -v, --version       print the version

Environment:
  TUIC_CONFIG_DIR     config directory when --config-dir is absent
  TUIC_PORT           TCP port for this process only (not saved)
  TUIC_APP_INSTANCE   instance name when --instance is absent
  TUIC_HTTP_ENGINE    uws|node when --http-engine is absent
`;

type ServiceAction = NonNullable<CliOptions['serviceAction']>;
const SERVICE_ACTIONS: readonly ServiceAction[] = ['install', 'uninstall', 'status'];

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
      user: { type: 'boolean', default: false },
      platform: { type: 'string' },
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
    else if (positionals[0] === 'service' && positionals.length === 2 && SERVICE_ACTIONS.includes(positionals[1] as ServiceAction)) command = 'service';
    else if (positionals[0] === 'service') throw new Error(`service takes one of ${SERVICE_ACTIONS.join(', ')} (try --help)`);
    else throw new Error(`unknown command "${positionals.join(' ')}" (try --help)`);
  }
  const informational = command === 'help' || command === 'version';
  if (values.uninstall && command !== 'install-bridge' && !informational) throw new Error('--uninstall goes with install-bridge (try --help)');
  if (values['dry-run'] && command !== 'install-bridge' && command !== 'service' && !informational) {
    throw new Error('--dry-run goes with install-bridge or service (try --help)');
  }
  if ((values.user || values.platform !== undefined) && command !== 'service' && !informational) {
    throw new Error(`${values.user ? '--user' : '--platform'} goes with service (try --help)`);
  }
  const opts: CliOptions = { command, json: values.json ?? false };
  if (command === 'service') opts.serviceAction = positionals[1] as ServiceAction;
  if (values.platform !== undefined) opts.platform = values.platform;
  if (values['keep-sessions']) opts.keepSessions = true;
  if (values['dry-run']) opts.dryRun = true;
  if (values.uninstall) opts.uninstall = true;
  if (values['config-dir'] !== undefined) opts.configDir = values['config-dir'];
  if (values.instance !== undefined) opts.instance = values.instance;
  if (values['log-level'] !== undefined) opts.logLevel = values['log-level'];
  if (values['http-engine'] !== undefined) opts.httpEngine = values['http-engine'];
  return opts;
}
