/**
 * The tool catalog behind /mcp (ToolCatalogView): which tools each surface lists, pre-serialized
 * once per change, and the one dispatch entry point that re-applies the config filters on every
 * call (the collapsed surface's search_tools only discovers; it never gates dispatch, so dispatch
 * must). Every refusal and failure is a tool error `{error, code, ...}` with isError true.
 */
import type { ApiErrorCode } from '../../shared/apiError.js';
import { cancellationOf } from '../../shared/cancellation.js';
import { toDisposable } from '../../shared/disposable.js';
import type { Disposable } from '../../shared/disposable.js';
import { textEnvelope } from '../../shared/mcpEnvelope.js';
import type { ToolCallOutcome } from '../../shared/mcpEnvelope.js';
import type { ToolCatalogView, ToolSurface } from './surface.js';
import type { UpstreamToolSource } from './upstreamTools.js';
import { toolErrorBody } from './tools/nativeTool.js';
import type { CallerContext, NativeTool, ToolDefinition } from './tools/nativeTool.js';
import { createMetaTools, isDispatchedResult, isMetaToolName } from './tools/meta.js';
import type { MetaToolSource, MetaTools } from './tools/meta.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

/** The config fields that shape the surfaces. */
export interface CatalogSettings {
  collapseTools: boolean;
  disabledNativeTools: readonly string[];
  progressTracking: boolean;
  /** ai_terminal_mcp_enabled: the ai_terminal_* tools are listed and callable only when true (absent: off). */
  aiTerminalEnabled?: boolean;
}

/** Tools gated by ai_terminal_mcp_enabled rather than disabled_native_tools. */
const AI_TERMINAL_PREFIX = 'ai_terminal_';
const AI_TERMINAL_OFF = (name: string) =>
  `Tool '${name}' is off: the ai_terminal_* tools need ai_terminal_mcp_enabled set to true in config.json (or PUT /config {"ai_terminal_mcp_enabled": true})`;

/** The tool kept direct in the collapsed surface, and hidden everywhere when progress_tracking is off. */
const PROGRESS_TOOL = 'progress';

/** Upstream tools are `{upstream}__{tool}`; native names never contain it. */
const UPSTREAM_SEPARATOR = '__';

const NARROWED_LISTS_KEPT = 64;

/** Natives are always visible; an upstream tool only when its upstream is in the allowlist (if there is one). */
function upstreamAllowed(name: string, allowlist: ReadonlySet<string> | null | undefined): boolean {
  if (!allowlist) return true;
  const separator = name.indexOf(UPSTREAM_SEPARATOR);
  return separator < 0 || allowlist.has(name.slice(0, separator));
}

/** A refusal the catalog makes itself, in the tool error shape handlers' errors get. */
function toolError(code: ApiErrorCode, message: string): ToolCallOutcome {
  return textEnvelope({ error: message, code });
}

/** Two runs of JSON array elements as one. */
function joinElements(a: string, b: string): string {
  return a !== '' && b !== '' ? `${a},${b}` : a + b;
}

export interface CatalogLog {
  error(obj: object, msg: string): void;
}

export interface ToolCatalogOptions {
  nativeTools: readonly NativeTool[];
  settings: () => CatalogSettings;
  log?: CatalogLog;
  /** The meta-tools factory; tests may substitute one. */
  metaTools?: (source: MetaToolSource) => MetaTools;
  /** The proxy hub's merged tools; absent = natives only. */
  upstreams?: UpstreamToolSource;
}

export class ToolCatalog implements ToolCatalogView, Disposable {
  private readonly natives: ReadonlyMap<string, NativeTool>;
  private readonly meta: MetaTools;
  private readonly metaByName: ReadonlyMap<string, NativeTool>;
  private readonly listeners = new Set<() => void>();
  private enabled: NativeTool[] = [];
  private disabled = new Set<string>();
  /** The ai_terminal_* tools while ai_terminal_mcp_enabled is off (refused in their own words). */
  private switchedOff = new Set<string>();
  private readonly listJson: Record<ToolSurface, string> = { classic: '{"tools":[]}', collapsed: '{"tools":[]}' };
  /** The same lists as UTF-8 bytes with the response's closing `}`: what a tools/list answer sends after its prefix. */
  private readonly listBytes: Record<ToolSurface, Buffer> = {
    classic: Buffer.from(`${this.listJson.classic}}`),
    collapsed: Buffer.from(`${this.listJson.collapsed}}`),
  };
  /** Classic lists narrowed to a project's upstream allowlist, by allowlist; dropped whenever the lists change. */
  private readonly narrowedBytes = new Map<string, Buffer>();
  /** The natives part of the classic list (JSON array elements), kept for the narrowed lists. */
  private nativesJson = '';
  /** A collapse_tools toggle changes what sessions see without changing either list. */
  private lastCollapse = false;
  private upstreamSubscription: Disposable | null = null;

