/** Which control sequences a session's shell understands, from its program name: posix, windows-native or unknown. */
export type ShellFamily = 'posix' | 'windows-native' | 'unknown';

const POSIX = new Set(['sh', 'bash', 'zsh', 'fish', 'dash', 'ksh', 'ash', 'tcsh', 'csh', 'mksh', 'wsl']);
const WINDOWS_NATIVE = new Set(['cmd', 'powershell', 'pwsh']);

export function shellFamily(command: string): ShellFamily {
  const exe = /\.exe/i.exec(command);
  const program = exe ? command.slice(0, exe.index + 4) : (command.trim().split(/\s+/)[0] ?? '');
  const name = (program.split(/[\\/]/).pop() ?? '').replace(/\.exe$/i, '').toLowerCase();
  if (POSIX.has(name)) return 'posix';
  if (WINDOWS_NATIVE.has(name)) return 'windows-native';
  return 'unknown';
}
