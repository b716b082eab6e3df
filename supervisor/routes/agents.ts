/**
 * `/agents` (REFERENCE §1.7), the parts that make sense headless: which agent programs are
 * installed (detect, detect-all), the launch arguments that keep a TUI in native scrollback, and
 * whether an agent's own conversation id exists. Opening a file in a desktop app and listing IDEs
 * need a desktop: they answer 501 saying so.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import type { AgentBinaries } from '../agents/agentBinaries.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Route } from '../http/types.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

const HEADLESS = 'not available in headless tuicd: it needs a desktop to open applications';
/** Binaries detect-all takes in one call. */
const MAX_BINARIES = 64;
const SESSION_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

function object(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Claude keeps a conversation as ~/.claude/projects/<cwd with / and . as ->/<id>.jsonl; Codex as ~/.codex/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl. */
function conversationExists(agentType: string, sessionId: string, cwd: string, home: string): boolean {
  if (agentType === 'claude') return existsSync(join(home, '.claude', 'projects', cwd.replace(/[/.]/g, '-'), `${sessionId}.jsonl`));
  if (agentType === 'codex') {
    const root = join(home, '.codex', 'sessions');
    const walk = (dir: string, depth: number): boolean => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return false;
      }
      for (const n of names) {
        if (depth === 3 && n.endsWith(`-${sessionId}.jsonl`)) return true;
        if (depth < 3 && walk(join(dir, n), depth + 1)) return true;
      }
      return false;
    };
    return walk(root, 0);
  }
  return false;
}

export function agentRoutes(binaries: AgentBinaries, env: NodeJS.ProcessEnv): Route[] {
  const home = (): string => env['HOME'] || homedir();
  return [
    {
      method: 'GET',
      pattern: '/agents',
      handler: async () => json({ agents: await binaries.installed(), ides: [] }),
    },
    {
      method: 'GET',
      pattern: '/agents/detect',
      handler: async (ctx) => {
        const binary = ctx.query.get('binary');
        if (!binary) throw new HttpError(400, 'binary is required (a name on PATH or an absolute path)');
        return json({ ...(await binaries.detect(binary)) });
      },
    },
    {
      method: 'POST',
      pattern: '/agents/detect-all',
      handler: (ctx) => {
        const list = object(parseJsonBody(ctx))['binaries'];
        if (!Array.isArray(list) || !list.every((b) => typeof b === 'string')) throw new HttpError(400, 'binaries must be an array of strings');
        if (list.length > MAX_BINARIES) throw new HttpError(400, `at most ${MAX_BINARIES} binaries per call`);
        const out: Record<string, unknown> = {};
        for (const b of list as string[]) if (b.trim() !== '') out[b] = binaries.locate(b.trim());
        return json(out);
      },
    },
    {
      method: 'POST',
      pattern: '/agents/launch-args',
      handler: async (ctx) => {
        const body = object(parseJsonBody(ctx));
        const { agentType, binaryPath, args } = body;
        if (typeof agentType !== 'string' || typeof binaryPath !== 'string') throw new HttpError(400, 'agentType and binaryPath are required strings');
        if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new HttpError(400, 'args must be an array of strings');
        const out = [...(args as string[])];
        // Codex draws on the alternate screen unless told not to; its output then scrolls back natively.
        if (agentType.toLowerCase() === 'codex' && !out.includes('--no-alt-screen') && (await binaries.detect(binaryPath)).supports_no_alt_screen)
          out.unshift('--no-alt-screen');
        return json(out);
      },
    },
    {
      method: 'POST',
      pattern: '/agents/verify-session',
      handler: (ctx) => {
        const body = object(parseJsonBody(ctx));
        const { agentType, sessionId, cwd } = body;
        if (typeof agentType !== 'string' || typeof sessionId !== 'string' || typeof cwd !== 'string')
          throw new HttpError(400, 'agentType, sessionId and cwd are required strings');
        // The id names a file: anything but a plain token is refused, never joined into a path.
        if (!SESSION_ID.test(sessionId)) throw new HttpError(400, `sessionId must be 1-128 of A-Z a-z 0-9 . _ -, got ${clipClientInput(sessionId)}`);
        return json(conversationExists(agentType.toLowerCase(), sessionId, cwd, home()) as unknown as object);
      },
    },
    { method: 'POST', pattern: '/agents/open-in-app', handler: () => json({ error: HEADLESS }, 501) },
    { method: 'GET', pattern: '/agents/ides', handler: () => json({ error: HEADLESS }, 501) },
  ];
}