  constructor(private readonly opts: ToolCatalogOptions) {
    const natives = new Map<string, NativeTool>();
    for (const tool of opts.nativeTools) {
      const name = tool.definition.name;
      if (name.includes(UPSTREAM_SEPARATOR) || isMetaToolName(name)) throw new Error(`native tool name '${name}' is reserved`);
      if (natives.has(name)) throw new Error(`duplicate native tool '${name}'`);
      natives.set(name, tool);
    }
    this.natives = natives;
    this.meta = (opts.metaTools ?? createMetaTools)({
      corpus: () => [...this.enabled.map((t) => t.definition), ...(opts.upstreams?.definitions() ?? [])],
      dispatch: (name, args, caller) => this.dispatch(name, args, caller),
      visible: (name, caller) => upstreamAllowed(name, caller.upstreamAllowlist),
    });
    this.metaByName = new Map(this.meta.tools.map((t) => [t.definition.name, t]));
    this.recompute();
    if (opts.upstreams) this.upstreamSubscription = opts.upstreams.onChanged(() => this.refresh());
  }

  surfaceFor(session: { requiresMetaTools: boolean }): ToolSurface {
    return session.requiresMetaTools || this.opts.settings().collapseTools ? 'collapsed' : 'classic';
  }

  toolsListResultJson(surface: ToolSurface): string {
    return this.listJson[surface];
  }

  /** The tools/list answer after its prefix; a project allowlist narrows the upstream tools of the classic list. */
  toolsListResponseTail(surface: ToolSurface, allowlist: ReadonlySet<string> | null = null): Buffer {
    if (allowlist === null || surface === 'collapsed' || !this.opts.upstreams) return this.listBytes[surface];
    const key = [...allowlist].sort().join('\n');
    let bytes = this.narrowedBytes.get(key);
    if (bytes === undefined) {
      // Distinct allowlists are few (one per configured project); the bound only guards against churn.
      if (this.narrowedBytes.size >= NARROWED_LISTS_KEPT) this.narrowedBytes.clear();
      const upstream = this.opts.upstreams.definitions().filter((d) => upstreamAllowed(d.name, allowlist));
      const upstreamJson = JSON.stringify(upstream).slice(1, -1);
      bytes = Buffer.from(`{"tools":[${joinElements(this.nativesJson, upstreamJson)}]}}`);
      this.narrowedBytes.set(key, bytes);
    }
    return bytes;
  }

  /** The enabled non-meta tools, natives then upstream ones, in list order (the meta-tools' corpus). */
  enabledDefinitions(): ToolDefinition[] {
    return [...this.enabled.map((t) => t.definition), ...(this.opts.upstreams?.definitions() ?? [])];
  }

  /** Pending while the upstream settle gate holds the first tools/list; null otherwise. */
  settleGate(): Promise<void> | null {
    return this.opts.upstreams?.settleGate() ?? null;
  }

