/**
 * tuicd in front of two upstreams of the same kind for the OAuth bench (issue 27): the test
 * fixture's OAuth-protected MCP server (test/fixtures/upstreams/oauthUpstream.ts: the SDK's
 * authorization server router and bearer middleware over an in-memory provider, express, a `whoami`
 * tool), twice, each in this process. `oauth` is authorized through tuicd's flow as a browser would
 * (start → the authorization URL → its redirect to the loopback callback); `bearer` is configured
 * with `auth: {type: 'bearer', token: ''}` and its token, minted long-lived by its own provider,
 * stored with POST /mcp/upstreams/credential. Both requests then pass the same verifier (one map
 * lookup): only tuicd's side differs.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';

import { OAuthUpstream } from '../../test/fixtures/upstreams/oauthUpstream.js';
import { httpServer } from '../../test/helpers/upstreamServers.js';
import { startTuicd, type CallCheck, type McpTarget } from './toolsCallTargets.js';

export const OAUTH = 'oauth';
export const BEARER = 'bearer';
/** The client id the static token was minted for: what `bearer__whoami` answers. */
export const STATIC_CLIENT_ID = 'bench-static-token';
/** How long the static token lives (the bench never outlives it). */
const STATIC_TOKEN_TTL_S = 24 * 3600;

const READY_TIMEOUT_MS = 30_000;
const POLL_MS = 50;

export const whoami = (upstream: string): { name: string; arguments: Record<string, unknown> } => ({ name: `${upstream}__whoami`, arguments: {} });

/** The tools/call answer's text (the client id), or why it is not a good answer. */
export function whoamiText(result: Record<string, unknown>): string | { problem: string } {
  const text = (result['content'] as Array<{ text?: string }> | undefined)?.[0]?.text;
  return result['isError'] !== true && typeof text === 'string' && text !== ''
    ? text
    : { problem: `not a whoami answer: ${JSON.stringify(result).slice(0, 200)}` };
}

/** What openSession checks before timing: the OAuth upstream answers with the client tuicd registered. */
const oauthCheck = (up: OAuthUpstream): CallCheck => ({
  call: whoami(OAUTH),
  verify(result) {
    const text = whoamiText(result);
    if (typeof text !== 'string') return text.problem;
    return up.provider.clients.has(text) ? undefined : `answered for client '${text}', not one tuicd registered`;
  },
});

export interface Answer {
  status: number;
  text: string;
}

