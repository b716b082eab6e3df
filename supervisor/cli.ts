/** Command-line parsing for `tuicd`: flags, the `status` subcommand, help and version text. */
import { parseArgs } from 'node:util';

export interface CliOptions {
  command: 'serve' | 'status' | 'help' | 'version';
  configDir?: string;
  instance?: string;
  logLevel?: string;
  /** --http-engine: force uws or node instead of the fastest that loads. */
  httpEngine?: string;
  json: boolean;
}

export const HELP_TEXT = `Usage: tuicd [status] [options]

Runs the tuicd supervisor: terminal sessions, the /events bus and the MCP endpoint, served on
an always-on unix socket (no auth) and, when remote access is on, an authenticated TCP port.

Commands:
  (none)              start the server in the foreground
  status              say whether a tuicd answers on this config dir's socket (exit 0 alive, 1 not)

Options:
  --config-dir DIR    config directory (default: $TUIC_CONFIG_DIR, else ~/.config/com.tuic.commander)
  --instance NAME     a named instance: own config subdirectory and a short socket in the temp dir
  --log-level LEVEL   trace|debug|info|warn|error (default info)
  --http-engine NAME  uws|node: force an HTTP engine (default: uWebSockets.js where a build
                      loads on this Node and libc, else Node's http + ws)
  --json              status: print the /health answer as JSON
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
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  let command: CliOptions['command'] = 'serve';
  if (values.help) command = 'help';
  else if (values.version) command = 'version';
  else if (positionals.length > 0) {
    if (positionals[0] === 'status' && positionals.length === 1) command = 'status';
    else throw new Error(`unknown command "${positionals.join(' ')}" (try --help)`);
  }
  const opts: CliOptions = { command, json: values.json ?? false };
  if (values['config-dir'] !== undefined) opts.configDir = values['config-dir'];
  if (values.instance !== undefined) opts.instance = values.instance;
  if (values['log-level'] !== undefined) opts.logLevel = values['log-level'];
  if (values['http-engine'] !== undefined) opts.httpEngine = values['http-engine'];
  return opts;
}
