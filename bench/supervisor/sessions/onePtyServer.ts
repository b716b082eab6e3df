/**
 * Echo peer with ttyd's shape: one process that owns the PTY and the WebSocket. A viewer of
 * `/sessions/<any>/stream` gets a fresh PTY running `--script`; its frames are typed into the PTY
 * and the PTY's output comes back as binary frames. No pty host, no channel, no ring, no text
 * stage: what tuicd's split into supervisor and pty host costs is the difference to this.
 * Usage: onePtyServer --socket <path> --script <sh -c text> [--max-seconds N]
 */
import { parseArgs } from 'node:util';

import uws from '@trufflesuite/uws-js-unofficial';
import { spawn as spawnPty, type IPty } from 'node-pty';

import { exitWithParent } from '../../http/bareServer.js';
import { SHELL } from './scripts.js';

const { values } = parseArgs({ options: { socket: { type: 'string' }, script: { type: 'string' }, 'max-seconds': { type: 'string', default: '1800' } } });
if (!values.socket || !values.script) throw new Error('usage: onePtyServer --socket <path> --script <text> [--max-seconds N]');
const socketPath = values.socket;
const script = values.script;

interface Viewer {
  pty?: IPty;
}

const app = uws.App().ws<Viewer>('/sessions/:id/stream', {
  open(ws) {
    const pty = spawnPty(SHELL, ['-c', script], { name: 'xterm-256color', cols: 80, rows: 24, cwd: '/tmp', env: { ...process.env, TERM: 'xterm-256color' } as Record<string, string>, encoding: null });
    const viewer = ws.getUserData();
    viewer.pty = pty;
    // With `encoding: null` node-pty hands out Buffers; its typings only know strings. Output after
    // the close (the killed PTY's last read) must not touch the closed socket: uWS would throw.
    pty.onData(((chunk: Buffer) => {
      if (viewer.pty === pty) ws.send(chunk, true);
    }) as unknown as (data: string) => void);
  },
  message(ws, message) {
    ws.getUserData().pty?.write(Buffer.from(message.slice(0)) as unknown as string);
  },
  close(ws) {
    const v = ws.getUserData();
    v.pty?.kill('SIGKILL');
    v.pty = undefined;
  },
});

app.listen_unix((listenSocket) => {
  if (!listenSocket) throw new Error(`onePtyServer: listen_unix ${socketPath} failed`);
  exitWithParent(Number(values['max-seconds']), () => uws.us_listen_socket_close(listenSocket));
  console.log(`one-process-pty serving on unix socket ${socketPath}`);
}, socketPath);