  /**
   * Re-reads the settings; when either surface's list changed, rebuilds the search index and
   * tells every listener (GET /mcp streams then send notifications/tools/list_changed).
   */
  refresh(): boolean {
    const before = this.fingerprint();
    this.recompute();
    if (this.fingerprint() === before) return false;
    this.meta.rebuild();
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (err) {
        this.opts.log?.error({ err }, 'tools-changed listener failed');
      }
    }
    return true;
  }

  onChanged(listener: () => void): Disposable {
    this.listeners.add(listener);
    return toDisposable(() => this.listeners.delete(listener));
  }

  async call(name: string, args: Record<string, unknown>, caller: CallerContext): Promise<ToolCallOutcome> {
    const metaTool = this.metaByName.get(name);
    if (metaTool) return this.run(metaTool, args, caller);
    return this.dispatch(name, args, caller);
  }

  dispose(): void {
    this.upstreamSubscription?.dispose();
    this.listeners.clear();
  }

  private fingerprint(): string {
    return `${this.lastCollapse}\n${this.listJson.classic}\n${this.listJson.collapsed}`;
  }

  private recompute(): void {
    const settings = this.opts.settings();
    this.lastCollapse = settings.collapseTools;
    this.disabled = new Set(settings.disabledNativeTools);
    if (!settings.progressTracking) this.disabled.add(PROGRESS_TOOL);
    this.switchedOff = new Set(settings.aiTerminalEnabled === true ? [] : [...this.natives.keys()].filter((n) => n.startsWith(AI_TERMINAL_PREFIX)));
    this.enabled = [...this.natives.values()].filter((t) => !this.disabled.has(t.definition.name) && !this.switchedOff.has(t.definition.name));
    const natives = JSON.stringify(this.enabled.map((t) => t.definition)).slice(1, -1);
    const upstream = this.opts.upstreams?.listFragment() ?? '';
    this.nativesJson = natives;
    this.narrowedBytes.clear();
    this.listJson.classic = `{"tools":[${joinElements(natives, upstream)}]}`;
    const collapsed = this.meta.tools.map((t) => t.definition);
    const progress = this.enabled.find((t) => t.definition.name === PROGRESS_TOOL);
    if (progress) collapsed.push(progress.definition);
    this.listJson.collapsed = JSON.stringify({ tools: collapsed });
    this.listBytes.classic = Buffer.from(`${this.listJson.classic}}`);
    this.listBytes.collapsed = Buffer.from(`${this.listJson.collapsed}}`);
  }

  /** Non-meta dispatch: what tools/call and call_tool both reach; re-checks disabled tools every time. */
  private async dispatch(name: string, args: Record<string, unknown>, caller: CallerContext): Promise<ToolCallOutcome> {
    const separator = name.indexOf(UPSTREAM_SEPARATOR);
    if (separator >= 0) {
      const upstream = name.slice(0, separator);
      const tool = name.slice(separator + UPSTREAM_SEPARATOR.length);
      if (upstream === '' || tool === '')
        return toolError('invalid_input', `Tool name '${clipClientInput(name)}' lacks upstream prefix (expected '{upstream}__{tool}')`);
      if (!this.opts.upstreams) return toolError('not_found', `Unknown upstream '${clipClientInput(upstream)}'`);
      const allowlist = caller.upstreamAllowlist;
      if (allowlist && !allowlist.has(upstream)) return toolError('forbidden', `Upstream '${clipClientInput(upstream)}' is not enabled for this project`);
      // The hub re-applies the upstream's allow/deny filter and its breaker on every call.
      return this.opts.upstreams.call(upstream, tool, args, caller.cancellation ?? cancellationOf(caller.signal), caller.clientRoute);
    }
    const tool = this.natives.get(name);
    if (!tool) {
      const available = [...this.enabled.map((t) => t.definition.name), ...this.metaByName.keys()];
      return toolError('not_found', `Unknown tool '${clipClientInput(name)}'. Available: ${available.join(', ')}`);
    }
    if (this.switchedOff.has(name)) return toolError('forbidden', AI_TERMINAL_OFF(name));
    if (this.disabled.has(name)) return toolError('forbidden', `Tool '${name}' is disabled by configuration`);
    return this.run(tool, args, caller);
  }

  /**
   * Runs one handler; nothing it throws or rejects with escapes as anything but an isError result.
   * A ToolError or any other ApiError (domain code's) is the caller's to read, under its own code;
   * anything else is a bug: logged, and answered `internal` naming the tool.
   */
  private async run(tool: NativeTool, args: Record<string, unknown>, caller: CallerContext): Promise<ToolCallOutcome> {
    const name = tool.definition.name;
    try {
      const value = await tool.handler(args, caller);
      return isDispatchedResult(value) ? value : textEnvelope(value);
    } catch (err) {
      const body = toolErrorBody(err);
      if (body !== null) return textEnvelope(body);
      this.opts.log?.error({ err, tool: name }, 'tool handler failed');
      const message = err instanceof Error ? err.message : String(err);
      return toolError('internal', `Tool '${name}' failed: ${message}`);
    }
  }
}
