/**
 * The service definitions `tuicd service install` writes: a systemd user unit on Linux, a launchd
 * agent on macOS. Both run this install by absolute path, restart it when it fails, and keep the
 * terminals across a restart: the supervisor runs with --keep-sessions, and the manager is told to
 * stop only the supervisor's own process, not the pty host that holds the sessions.
 */
export type ServicePlatform = 'linux' | 'darwin';

export interface ServiceSpec {
  /** Absolute path of the Node binary that runs tuicd. */
  node: string;
  /** Absolute path of the compiled entry point (dist/supervisor/main.js). */
  mainJs: string;
  configDir: string;
  instance: string | null;
  /** The PATH agents and shells should see: a service manager's own PATH is minimal. */
  path: string;
  /** The user's home: launchd's working directory and where its log files go when asked. */
  home: string;
  /** Where launchd writes the process's stdout/stderr (it has no journal). */
  logDir: string;
}

/** `tuicd` for the default instance, `tuicd-<instance>` for a named one. */
export function serviceName(instance: string | null): string {
  return instance === null ? 'tuicd' : `tuicd-${instance}`;
}

/** launchd labels are reverse-DNS names. */
export function launchdLabel(instance: string | null): string {
  return instance === null ? 'com.tuic.tuicd' : `com.tuic.tuicd.${instance}`;
}

export function serviceArguments(spec: ServiceSpec): string[] {
  const args = [spec.node, spec.mainJs, '--config-dir', spec.configDir, '--keep-sessions'];
  if (spec.instance !== null) args.push('--instance', spec.instance);
  return args;
}

/** systemd splits ExecStart on spaces and expands `%` and `$`: quote each word and escape those. */
function systemdWord(word: string): string {
  const escaped = word.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) && !word.includes('%') ? word : `"${escaped}"`;
}

function systemdEnvironment(name: string, value: string): string {
  return `Environment=${systemdWord(`${name}=${value}`)}`;
}

export function renderSystemdUnit(spec: ServiceSpec): string {
  return [
    '# Written by `tuicd service install`; `tuicd service uninstall` removes it.',
    '[Unit]',
    `Description=tuicd: terminal sessions and AI agents, with an MCP hub (${spec.configDir})`,
    'After=network.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${serviceArguments(spec).map(systemdWord).join(' ')}`,
    'Restart=on-failure',
    'RestartSec=2',
    // Stop and restart signal the supervisor alone: the pty host (its own session and process group)
    // keeps the terminals, and the next supervisor adopts it. `tuicd stop` ends everything.
    'KillMode=process',
    systemdEnvironment('PATH', spec.path),
    // journald stores each line as one record: JSON keeps the fields.
    systemdEnvironment('TUIC_LOG_FORMAT', 'json'),
    'StandardOutput=journal',
    'StandardError=journal',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function renderLaunchdPlist(spec: ServiceSpec): string {
  const args = serviceArguments(spec)
    .map((a) => `    <string>${xml(a)}</string>`)
    .join('\n');
  const name = serviceName(spec.instance);
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by \`tuicd service install\`; \`tuicd service uninstall\` removes it. -->
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${xml(launchdLabel(spec.instance))}</string>
  <key>ProgramArguments</key>
  <array>
${args}
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>AbandonProcessGroup</key>
  <true/>
  <key>WorkingDirectory</key>
  <string>${xml(spec.home)}</string>
  <key>EnvironmentVariables</key>
  <dict>
    <key>PATH</key>
    <string>${xml(spec.path)}</string>
    <key>TUIC_LOG_FORMAT</key>
    <string>json</string>
  </dict>
  <key>StandardOutPath</key>
  <string>${xml(`${spec.logDir}/${name}.out.log`)}</string>
  <key>StandardErrorPath</key>
  <string>${xml(`${spec.logDir}/${name}.err.log`)}</string>
</dict>
</plist>
`;
}

/** The ProgramArguments / ExecStart words of a written definition, for `service status`. */
export function readServiceArguments(platform: ServicePlatform, text: string): string[] | null {
  if (platform === 'darwin') {
    const array = /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/.exec(text);
    if (array === null) return null;
    return [...(array[1] ?? '').matchAll(/<string>([\s\S]*?)<\/string>/g)].map((m) =>
      (m[1] ?? '')
        .replace(/&quot;/g, '"')
        .replace(/&gt;/g, '>')
        .replace(/&lt;/g, '<')
        .replace(/&amp;/g, '&'),
    );
  }
  const line = /^ExecStart=(.*)$/m.exec(text);
  if (line === null) return null;
  const words: string[] = [];
  for (const m of (line[1] ?? '').matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    const word = m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? '');
    words.push(word.replace(/%%/g, '%').replace(/\$\$/g, '$'));
  }
  return words;
}