/** One request on tuicd's unix socket (its own connection). */
export function unixRequest(socketPath: string, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path, agent: false, headers: body === undefined ? {} : { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function postOk(socketPath: string, path: string, body: unknown): Promise<string> {
  const a = await unixRequest(socketPath, 'POST', path, body);
  if (a.status !== 200) throw new Error(`POST ${path} answered ${a.status}: ${a.text.slice(0, 300)}`);
  return a.text;
}

interface StatusRow {
  name: string;
  status: string;
  last_error?: string | null;
}

async function statusOf(socketPath: string, name: string): Promise<StatusRow | undefined> {
  const a = await unixRequest(socketPath, 'GET', '/mcp/upstream-status');
  if (a.status !== 200) throw new Error(`GET /mcp/upstream-status answered ${a.status}: ${a.text.slice(0, 200)}`);
  return (JSON.parse(a.text) as { upstreams: StatusRow[] }).upstreams.find((r) => r.name === name);
}

/** Polls until the upstream is in one of `statuses`; the error says where it stayed. */
export async function waitStatus(socketPath: string, name: string, statuses: string[]): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const row = await statusOf(socketPath, name);
    if (row && statuses.includes(row.status)) return;
    if (Date.now() > deadline) {
      const seen = row ? `${row.status}${row.last_error ? ` (${row.last_error})` : ''}` : 'not registered';
      throw new Error(`upstream '${name}' not ${statuses.join('/')} after ${READY_TIMEOUT_MS / 1000} s: ${seen}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** tuicd's OAuth flow, played by a browser that approves: start, open the URL, follow its redirect to the loopback callback. */
export async function authorize(socketPath: string, name: string): Promise<void> {
  const { authorization_url } = JSON.parse(await postOk(socketPath, '/mcp/upstreams/oauth/start', { name })) as { authorization_url: string };
  const atServer = await fetch(authorization_url, { redirect: 'manual' });
  const back = atServer.headers.get('location');
  if (atServer.status !== 302 || !back) throw new Error(`the authorization server answered ${atServer.status} without a redirect`);
  const page = await fetch(back);
  if (page.status !== 200) throw new Error(`the loopback callback answered ${page.status}: ${(await page.text()).slice(0, 200)}`);
  await waitStatus(socketPath, name, ['ready']);
}

/** A long-lived access token the provider's verifier accepts, as if it had issued it. */
function mintStaticToken(up: OAuthUpstream): string {
  const token = `static-${randomBytes(16).toString('hex')}`;
  up.provider.access.set(token, { clientId: STATIC_CLIENT_ID, scopes: [], expiresAt: Math.floor(Date.now() / 1000) + STATIC_TOKEN_TTL_S });
  return token;
}

/** The HTTP engine tuicd runs on, from GET /health (for the notes). */
export async function engineName(socketPath: string): Promise<string> {
  const a = await unixRequest(socketPath, 'GET', '/health');
  return (JSON.parse(a.text) as { http_engine?: { name?: string } }).http_engine?.name ?? 'unknown';
}

export interface OAuthHub {
  hub: McpTarget;
  /** The OAuth-protected upstream tuicd authorized. */
  oauth: OAuthUpstream;
  /** The same kind of upstream, reached with a static token. */
  bearer: OAuthUpstream;
  stop(): Promise<void>;
}

/**
 * Both upstreams, and tuicd (on the engine it picks: both peers run on the same tuicd, so the ratios
 * compare credential paths, not engines) with both ready and an MCP session opened.
 * The OAuth provider issues access tokens that live `accessTtlS` seconds.
 */
export async function startOAuthHub(tmpDir: string, accessTtlS: number): Promise<OAuthHub> {
  const oauth = await OAuthUpstream.start();
  const bearer = await OAuthUpstream.start().catch(async (err: unknown) => {
    await oauth.stop();
    throw err;
  });
  const stopUpstreams = async (): Promise<void> => {
    await Promise.all([oauth.stop(), bearer.stop()]);
  };
  oauth.provider.accessTtlS = accessTtlS;
  const servers = [httpServer(OAUTH, oauth.mcpUrl), { ...httpServer(BEARER, bearer.mcpUrl), auth: { type: 'bearer', token: '' } }];
  try {
    const hub = await startTuicd(tmpDir, {
      dirName: 'tuicd-config-oauth',
      shells: 0,
      files: { 'mcp-upstreams.json': JSON.stringify({ servers }) },
      check: oauthCheck(oauth),
      ready: async (socketPath) => {
        // Without its token the bearer upstream answers 401 (needs_auth); stored, a reconnect picks it up.
        await postOk(socketPath, '/mcp/upstreams/credential', { name: BEARER, token: mintStaticToken(bearer) });
        await waitStatus(socketPath, BEARER, ['ready', 'needs_auth', 'failed']);
        await postOk(socketPath, '/mcp/upstreams/reconnect', { name: BEARER });
        await waitStatus(socketPath, OAUTH, ['needs_auth']);
        await authorize(socketPath, OAUTH);
        await waitStatus(socketPath, BEARER, ['ready']);
      },
    });
    return {
      hub,
      oauth,
      bearer,
      stop: async () => {
        await hub.proc.stop();
        await stopUpstreams();
      },
    };
  } catch (err) {
    await stopUpstreams();
    throw err;
  }
}
