/** What the bridge tests share: where the bridge is, the env it runs with, reading a text result. */
import { fileURLToPath } from 'node:url';

import type { Tuicd } from '../helpers/tuicdProcess.js';

export const BRIDGE_JS = fileURLToPath(new URL('../../bridge/cli.js', import.meta.url));

/** The bridge's env: the test's tuicd socket, and no identity unless a test adds one. */
export function bridgeEnv(t: Tuicd, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'TUIC_SESSION') env[k] = v;
  return { ...env, TUIC_SOCKET: t.socketPath, ...extra };
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content[0]?.text ?? '';
}
