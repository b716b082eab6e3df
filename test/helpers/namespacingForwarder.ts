/**
 * An HTTP forwarder on 127.0.0.1 in front of tuicd's unix socket that lets a client written for one
 * MCP server (the conformance suite, which calls its reference server's own names) talk to that
 * server as an upstream of tuicd's hub. Behind the hub the upstream `conf`'s tool `x` is `conf__x`
 * and its resource `test://a` is `tuic://conf/test://a`: the forwarder adds the namespace to what the
 * client names (tools/call, prompts/get, resources/read|subscribe|unsubscribe, completion/complete)
 * and removes it from what comes back (the lists, read contents, embedded resources,
 * notifications/resources/updated), in JSON bodies and in SSE answers event by event as they
 * arrive. Everything else passes unchanged: headers, statuses, ids, other events' bytes, and the
 * client's answers to the server's requests; but for Content-Length, and Accept-Encoding, which is
 * not sent on (tuicd compresses larger answers for a client that accepts it: the forwarder must read them).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

import { HubConstants } from '../../shared/protocol/mcpHub.js';
import { namespacedUri, splitNamespacedUri } from '../../shared/upstreamUris.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isJson = (type: string | undefined) => type !== undefined && /^application\/json\b/i.test(type);
const isEventStream = (type: string | undefined) => type !== undefined && /^text\/event-stream\b/i.test(type);

/** The namespace of one upstream, both ways. */
class Namespace {
  private readonly prefix: string;
  constructor(readonly upstream: string) {
    this.prefix = `${upstream}${HubConstants.SEPARATOR}`;
  }

  name(name: unknown): unknown {
    return typeof name === 'string' ? this.prefix + name : name;
  }
  uri(uri: unknown): unknown {
    return typeof uri === 'string' ? namespacedUri(this.upstream, uri) : uri;
  }
  /** Another upstream's (or a native) name or URI is left as it is. */
  unName(name: unknown): unknown {
    return typeof name === 'string' && name.startsWith(this.prefix) ? name.slice(this.prefix.length) : name;
  }
  unUri(uri: unknown): unknown {
    const split = typeof uri === 'string' ? splitNamespacedUri(uri) : null;
    return split?.upstream === this.upstream ? split.uri : uri;
  }
}

/** Adds the namespace to what a client request names; the rest of the message is untouched. */
function inbound(ns: Namespace, message: Json): void {
  const params = message['params'];
  if (!isObject(params)) return;
  switch (message['method']) {
    case 'tools/call':
    case 'prompts/get':
      params['name'] = ns.name(params['name']);
      break;
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      params['uri'] = ns.uri(params['uri']);
      break;
    case 'completion/complete': {
      const ref = params['ref'];
      if (!isObject(ref)) break;
      if (ref['type'] === 'ref/prompt') ref['name'] = ns.name(ref['name']);
      if (ref['type'] === 'ref/resource') ref['uri'] = ns.uri(ref['uri']);
      break;
    }
  }
}

/** Embedded resources and resource links carry a URI of the hub's. */
function unContent(ns: Namespace, content: unknown): void {
  if (!isObject(content)) return;
  if (content['type'] === 'resource' && isObject(content['resource'])) content['resource']['uri'] = ns.unUri(content['resource']['uri']);
  if (content['type'] === 'resource_link') content['uri'] = ns.unUri(content['uri']);
}

function each(list: unknown, edit: (item: Json) => void): void {
  if (Array.isArray(list)) for (const item of list) if (isObject(item)) edit(item);
}

/** Removes the namespace from the result of a request of `method`. */
function outboundResult(ns: Namespace, method: string, result: Json): void {
  switch (method) {
    case 'tools/list':
      return each(result['tools'], (t) => void (t['name'] = ns.unName(t['name'])));
    case 'prompts/list':
      return each(result['prompts'], (p) => void (p['name'] = ns.unName(p['name'])));
    case 'resources/list':
      return each(result['resources'], (r) => void (r['uri'] = ns.unUri(r['uri'])));
    case 'resources/templates/list':
      return each(result['resourceTemplates'], (r) => void (r['uriTemplate'] = ns.unUri(r['uriTemplate'])));
    case 'resources/read':
      return each(result['contents'], (c) => void (c['uri'] = ns.unUri(c['uri'])));
    case 'tools/call':
      return each(result['content'], (c) => unContent(ns, c));
    case 'prompts/get':
      return each(result['messages'], (m) => unContent(ns, m['content']));
  }
}

/**
 * Parses a JSON-RPC body (one message or a batch), lets `edit` change each message in place, and
 * returns the new text, or null when it is not JSON or nothing changed (the original bytes then pass).
 */
function rewrite(text: string, edit: (message: Json) => void): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const before = JSON.stringify(parsed);
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) if (isObject(message)) edit(message);
  const after = JSON.stringify(parsed);
  return after === before ? null : after;
}

