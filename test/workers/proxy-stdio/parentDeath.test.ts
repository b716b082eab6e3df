/** How a stdio upstream's command is found before it is started under its parent-death signal. */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { CommandNotFoundError, resolveCommand, withParentDeathSignal } from '../../../workers/proxy-stdio/parentDeath.js';

test('a command is found as exec would find it: PATH in order, executables only, slashes relative to cwd', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'tuicd-cmd-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const [first, second, cwd] = [join(root, 'first'), join(root, 'second'), join(root, 'cwd')] as const;
  for (const dir of [first, second, join(cwd, 'bin')]) mkdirSync(dir, { recursive: true });
  const script = (path: string, mode: number) => {
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, mode);
  };
  script(join(first, 'tool'), 0o644); // not executable: skipped
  script(join(second, 'tool'), 0o755);
  script(join(cwd, 'bin', 'local'), 0o755);
  const path = `${first}::${second}`;

  assert.equal(resolveCommand('tool', path, cwd), join(second, 'tool'));
  assert.equal(resolveCommand('./bin/local', path, cwd), join(cwd, 'bin', 'local'));
  assert.equal(resolveCommand(join(second, 'tool'), undefined, undefined), join(second, 'tool'));
  for (const missing of ['nope', './bin/nope', join(first, 'tool')]) {
    assert.throws(
      () => resolveCommand(missing, path, cwd),
      (err: unknown) => err instanceof CommandNotFoundError && err.code === 'ENOENT' && err.message === `spawn ${missing} ENOENT`,
    );
  }
});

test('the wrapper execs the resolved command with the arguments unchanged; an empty command is left for spawn to refuse', () => {
  const wrapped = withParentDeathSignal('sh', ['-c', 'echo "a b"'], '/usr/bin:/bin', undefined);
  assert.equal(wrapped.file, '/usr/bin/setpriv');
  assert.deepEqual(wrapped.args.slice(0, 3), ['--pdeathsig', 'KILL', '--']);
  assert.match(wrapped.args[3]!, /\/sh$/);
  assert.deepEqual(wrapped.args.slice(4), ['-c', 'echo "a b"']);
  assert.deepEqual(withParentDeathSignal('', [], '/usr/bin', undefined), { file: '', args: [] });
});
