// postinstall: node-pty built from source, only where no prebuilt binary works.
//
// tuicd takes its PTYs from @lydell/node-pty, which ships node-pty's native module prebuilt, one
// optional package per platform (@lydell/node-pty-<platform>-<arch>: linux, darwin and win32 on
// x64 and arm64). There a normal install compiles nothing and this script does nothing but check
// that the prebuilt module loads. Anywhere else (another arch, musl libc, whose loader refuses the
// glibc build, or an install with --omit=optional) it installs node-pty itself into a private
// prefix, .cache/node-pty-source/, where node-pty's install script builds it with node-gyp;
// workers/pty/nodePty.ts loads it from there. A private prefix, not a project dependency, so that
// no platform with a prebuild ever runs node-pty's install script.
//
//   node scripts/ptyFallback.mjs                 what postinstall runs
//   node scripts/ptyFallback.mjs --from-source   build from source even where the prebuild loads
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * node-pty 1.1.0, the release the pty host was written for. (@lydell/node-pty 1.1.0 repackages the
 * earlier 1.1.0-beta14: the same API and, on unix, the same native code but for OpenBSD headers;
 * its writes go through the master's socket where 1.1.0 has its own write queue. The pty host
 * handles both.)
 */
export const NODE_PTY_SOURCE_VERSION = '1.1.0';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Where the source build goes; workers/pty/nodePty.ts looks there. */
export const SOURCE_PREFIX = `${root}.cache/node-pty-source/`;

/** What node-gyp needs to build node-pty (named in every failure). */
export const BUILD_NEEDS = "python3, make, a C++ compiler (g++ or clang++) and the Node headers (node-gyp downloads them unless npm's nodedir points at them)";

/** The package @lydell/node-pty takes its binary from on this platform. */
export const PREBUILT_PACKAGE = `@lydell/node-pty-${process.platform}-${process.arch}`;

/** Why `name` cannot be loaded by `require` (undefined: it loads). Loading, not just resolving: a prebuild for the wrong libc resolves. */
export function loadProblem(require, name) {
  try {
    require(name);
    return undefined;
  } catch (err) {
    return String(err?.message ?? err).split('\n')[0];
  }
}

/** Why the prebuilt node-pty does not load here, from the project root (undefined: it loads). */
export function prebuiltProblem() {
  return loadProblem(createRequire(`${root}package.json`), '@lydell/node-pty');
}

/** Why the source build does not load (undefined: it loads). */
export function sourceBuildProblem() {
  return loadProblem(createRequire(`${SOURCE_PREFIX}package.json`), 'node-pty');
}

// The outer npm's settings reach a lifecycle script as npm_config_* variables; the inner install
// must not inherit those that change what or where it installs (--global, --prefix, --omit,
// --dry-run, ...). Only these, about where packages come from and how to build them, go through.
const KEPT_NPM_CONFIG =
  /^npm_config_(cache|userconfig|globalconfig|registry|.*:registry|cafile|ca|cert|key|strict_ssl|proxy|https_proxy|http_proxy|noproxy|nodedir|node_gyp|python|script_shell|jobs|loglevel|fetch_.*)$/i;

function installEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_config_/i.test(key) && !KEPT_NPM_CONFIG.test(key)) continue;
    if (/^npm_(package|lifecycle)_/i.test(key)) continue;
    env[key] = value;
  }
  return env;
}

/** Installs node-pty into SOURCE_PREFIX, where its install script builds it. Throws with BUILD_NEEDS when that fails. */
export function buildFromSource() {
  rmSync(SOURCE_PREFIX, { recursive: true, force: true });
  mkdirSync(SOURCE_PREFIX, { recursive: true });
  // npm runs a dependency's install script only when the project's allowScripts lists it; this
  // prefix is its own project, so it says so itself.
  writeFileSync(
    `${SOURCE_PREFIX}package.json`,
    `${JSON.stringify(
      {
        name: 'tuicd-node-pty-source',
        private: true,
        description: 'node-pty built from source for tuicd where @lydell/node-pty has no working prebuild (scripts/ptyFallback.mjs)',
        allowScripts: { [`node-pty@${NODE_PTY_SOURCE_VERSION}`]: true },
      },
      null,
      2,
    )}\n`,
  );
  const npm = process.env['npm_execpath'];
  const [cmd, args] = npm ? [process.execPath, [npm]] : ['npm', []];
  try {
    execFileSync(
      cmd,
      [
        ...args,
        'install',
        '--prefix',
        SOURCE_PREFIX,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--foreground-scripts',
        `node-pty@${NODE_PTY_SOURCE_VERSION}`,
      ],
      {
        // Everything on stderr: a postinstall's stdout is the install's own output.
        stdio: ['ignore', 2, 2],
        env: installEnv(),
      },
    );
  } catch (err) {
    throw new Error(
      `building node-pty ${NODE_PTY_SOURCE_VERSION} from source into ${SOURCE_PREFIX} failed (${String(err?.message ?? err).split('\n')[0]}). ` +
        `The build needs ${BUILD_NEEDS}. Install those (Debian/Ubuntu: apt-get install python3 make g++; Alpine: apk add python3 make g++ linux-headers) and run \`node ${root}scripts/ptyFallback.mjs\` again.`,
    );
  }
  const problem = sourceBuildProblem();
  if (problem)
    throw new Error(`node-pty ${NODE_PTY_SOURCE_VERSION} was built into ${SOURCE_PREFIX} but does not load: ${problem}. The build needs ${BUILD_NEEDS}.`);
}

function main(argv) {
  const forced = argv.includes('--from-source');
  const prebuilt = forced ? '--from-source given' : prebuiltProblem();
  if (!prebuilt) return; // the normal case: nothing to build, nothing to say
  if (!forced && !sourceBuildProblem()) {
    console.error(`tuicd: ${PREBUILT_PACKAGE} does not load here (${prebuilt}); using node-pty built from source in ${SOURCE_PREFIX}`);
    return;
  }
  console.error(
    `tuicd: no working prebuilt node-pty for ${process.platform}-${process.arch} (${prebuilt}); building node-pty ${NODE_PTY_SOURCE_VERSION} from source into ${SOURCE_PREFIX} (needs ${BUILD_NEEDS})`,
  );
  buildFromSource();
  console.error(`tuicd: node-pty ${NODE_PTY_SOURCE_VERSION} built from source in ${SOURCE_PREFIX}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    console.error(`tuicd: ${err?.message ?? err}`);
    process.exit(1);
  }
}
