/**
 * Baseline: a bare uWebSockets.js server answering GET /health on 127.0.0.1:0 and a unix socket.
 * uWS is loaded as tuicd loads it (bench/http/engines.ts); where no build loads it exits 3 saying why.
 */
import { parseArgs } from 'node:util';

import { exitWithParent, healthBody } from './bareServer.js';
import { uwsOrExit } from './engines.js';
import { formatReadyLine } from './readyLine.js';

const { values } = parseArgs({ options: { socket: { type: 'string' }, 'max-seconds': { type: 'string', default: '1800' } } });
if (!values.socket) throw new Error('usage: bareUws --socket <path> [--max-seconds N]');
const socketPath = values.socket;
const uws = uwsOrExit('bare uWS');

let port = 0;
const app = uws.App().get('/health', (res) => {
  res.cork(() => {
    res.writeHeader('content-type', 'application/json').end(healthBody(socketPath, port));
  });
});

app.listen('127.0.0.1', 0, (tcpSocket) => {
  if (!tcpSocket) throw new Error('bare uWS: tcp listen failed');
  port = uws.us_socket_local_port(tcpSocket);
  app.listen_unix((unixSocket) => {
    if (!unixSocket) throw new Error(`bare uWS: listen_unix ${socketPath} failed`);
    exitWithParent(Number(values['max-seconds']), () => {
      uws.us_listen_socket_close(tcpSocket);
      uws.us_listen_socket_close(unixSocket);
    });
    console.log(formatReadyLine('bare-uws', socketPath, '127.0.0.1', port));
  }, socketPath);
});
