/**
 * An upstream's resources, resource templates and prompts: fetched whole (every page) after each
 * handshake and on its list_changed notifications, kept as the JSON clients will see (URIs
 * namespaced with shared/upstreamUris.ts, prompt names `{upstream}__{name}`, everything else as
 * the upstream wrote it), and merged across the ready upstreams for the `lists` event.
 */

import { namespacedUri } from '../../shared/upstreamUris.js';
import { qualifiedName } from './toolNames.js';
import type { UpstreamClient } from './upstreamClient.js';

/** Pages followed per list, and entries kept per list: a server paging forever cannot hold the hub. */
export const MAX_LIST_PAGES = 100;
export const MAX_LIST_ENTRIES = 10_000;

/** One upstream's three lists, each entry serialized as clients see it. */
export interface UpstreamListsJson {
  resources: string[];
  resourceTemplates: string[];
  prompts: string[];
}

export const EMPTY_LISTS: UpstreamListsJson = { resources: [], resourceTemplates: [], prompts: [] };

/** What the merged lists can do: a capability is on when any ready upstream declares it. */
export interface ListCapabilities {
  resources: boolean;
  subscribe: boolean;
  prompts: boolean;
  completions: boolean;
  logging: boolean;
}

type Warn = (msg: string, fields: Record<string, unknown>) => void;

interface ListSpec {
  method: 'resources/list' | 'resources/templates/list' | 'prompts/list';
  /** The result's array member. */
  member: 'resources' | 'resourceTemplates' | 'prompts';
  /** The member of each entry that must be a string, and is rewritten for clients. */
  key: 'uri' | 'uriTemplate' | 'name';
  rewrite(upstream: string, value: string): string;
}

const RESOURCES: ListSpec = { method: 'resources/list', member: 'resources', key: 'uri', rewrite: namespacedUri };
const TEMPLATES: ListSpec = { method: 'resources/templates/list', member: 'resourceTemplates', key: 'uriTemplate', rewrite: namespacedUri };
const PROMPTS: ListSpec = { method: 'prompts/list', member: 'prompts', key: 'name', rewrite: qualifiedName };

/**
 * The lists the upstream declares (`resources` → resources and templates, `prompts` → prompts).
 * A list whose fetch fails keeps `previous` (logged): one bad page must not empty what clients see.
 */
export async function fetchLists(upstream: string, client: UpstreamClient, previous: UpstreamListsJson, warn: Warn): Promise<UpstreamListsJson> {
  const caps = client.capabilities;
  const fetchOne = async (spec: ListSpec, declared: boolean, kept: string[]): Promise<string[]> => {
    if (!declared) return [];
    try {
      return await fetchAll(upstream, client, spec, warn);
    } catch (err) {
      warn(`${spec.method} failed; keeping the last list`, { upstream, error: err instanceof Error ? err.message : String(err) });
      return kept;
    }
  };
  const [resources, resourceTemplates, prompts] = await Promise.all([
    fetchOne(RESOURCES, isObject(caps['resources']), previous.resources),
    fetchOne(TEMPLATES, isObject(caps['resources']), previous.resourceTemplates),
    fetchOne(PROMPTS, isObject(caps['prompts']), previous.prompts),
  ]);
  return { resources, resourceTemplates, prompts };
}

async function fetchAll(upstream: string, client: UpstreamClient, spec: ListSpec, warn: Warn): Promise<string[]> {
  const out: string[] = [];
  let skipped = 0;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = (await client.request(spec.method, cursor === undefined ? undefined : { cursor })) as Record<string, unknown> | null;
    const listed = result?.[spec.member];
    if (!Array.isArray(listed)) {
      warn(`${spec.method} answer has no ${spec.member} array; treating it as empty`, { upstream });
      break;
    }
    for (const item of listed) {
      if (out.length >= MAX_LIST_ENTRIES) break;
      const value = isObject(item) ? item[spec.key] : undefined;
      if (typeof value !== 'string') {
        skipped++;
        continue;
      }
      out.push(JSON.stringify({ ...item, [spec.key]: spec.rewrite(upstream, value) }));
    }
    const next = result?.['nextCursor'];
    if (out.length >= MAX_LIST_ENTRIES) {
      if (typeof next === 'string' && next !== '') warn(`${spec.method}: only the first ${MAX_LIST_ENTRIES} entries are kept`, { upstream });
      break;
    }
    if (typeof next !== 'string' || next === '') break;
    cursor = next;
  }
  if (skipped > 0) warn(`${spec.method} listed entries without a string ${spec.key}; skipped`, { upstream, skipped });
  return out;
}

/** The capabilities a client of the hub may use, from the ready upstreams' declarations. */
export function mergeCapabilities(declared: Iterable<Record<string, unknown>>): ListCapabilities {
  const merged: ListCapabilities = { resources: false, subscribe: false, prompts: false, completions: false, logging: false };
  for (const caps of declared) {
    const resources = caps['resources'];
    if (isObject(resources)) {
      merged.resources = true;
      if (resources['subscribe'] === true) merged.subscribe = true;
    }
    if (isObject(caps['prompts'])) merged.prompts = true;
    if (isObject(caps['completions'])) merged.completions = true;
    if (isObject(caps['logging'])) merged.logging = true;
  }
  return merged;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
