/**
 * `/agents`, the parts that make sense headless: which agent programs are installed (detect,
 * detect-all), the launch arguments that keep a TUI in native scrollback, and whether an agent's own
 * conversation id exists. Opening a file in a desktop app and listing IDEs need a desktop: they
 * answer 501 (not_implemented) saying so.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import type { AgentBinaries } from '../agents/agentBinaries.js';
import { ErrorBodySchema } from '../http/openapi.js';
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';

const TAG = 'agents';
const HEADLESS = 'not available in headless tuicd: it needs a desktop to open applications';
/** Binaries detect-all takes in one call. */
const MAX_BINARIES = 64;
const SESSION_ID = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$';

const BinaryField = Type.String({
  minLength: 1,
  description: 'A name on PATH or an absolute path.',
  errorMessage: 'binary is required (a name on PATH or an absolute path)',
});

const DetectionSchema = Type.Object({
  path: Type.Union([Type.String(), Type.Null()], { description: 'Where it is; null when not installed.' }),
  version: Type.Union([Type.String(), Type.Null()], { description: 'From `--version`; null when not probed (or changed since) or not found.' }),
  supports_no_alt_screen: Type.Boolean({ description: 'Its `--help` offers `--no-alt-screen` (native scrollback).' }),
});

const InstalledSchema = Type.Object({ name: Type.String(), path: Type.String(), version: Type.Union([Type.String(), Type.Null()]) });

const DetectAllBody = Type.Object({
  binaries: Type.Array(Type.String(), {
    maxItems: MAX_BINARIES,
    description: `Names on PATH or absolute paths, at most ${MAX_BINARIES}; blank ones are skipped.`,
    errorMessage: `binaries must be an array of at most ${MAX_BINARIES} strings`,
  }),
});

const LaunchArgsBody = Type.Object({
  agentType: Type.String({ description: 'claude, codex, gemini…' }),
  binaryPath: Type.String({ description: 'The binary that will run (probed for its flags).' }),
  args: Type.Array(Type.String(), { description: 'The arguments the caller means to pass.' }),
});

const VerifySessionBody = Type.Object({
  agentType: Type.String({ description: 'claude or codex; any other answers false.' }),
  sessionId: Type.String({
    pattern: SESSION_ID,
    description: "The agent's own conversation id: 1-128 of A-Z a-z 0-9 . _ - (it names a file).",
    errorMessage: 'sessionId must be 1-128 of A-Z a-z 0-9 . _ -, got {got}',
  }),
  cwd: Type.String({ description: 'The directory the conversation ran in (Claude files them by it).' }),
});

const headless = { description: 'Always: this needs a desktop.', schema: ErrorBodySchema };

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
  const notHeadless = () => {
    throw new ApiError('not_implemented', HEADLESS);
  };
  return [
    defineRoute({
      method: 'GET',
      pattern: '/agents',
      tag: TAG,
      summary: 'The known agent programs installed here, with their versions',
      answers: {
        200: Type.Object({
          agents: Type.Array(InstalledSchema),
          ides: Type.Array(Type.Unknown(), { maxItems: 0, description: 'Always empty: headless tuicd opens no IDE.' }),
        }),
      },
      handler: async () => json({ agents: await binaries.installed(), ides: [] }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/agents/detect',
      tag: TAG,
      summary:
        'One binary, looked up without running anything: its path; version and no-alt-screen flag only as an earlier POST /agents/detect found them in the same, unchanged file (else null and false)',
      query: Type.Object({ binary: BinaryField }),
      answers: { 200: DetectionSchema },
      handler: ({ query }) => json({ ...binaries.lookup(query.binary) }),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/agents/detect',
      tag: TAG,
      summary: 'One binary, probed: runs it with `--version` and `--help` (2 s each) for its version and whether it can stay off the alternate screen',
      body: Type.Object({ binary: BinaryField }),
      answers: { 200: DetectionSchema },
      handler: async ({ body }) => json({ ...(await binaries.detect(body.binary)) }),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/agents/detect-all',
      tag: TAG,
      summary: 'Where each binary is (no probes: version null)',
      body: DetectAllBody,
      answers: { 200: Type.Record(Type.String(), DetectionSchema, { description: 'By the name as given (trimmed).' }) },
      handler: ({ body }) => {
        const out: Record<string, unknown> = {};
        for (const b of body.binaries) if (b.trim() !== '') out[b] = binaries.locate(b.trim());
        return json(out);
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/agents/launch-args',
      tag: TAG,
      summary: 'The arguments to launch an agent with so its output scrolls back natively',
      description: 'Codex gets `--no-alt-screen` (once) when its binary offers it; other agents keep their arguments.',
      body: LaunchArgsBody,
      answers: { 200: Type.Array(Type.String()) },
      handler: async ({ body }) => {
        const out = [...body.args];
        // Codex draws on the alternate screen unless told not to; its output then scrolls back natively.
        if (body.agentType.toLowerCase() === 'codex' && !out.includes('--no-alt-screen') && (await binaries.detect(body.binaryPath)).supports_no_alt_screen)
          out.unshift('--no-alt-screen');
        return json(out);
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/agents/verify-session',
      tag: TAG,
      summary: "Whether an agent's conversation id exists on disk (Claude, Codex)",
      body: VerifySessionBody,
      answers: { 200: Type.Boolean() },
      handler: ({ body }) => json(conversationExists(body.agentType.toLowerCase(), body.sessionId, body.cwd, home()) as unknown as object),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/agents/open-in-app',
      tag: TAG,
      summary: 'Open a file in a desktop app: not available headless',
      answers: { 501: headless },
      handler: notHeadless,
    }),
    defineRoute({
      method: 'GET',
      pattern: '/agents/ides',
      tag: TAG,
      summary: 'The IDEs installed: not available headless',
      answers: { 501: headless },
      handler: notHeadless,
    }),
  ];
}
