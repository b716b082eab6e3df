/**
 * Echo peer with ttyd's shape: one process that owns the PTY and the WebSocket. A viewer of
 * `/sessions/<any>/stream` gets a fresh PTY running `--script`; its frames are typed into the PTY
 * and the PTY's output comes back as binary frames, with ttyd-like flow control (pause the PTY while
 * the socket is backed up). No pty host, no channel, no ring, no text stage: what tuicd's split into
 * supervisor and pty host costs is the difference to this.
 * uWS is loaded as tuicd loads it (bench/http/engines.ts); where no build loads it exits 3 saying why.
 * Usage: onePtyServer --socket <path> --script <sh -c text> [--max-seconds N]
 */
import { parseArgs } from 'node:util';

import { spawn as spawnPty, type IPty } from '@lydell/node-pty';

import { exitWithParent } from '../../http/bareServer.js';
import { uwsOrExit } from '../../http/engines.js';
import { SHELL } from './scripts.js';

const { values } = parseArgs({ options: { socket: { type: 'string' }, script: { type: 'string' }, 'max-seconds': { type: 'string', default: '1800' } } });
if (!values.socket || !values.script) throw new Error('usage: onePtyServer --socket <path> --script <text> [--max-seconds N]');
const socketPath = values.socket;
const script = values.script;
const uws = uwsOrExit('one-process pty server');

interface Viewer {
  pty?: IPty;
  paused?: boolean;
}

/**
 * Flow control, as ttyd has: the PTY is paused while the socket holds more than HIGH bytes and read
 * again below LOW, so the peer is byte-exact (uWS drops a send past maxBackpressure) and never buffers
 * without bound. The send limit is far above HIGH, so a send is never dropped.
 */
const HIGH_WATER_BYTES = 1024 * 1024;
const LOW_WATER_BYTES = 256 * 1024;
const MAX_BACKPRESSURE_BYTES = 64 * 1024 * 1024;

const app = uws.App().ws<Viewer>('/sessions/:id/stream', {
  maxBackpressure: MAX_BACKPRESSURE_BYTES,
  open(ws) {
    const pty = spawnPty(SHELL, ['-c', script], {
      name: 'xterm-256color',
      cols: 80,
      rows: 24,
      cwd: '/tmp',
      env: { ...process.env, TERM: 'xterm-256color' } as Record<string, string>,
      encoding: null,
    });
    const viewer = ws.getUserData();
    viewer.pty = pty;
    // With `encoding: null` node-pty hands out Buffers; its typings only know strings. Output after
    // the close (the killed PTY's last read) must not touch the closed socket: uWS would throw.
    pty.onData(((chunk: Buffer) => {
      if (viewer.pty !== pty) return;
      ws.send(chunk, true);
      if (!viewer.paused && ws.getBufferedAmount() > HIGH_WATER_BYTES) {
        viewer.paused = true;
        pty.pause();
      }
    }) as unknown as (data: string) => void);
  },
  drain(ws) {
    const viewer = ws.getUserData();
    if (viewer.paused && ws.getBufferedAmount() < LOW_WATER_BYTES) {
      viewer.paused = false;
      viewer.pty?.resume();
    }
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
