#!/usr/bin/env node
/** Entry point of `tuicd`: parse flags, start the supervisor, print where it serves, stop cleanly on signals. */
import { fileURLToPath } from 'node:url';

import { parseCli, HELP_TEXT } from './cli.js';
import { HTTP_ENGINE_ENV, parseEngineName, selectEngine } from './http/engine/select.js';
import { resolvePaths } from '../shared/paths.js';
import { probeStatus } from './status.js';
import { describeOrphan, probeOrphanHost, restartCommand, stopCommand } from './lifecycleCommands.js';
import { Supervisor } from './supervisor.js';
import { VERSION } from '../shared/version.js';

async function main(): Promise<number> {
  let cli;
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`tuicd: ${(err as Error).message}\n`);
    return 2;
  }
  if (cli.command === 'help') {
    process.stdout.write(HELP_TEXT);
    return 0;
  }
  if (cli.command === 'version') {
    process.stdout.write(`tuicd ${VERSION}\n`);
    return 0;
  }
  const paths = resolvePaths({ configDir: cli.configDir, instance: cli.instance });
  if (cli.command === 'install-bridge') {
    // Loaded only here: the config parsers it brings are no part of a server start.
    const { runInstallBridge } = await import('./installBridge/command.js');
    const report = runInstallBridge({ paths, dryRun: cli.dryRun, uninstall: cli.uninstall });
    process.stdout.write(report.lines.map((l) => `${l}\n`).join(''));
    return report.exitCode;
  }
  if (cli.command === 'service' && cli.serviceAction !== undefined) {
    const { runServiceCommand } = await import('./service/serviceCommand.js');
    try {
      const report = await runServiceCommand({
        action: cli.serviceAction,
        paths,
        platform: cli.platform ?? process.platform,
        dryRun: cli.dryRun === true,
        env: process.env,
        node: process.execPath,
        mainJs: fileURLToPath(import.meta.url),
      });
      process.stdout.write(report.lines.map((l) => `${l}\n`).join(''));
      return report.exitCode;
    } catch (err) {
      process.stderr.write(`tuicd: ${(err as Error).message}\n`);
      return 1;
    }
  }
  if (cli.command === 'status') {
    const status = await probeStatus(paths.socketPath);
    // Without a supervisor, a pty host may still hold sessions: never something no command can see.
    const orphan = status.alive ? null : await probeOrphanHost(paths);
    if (cli.json) process.stdout.write(JSON.stringify(status.alive ? status.health : { alive: false, reason: status.reason, pty_host: orphan }) + '\n');
    else if (status.alive)
      process.stdout.write(
        `tuicd is running on ${paths.socketPath} (version ${String(status.health['version'])}, up ${String(status.health['uptime_secs'])} s)\n`,
      );
    else {
      process.stdout.write(`tuicd is not running: ${status.reason}\n`);
      if (orphan !== null) process.stdout.write(describeOrphan(orphan));
    }
    return status.alive ? 0 : 1;
  }
  if (cli.command === 'stop') return await stopCommand(paths, (line) => process.stdout.write(`${line}\n`));
  if (cli.command === 'restart') return await restartCommand(paths, process.argv.slice(2), (line) => process.stdout.write(`${line}\n`));

  // Handlers go in before the start: a signal while it runs (keyring probe, binds) must still end in a
  // clean stop, not the default action that leaves the socket file and the children behind.
  let signalled: string | null = null;
  let onSignal: (signal: string) => void = (signal) => {
    signalled ??= signal;
  };
  // SIGUSR2: `tuicd restart` asks this one to go, keeping the sessions for the next.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR2'] as const) process.on(signal, () => onSignal(signal));

  let supervisor: Supervisor;
  try {
    const engine = selectEngine(parseEngineName(cli.httpEngine, '--http-engine') ?? parseEngineName(process.env[HTTP_ENGINE_ENV], HTTP_ENGINE_ENV));
    supervisor = await Supervisor.start({ paths, env: process.env, logLevel: cli.logLevel, engine });
  } catch (err) {
    process.stderr.write(`tuicd: ${(err as Error).message}\n`);
    return 1;
  }
  // The warning goes first: a reader that stops at the start line has already been told TCP is off.
  if (supervisor.tcpStartError !== null) {
    process.stderr.write(`tuicd: TCP listener not started (${supervisor.tcpStartError}); serving on the unix socket only\n`);
  }
  if (signalled === null) process.stdout.write(`${supervisor.describe()}\n`);
  return await new Promise<number>((resolve) => {
    let stopping = false;
    onSignal = (signal) => {
      if (stopping) return;
      stopping = true;
      // Ctrl-C, a hang-up and `tuicd stop` end the sessions; SIGTERM (a service manager's stop)
      // keeps them when asked to; a restart always does.
      const keepSessions =
        signal === 'SIGUSR2' || (signal === 'SIGTERM' && (cli.keepSessions === true || supervisor.config.get().services.keep_sessions_on_stop));
      supervisor.stop(`signal ${signal}`, { keepSessions }).then(
        () => resolve(0),
        (err: unknown) => {
          process.stderr.write(`tuicd: stop failed: ${err instanceof Error ? err.message : String(err)}\n`);
          resolve(1);
        },
      );
    };
    if (signalled !== null) onSignal(signalled);
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`tuicd: fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
