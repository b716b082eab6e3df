/** The pump against real MCP servers from node_modules over stdio: handshake, tools, calls, concurrency. */

import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { EVERYTHING_SERVER, FILESYSTEM_SERVER, isAlive, mockParams, startPump } from './pumpHarness.js';

const everything = mockParams('', { name: 'everything', args: [EVERYTHING_SERVER, 'stdio'] });

describe('real servers over stdio', { concurrency: true }, () => {
  test('spawn_and_initialize_returns_tools (server-everything)', async (t) => {
    const pump = await startPump(t);
    const started = await pump.start(everything);
    assert.ok(Number.isInteger(started.pid) && started.pid > 0);
    assert.ok(isAlive(started.pid));
    assert.equal(typeof started.server_name, 'string');
    const names = started.tools.map((tool) => tool.name);
    assert.ok(names.includes('echo'), `tools: ${names.join(', ')}`);
    const status = await pump.client.request('status', {});
    assert.equal(status.alive, true);
    assert.equal(status.pid, started.pid);
    // Its startup banner went to stderr, and so to a stderr event.
    await pump.until(() => pump.stderr.some((line) => /STDIO/i.test(line)), 5_000, 'the stderr banner');
  });

  test('call_tool_returns_result (server-everything echo), and tools/list again', async (t) => {
    const pump = await startPump(t);
    await pump.start(everything);
    assert.deepEqual(await pump.rpc('tools/call', { name: 'echo', arguments: { message: 'hello, upstream' } }), {
      content: [{ type: 'text', text: 'Echo: hello, upstream' }],
    });
    const listed = (await pump.rpc('tools/list')) as { tools: Array<{ name: string }> };
    assert.ok(listed.tools.some((tool) => tool.name === 'echo'));
    // A JSON-RPC error answer is a reply with `error`, not a failure of the exchange.
    const wrong = (await pump.rpc('no/such/method')) as { rpcError?: { code: number; message: string } };
    assert.equal(wrong.rpcError?.code, -32601);
  });

  test('16 concurrent callers each get their own answer (server-everything)', async (t) => {
    const pump = await startPump(t);
    await pump.start(everything);
    const answers = await Promise.all(
      Array.from(
        { length: 16 },
        (_, n) => pump.rpc('tools/call', { name: 'echo', arguments: { message: `caller-${n}` } }) as Promise<{ content: Array<{ text: string }> }>,
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.content[0]!.text),
      Array.from({ length: 16 }, (_, n) => `Echo: caller-${n}`),
    );
    assert.equal((await pump.client.request('status', {})).in_flight, 0);
  });

  test('server-filesystem: lists and reads a file under the allowed root', async (t) => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'tuicd-fs-upstream-')));
    t.after(() => rm(root, { recursive: true, force: true }));
    await writeFile(join(root, 'notes.txt'), 'line one\nline two\n');
    const pump = await startPump(t);
    const started = await pump.start(mockParams('', { name: 'filesystem', args: [FILESYSTEM_SERVER, root] }));
    const names = started.tools.map((tool) => tool.name);
    assert.ok(names.includes('list_directory') && names.includes('read_text_file'), names.join(', '));
    const listing = (await pump.rpc('tools/call', { name: 'list_directory', arguments: { path: root } })) as { content: Array<{ text: string }> };
    assert.match(listing.content[0]!.text, /\[FILE\] notes\.txt/);
    const read = (await pump.rpc('tools/call', { name: 'read_text_file', arguments: { path: join(root, 'notes.txt') } })) as {
      content: Array<{ text: string }>;
    };
    assert.equal(read.content[0]!.text, 'line one\nline two\n');
    // Outside the root is refused by the server (as a tool error), which is still an answer.
    const outside = (await pump.rpc('tools/call', { name: 'read_text_file', arguments: { path: '/etc/hostname' } })) as {
      isError?: boolean;
      rpcError?: unknown;
    };
    assert.ok(outside.isError === true || outside.rpcError !== undefined, JSON.stringify(outside));
  });
});
