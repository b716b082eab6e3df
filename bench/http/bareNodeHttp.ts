/** Baseline: a bare node:http server answering GET /health on 127.0.0.1:0 and a unix socket. */
import type http from 'node:http';
import { parseArgs } from 'node:util';

import { healthBody, serveNodeHttpOnBoth } from './bareServer.js';

const { values } = parseArgs({ options: { socket: { type: 'string' }, 'max-seconds': { type: 'string', default: '1800' } } });
if (!values.socket) throw new Error('usage: bareNodeHttp --socket <path> [--max-seconds N]');
const socketPath = values.socket;

let port = 0;
const handler: http.RequestListener = (req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    const body = healthBody(socketPath, port);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  } else {
    res.writeHead(404).end();
  }
};

serveNodeHttpOnBoth('bare-node-http', handler, socketPath, Number(values['max-seconds']), (p) => (port = p));
