/** The pure rules behind ai_terminal_run_command's refusals and the file tools' globs. */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { destructiveReason } from '../../../supervisor/mcp/tools/aiTerminalCommand.js';
import { globRegExp } from '../../../supervisor/mcp/tools/aiTerminalSandbox.js';

test('run_command refuses what destroys beyond repair, and only that', () => {
  const refused = [
    'rm -rf /',
    'rm -rf ~',
    'rm -rf ~/',
    'rm -fr /*',
    'rm -rf *',
    'rm -rf "$HOME"',
    'sudo rm -r --no-preserve-root /',
    'rm -rf / ; ls',
    'ls; rm -rf ~/*',
    'mkfs.ext4 /dev/sda1',
    'dd if=/dev/zero of=/dev/sda bs=1M',
    'cat img > /dev/nvme0n1',
    ':(){ :|:& };:',
    'shutdown -h now',
    'ls && sudo reboot',
    'chmod -R 777 /',
    'git push -f origin main',
    'git push --force-with-lease origin main',
    'git push origin +main',
  ];
  for (const c of refused) assert.notEqual(destructiveReason(c), null, c);
  const allowed = [
    'rm -rf /tmp/build-1',
    'rm -rf build',
    'rm -f a.txt',
    'rm -rf ./dist',
    'echo reboot-ish',
    'echo halt',
    'git push origin main',
    'dd if=a of=b',
    'ls -la /',
  ];
  for (const c of allowed) assert.equal(destructiveReason(c), null, c);
});

test('globs: ** any depth, * and ? in one component, {a,b}; a bare pattern matches names at any depth', () => {
  const cases: Array<[string, string, boolean]> = [
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/deep/a.ts', true],
    ['*.ts', 'a.tsx', false],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/x/a.ts', false],
    ['src/**/*.ts', 'src/a.ts', true],
    ['src/**/*.ts', 'src/x/y/a.ts', true],
    ['**/*.{md,txt}', 'docs/a.md', true],
    ['**/*.{md,txt}', 'b.txt', true],
    ['**/*.{md,txt}', 'c.ts', false],
    ['?.js', 'a.js', true],
    ['?.js', 'ab.js', false],
    ['a+b(1).txt', 'a+b(1).txt', true],
    ['./src/*', 'src/a', true],
  ];
  for (const [glob, path, expected] of cases) assert.equal(globRegExp(glob).test(path), expected, `${glob} ~ ${path}`);
  assert.throws(() => globRegExp('{a,b'), /unclosed/);
});