/** One SSE event's text (no trailing blank line) with its data rewritten; other fields keep their lines. */
function rewriteEvent(block: string, edit: (message: Json) => void): string {
  const lines = block.split(/\r\n|\r|\n/);
  const dataLines = lines.filter((l) => l.startsWith('data:'));
  if (dataLines.length === 0) return block;
  const data = dataLines.map((l) => l.slice(5).replace(/^ /, '')).join('\n');
  const rewritten = rewrite(data, edit);
  if (rewritten === null) return block;
  const first = lines.findIndex((l) => l.startsWith('data:'));
  return lines.flatMap((l, i) => (i === first ? [`data: ${rewritten}`] : l.startsWith('data:') ? [] : [l])).join('\n');
}

function withLength(headers: IncomingHttpHeaders, length: number): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = { ...headers, 'content-length': String(length) };
  delete out['transfer-encoding'];
  return out;
}

export class NamespacingForwarder {
  /** `<session>\0<id>` → method of each request sent on, so its answer (on any stream) can be rewritten. */
  private readonly pending = new Map<string, string>();

  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    private readonly ns: Namespace,
    private readonly socketPath: string,
    readonly port: number,
  ) {}

  /** Forwards 127.0.0.1:<port> to the HTTP server on `socketPath`, namespacing for the upstream `upstream`. */
  static start(socketPath: string, upstream: string): Promise<NamespacingForwarder> {
    const server = createServer();
    const sockets = new Set<Socket>();
    server.on('connection', (s) => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (address === null || typeof address === 'string') return reject(new Error('forwarder has no TCP address'));
        const forwarder = new NamespacingForwarder(server, sockets, new Namespace(upstream), socketPath, address.port);
        server.on('request', (req, res) => forwarder.forward(req, res));
        resolve(forwarder);
      });
    });
  }

  /** The MCP endpoint as the client sees it. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  private key(session: string | string[] | undefined, id: unknown): string {
    return `${typeof session === 'string' ? session : ''}\0${JSON.stringify(id)}`;
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      let headers: IncomingHttpHeaders = { ...req.headers };
      delete headers['accept-encoding'];
      const session = req.headers['mcp-session-id'];
      if (req.method === 'POST' && isJson(req.headers['content-type'])) {
        const rewritten = rewrite(body.toString('utf8'), (message) => {
          if (typeof message['method'] !== 'string' || message['id'] === undefined) return inbound(this.ns, message);
          this.pending.set(this.key(session, message['id']), message['method']);
          inbound(this.ns, message);
        });
        if (rewritten !== null) {
          body = Buffer.from(rewritten, 'utf8');
          headers = withLength(headers, body.length);
        }
      }
      const upstream = request({ socketPath: this.socketPath, method: req.method, path: req.url, headers, agent: false }, (answer) =>
        this.answer(answer, res, session),
      );
      upstream.on('error', () => res.destroy());
      // A client that hangs up (an SSE reader cancelling) hangs up upstream too.
      res.once('close', () => upstream.destroy());
      if (body.length > 0) upstream.end(body);
      else upstream.end();
    });
  }

  /** Removes the namespace from one message coming back: a result of a request seen going up, or a resource update. */
  private outbound(session: string | string[] | undefined, message: Json): void {
    if (message['method'] === 'notifications/resources/updated' && isObject(message['params'])) {
      message['params']['uri'] = this.ns.unUri(message['params']['uri']);
      return;
    }
    if (message['method'] !== undefined || message['id'] === undefined) return;
    const key = this.key(session, message['id']);
    const method = this.pending.get(key);
    if (method === undefined) return;
    this.pending.delete(key);
    if (isObject(message['result'])) outboundResult(this.ns, method, message['result']);
  }

  private answer(answer: IncomingMessage, res: ServerResponse, requestSession: string | string[] | undefined): void {
    const type = answer.headers['content-type'];
    // initialize's answer brings the session id its result belongs to.
    const session = requestSession ?? answer.headers['mcp-session-id'];
    const edit = (message: Json) => this.outbound(session, message);
    if (isJson(type)) {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const original = Buffer.concat(chunks);
        const rewritten = rewrite(original.toString('utf8'), edit);
        const body = rewritten === null ? original : Buffer.from(rewritten, 'utf8');
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, rewritten === null ? answer.headers : withLength(answer.headers, body.length));
        res.end(body);
      });
      return;
    }
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
    if (!isEventStream(type)) {
      answer.pipe(res);
      return;
    }
    // Each event goes on as soon as it is complete: progress and the server's requests come mid-request.
    res.flushHeaders();
    let buffered = '';
    answer.setEncoding('utf8');
    answer.on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = /\r\n\r\n|\n\n|\r\r/.exec(buffered); end !== null; end = /\r\n\r\n|\n\n|\r\r/.exec(buffered)) {
        const block = buffered.slice(0, end.index);
        buffered = buffered.slice(end.index + end[0].length);
        res.write(`${rewriteEvent(block, edit)}${end[0]}`);
      }
    });
    answer.on('end', () => res.end(buffered));
    answer.on('error', () => res.destroy());
  }

  /** Closes the listener and every forwarded connection (an open SSE stream would keep close() waiting). */
  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
