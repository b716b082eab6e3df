/**
 * For the install tests: tuicd's package.json and package-lock.json (and the postinstall script,
 * which an installed tuicd has beside them) in a temp dir, npm run there with a PATH of our
 * choosing, and a child node that spawns a real shell through tuicd's own node-pty loader.
 */

import { execFile, type ExecFileException } from 'node:child_process';
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { REPO_ROOT } from '../helpers/node22.js';

/** Platforms @lydell/node-pty 1.1.0 ships a prebuilt binary package for. */
export const PREBUILD_PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'win32-arm64'];
export const PLATFORM = `${process.platform}-${process.arch}`;

export interface Project {
  dir: string;
  /** A directory for PATH holding only the links made with linkTools. */
  bin: string;
  remove(): void;
}

/** A temp copy of what `npm install` needs: package.json, package-lock.json, the postinstall script and the compiled node-pty loader. */
export function copyProject(prefix: string): Project {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'dist/workers/pty'), { recursive: true });
  mkdirSync(join(dir, '.bin'));
  for (const file of ['package.json', 'package-lock.json', 'scripts/ptyFallback.mjs', 'dist/workers/pty/nodePty.js'])
    copyFileSync(join(REPO_ROOT, file), join(dir, file));
  return { dir, bin: join(dir, '.bin'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The npm CLI script this test run's npm is (npm_execpath under npm, else `npm` on PATH). */
export function npmCli(): string {
  const fromEnv = process.env['npm_execpath'];
  if (fromEnv && /npm-cli\.js$/.test(fromEnv)) return fromEnv;
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir, 'npm');
    if (existsSync(candidate)) return realpathSync(candidate);
  }
  throw new Error('npm not found on PATH');
}

/** The first of `names` on the current PATH that is executable. */
export function onPath(...names: string[]): string | undefined {
  for (const name of names) {
    for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        // next
      }
    }
  }
  return undefined;
}

/** Links `node` (to `nodeBinary`), `npm` and each of `others` (absolute paths) into project.bin: with PATH set to it alone, nothing else is found. */
export function linkTools(project: Project, nodeBinary: string, others: string[] = []): void {
  symlinkSync(nodeBinary, join(project.bin, 'node'));
  symlinkSync(npmCli(), join(project.bin, 'npm'));
  for (const other of others) symlinkSync(other, join(project.bin, basename(other)));
}

/** This environment less the npm_* variables an enclosing `npm test` set, with `path` as PATH. */
export function envWithPath(path: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value;
  env['PATH'] = path;
  return env;
}

export interface RunResult {
  code: number;
  output: string;
  ms: number;
}

/** Runs `file args` in `cwd`, stdout and stderr together; never rejects. */
export function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<RunResult> {
  const start = Date.now();
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 << 20, encoding: 'utf8' }, (err: ExecFileException | null, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      const extra = err && typeof err.code !== 'number' ? `\n[${err.message}]` : '';
      resolve({ code, output: `${stdout}${stderr}${extra}`, ms: Date.now() - start });
    });
  });
}

/**
 * `npm install --omit=dev --no-audit --no-fund ...extra` in the project, PATH = project.bin alone
 * unless `path` is given. npm runs lifecycle scripts with `sh` from PATH: named by its absolute path
 * here, so that PATH can hold nothing but node and npm.
 */
export function npmInstall(project: Project, extra: string[] = [], path = project.bin): Promise<RunResult> {
  return run(
    join(project.bin, 'npm'),
    ['install', '--omit=dev', '--no-audit', '--no-fund', '--script-shell=/bin/sh', ...extra],
    project.dir,
    envWithPath(path),
    240_000,
  );
}

/** Directories node-gyp built in (a `build/` with its config.gypi or Makefile), relative to the project. */
export function compiledBuilds(project: Project): string[] {
  const found: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = join(dir, entry.name);
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.name === 'build' && (existsSync(join(full, 'config.gypi')) || existsSync(join(full, 'Makefile')))) found.push(relPath);
      walk(full, relPath);
    }
  };
  for (const top of ['node_modules', '.cache']) if (existsSync(join(project.dir, top))) walk(join(project.dir, top), top);
  return found;
}

export interface SpawnCheck {
  /** Which node-pty tuicd's loader took; undefined when it threw. */
  kind?: 'prebuilt' | 'source';
  out?: string;
  exitCode?: number;
  node?: string;
  error?: string;
}

const SPAWN_CHECK = `
const { loadNodePty } = await import(process.argv[1]);
let kind;
try {
  const loaded = loadNodePty();
  kind = loaded.kind;
  const pty = loaded.module.spawn('/bin/sh', ['-c', 'echo ok'], { name: 'xterm-256color', cols: 80, rows: 24, cwd: process.cwd(), env: { PATH: '/usr/bin:/bin' } });
  let out = '';
  pty.onData((d) => { out += d; });
  pty.onExit(({ exitCode }) => console.log(JSON.stringify({ kind, out, exitCode, node: process.version })));
} catch (err) {
  console.log(JSON.stringify({ kind, error: err.message, node: process.version }));
}
`;

/** In a child `nodeBinary` with cwd in the project: tuicd's loader picks a node-pty, which runs `/bin/sh -c 'echo ok'`. */
export async function spawnCheck(project: Project, nodeBinary: string): Promise<SpawnCheck> {
  const loader = pathToFileURL(join(project.dir, 'dist/workers/pty/nodePty.js')).href;
  const result = await run(nodeBinary, ['--input-type=module', '-e', SPAWN_CHECK, loader], project.dir, envWithPath('/usr/bin:/bin'), 20_000);
  const line = result.output
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (result.code !== 0 || !line) throw new Error(`spawn check under ${nodeBinary} exited ${result.code}: ${result.output}`);
  return JSON.parse(line) as SpawnCheck;
}
