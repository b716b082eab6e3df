#!/usr/bin/env node
/**
 * `tuic-bridge`: the stdio MCP server agents launch. It carries newline-delimited JSON-RPC from
 * stdin to `POST /mcp` on tuicd's unix socket and the answers back to stdout, survives tuicd
 * restarts (bridge.ts) and finds the socket the way tuicd binds it (endpoint.ts).
 *
 * From the MCP SDK it reuses the message types (type-only) and, in its tests, the SDK's own stdio
 * client as the counterpart. Its runtime pieces (StdioServerTransport, the Streamable HTTP client)
 * are not used: importing any of them loads the SDK's zod schemas, 110-170 ms on this machine,
 * which alone would spend the bridge's 150 ms cold-start budget (it is launched once per agent,
 * hundreds at a time), and the bridge forwards messages without validating them (tuicd does).
 */
import { parseArgs } from 'node:util';

import { VERSION } from '../shared/version.js';
import { Bridge } from './bridge.js';
import { endpointCandidates } from './endpoint.js';
import { lineWriter, readLines } from './stdio.js';

const HELP = `Usage: tuic-bridge [--instance NAME] [--config-dir DIR]

The stdio MCP server for agents: forwards MCP on stdin/stdout to tuicd's unix socket, and keeps
working across tuicd restarts. Agents launch it; see \`tuicd install-bridge\`.

Socket: $TUIC_SOCKET, else the socket of tuicd's config dir ($TUIC_CONFIG_DIR or
~/.config/com.tuic.commander) and instance (--instance or $TUIC_APP_INSTANCE).
Identity: $TUIC_SESSION (set in every tuicd session) is sent as x-tuic-session.
`;

function main(): void {
  const { values } = parseArgs({
    options: {
      instance: { type: 'string' },
      'config-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
    strict: true,
  });
  if (values.help) return void process.stdout.write(HELP);
  if (values.version) return void process.stdout.write(`tuic-bridge ${VERSION}\n`);
  const options = { instance: values.instance, configDir: values['config-dir'] };
  // Resolved once up front so a bad --instance fails at start, not at the first reconnect.
  endpointCandidates(options);
  const bridge = new Bridge({
    candidates: () => endpointCandidates(options),
    tuicSession: process.env['TUIC_SESSION'] || null,
    version: VERSION,
    write: lineWriter(process.stdout, () => process.exit(0)),
    log: (message) => process.stderr.write(`tuic-bridge: ${message}\n`),
  });
  bridge.start();
  readLines(
    process.stdin,
    (line) => bridge.handleLine(line),
    () => void bridge.shutdown().then(() => process.exit(0)),
  );
}

try {
  main();
} catch (err) {
  process.stderr.write(`tuic-bridge: ${(err as Error).message}\n`);
  process.exit(2);
}
