/**
 * `tuicd install-bridge [--dry-run] [--uninstall]`: writes (or removes) the `tuicommander` MCP server
 * entry, pointing at this install's launcher, in the config of every agent installed here.
 *
 * Per agent: a file that cannot be parsed is refused and left byte for byte (reported, not a failure:
 * exit 0); an entry already as wanted is left alone (no write, no backup); any other change backs the
 * file up beside itself first. Exit 1 only when something could not be done (I/O errors, an edit that
 * failed its check), after every other agent was still handled.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

import type { Paths } from '../../shared/paths.js';
import { agentEnv, agentTable, configFile, ENTRY_KEY, isInstalled } from './agents.js';
import type { AgentEnv, AgentSpec } from './agents.js';
import { checkParent, EditUnverified, ParseRefusal, readEntry, removeEntry, setEntry, ShapeRefusal } from './editor.js';
import type { ConfigEditor, ConfigFormat } from './editor.js';
import { backup, removeIfPresent, writeAtomic } from './files.js';
import { jsonEditor } from './jsonEditor.js';
import { defaultBridgeScript, ensureLauncher, launcherPath, launcherScript, removeLauncher } from './launcher.js';
import type { LauncherAction } from './launcher.js';
import { loadState, saveState, statePath } from './state.js';
import type { InstallState } from './state.js';
import { tomlEditor } from './tomlEditor.js';
import { yamlEditor } from './yamlEditor.js';

const EDITORS: Record<ConfigFormat, ConfigEditor> = { json: jsonEditor, toml: tomlEditor, yaml: yamlEditor };
const BOM = '\uFEFF';

export interface InstallBridgeOptions {
  paths: Paths;
  dryRun?: boolean;
  uninstall?: boolean;
  /** HOME, XDG_CONFIG_HOME and PATH are read from here (default process.env). */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** The Node the launcher runs (default: this one). */
  nodePath?: string;
  /** The bridge script the launcher runs (default: this install's dist/bridge/cli.js). */
  bridgeScript?: string;
  now?: () => Date;
}

export type AgentStatus = 'installed' | 'updated' | 'unchanged' | 'removed' | 'not present' | 'skipped' | 'refused' | 'failed';

export interface AgentResult {
  id: string;
  name: string;
  file: string;
  status: AgentStatus;
  /** Why it was skipped, refused or failed; or a note ("new file", "file removed"). */
  detail?: string;
  backup?: string;
  /** refused: it parses, but its shape leaves no place for the entry. */
  unusable?: boolean;
}

export interface InstallBridgeReport {
  exitCode: number;
  launcher: { path: string; action: LauncherAction | 'failed'; detail?: string };
  agents: AgentResult[];
  lines: string[];
}

interface Ctx {
  dryRun: boolean;
  now: () => Date;
  state: InstallState;
  launcher: string;
}

function readText(file: string): { text: string; bom: string } {
  const raw = readFileSync(file, 'utf8');
  return raw.startsWith(BOM) ? { text: raw.slice(BOM.length), bom: BOM } : { text: raw, bom: '' };
}

function installOne(agent: AgentSpec, ae: AgentEnv, ctx: Ctx): AgentResult {
  const { file, exists } = configFile(agent);
  const base = { id: agent.id, name: agent.name, file };
  if (!isInstalled(agent, ae)) return { ...base, status: 'skipped', detail: 'not installed' };
  const ed = EDITORS[agent.format];
  const value = agent.entry(ctx.launcher);
  if (!exists) {
    if (!ctx.dryRun) {
      writeAtomic(file, ed.create(agent.parent, ENTRY_KEY, value));
      ctx.state.files[file] = { created_file: true, created_parent: true };
    }
    return { ...base, status: 'installed', detail: 'new file' };
  }
  const { text, bom } = readText(file);
  const doc = ed.parse(text);
  checkParent(doc, agent.parent);
  // A parent that is there but empty (`extensions:` in YAML) was not added by us: uninstall keeps it.
  const hadParent = doc[agent.parent] !== undefined;
  const current = readEntry(doc, agent.parent, ENTRY_KEY);
  if (isDeepStrictEqual(current, value)) return { ...base, status: 'unchanged' };
  const out = setEntry(ed, text, agent.parent, ENTRY_KEY, value);
  const result: AgentResult = { ...base, status: current === undefined ? 'installed' : 'updated' };
  if (!ctx.dryRun) {
    result.backup = backup(file, ctx.now());
    writeAtomic(file, bom + out);
    if (!hadParent) ctx.state.files[file] = { ...ctx.state.files[file], created_parent: true };
  }
  return result;
}

function uninstallOne(agent: AgentSpec, ctx: Ctx): AgentResult {
  const { file, exists } = configFile(agent);
  const base = { id: agent.id, name: agent.name, file };
  const record = ctx.state.files[file] ?? {};
  const forget = (): void => {
    if (!ctx.dryRun) delete ctx.state.files[file];
  };
  if (!exists) {
    forget();
    return { ...base, status: 'not present', detail: 'no config file' };
  }
  const ed = EDITORS[agent.format];
  const { text, bom } = readText(file);
  const doc = ed.parse(text);
  checkParent(doc, agent.parent);
  if (readEntry(doc, agent.parent, ENTRY_KEY) === undefined) {
    forget();
    return { ...base, status: 'not present' };
  }
  const out = removeEntry(ed, text, agent.parent, ENTRY_KEY, record.created_parent === true);
  const result: AgentResult = { ...base, status: 'removed' };
  if (record.created_file === true && ed.isEmpty(out)) {
    // Created by install-bridge and holding nothing else: it goes as it came, without a backup.
    result.detail = 'file removed: install-bridge had created it';
    if (!ctx.dryRun) removeIfPresent(file);
  } else if (!ctx.dryRun) {
    result.backup = backup(file, ctx.now());
    writeAtomic(file, bom + out);
  }
  forget();
  return result;
}

function describe(r: AgentResult, dryRun: boolean): string {
  const verb: Record<AgentStatus, string> = {
    installed: dryRun ? 'would install' : 'installed',
    updated: dryRun ? 'would update' : 'updated',
    removed: dryRun ? 'would remove' : 'removed',
    unchanged: 'unchanged',
    'not present': 'not present',
    skipped: 'skipped',
    refused: 'refused',
    failed: 'failed',
  };
  if (r.status === 'skipped') return `${r.name}: skipped: ${r.detail ?? ''}`;
  if (r.status === 'refused') return `${r.name}: refused: ${r.unusable ? 'cannot use' : 'cannot parse'} ${r.file}: ${r.detail ?? ''} (left untouched)`;
  if (r.status === 'failed') return `${r.name}: failed: ${r.file}: ${r.detail ?? ''}`;
  const notes = [r.detail, r.backup !== undefined ? `backup ${r.backup}` : undefined].filter((n) => n !== undefined);
  return `${r.name}: ${verb[r.status]} ${r.file}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

function describeLauncher(l: InstallBridgeReport['launcher'], dryRun: boolean): string {
  const verb: Record<InstallBridgeReport['launcher']['action'], string> = {
    written: dryRun ? 'would write' : 'written',
    removed: dryRun ? 'would remove' : 'removed',
    unchanged: 'unchanged',
    absent: 'not present',
    failed: 'failed:',
  };
  return `launcher: ${verb[l.action]} ${l.path}${l.detail !== undefined ? ` (${l.detail})` : ''}`;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function runInstallBridge(opts: InstallBridgeOptions): InstallBridgeReport {
  const dryRun = opts.dryRun === true;
  const ae = agentEnv(opts.env ?? process.env, opts.platform);
  const launcher = launcherPath(opts.paths);
  const stateFile = statePath(opts.paths);
  const ctx: Ctx = { dryRun, now: opts.now ?? (() => new Date()), state: loadState(stateFile), launcher };
  const report: InstallBridgeReport = { exitCode: 0, launcher: { path: launcher, action: 'unchanged' }, agents: [], lines: [] };
  if (dryRun) report.lines.push('dry run: nothing is written');

  if (!opts.uninstall) {
    // The launcher first: no agent entry ever points at a launcher that is not there.
    const bridgeScript = opts.bridgeScript ?? defaultBridgeScript();
    try {
      report.launcher.action = ensureLauncher(launcher, launcherScript(opts.paths, opts.nodePath ?? process.execPath, bridgeScript), dryRun);
      if (!existsSync(bridgeScript)) report.launcher.detail = `warning: ${bridgeScript} does not exist; build first (npm run build)`;
    } catch (err) {
      report.launcher = { path: launcher, action: 'failed', detail: message(err) };
      report.exitCode = 1;
      report.lines.push(describeLauncher(report.launcher, dryRun), 'no agent config changed');
      return report;
    }
    report.lines.push(describeLauncher(report.launcher, dryRun));
  }

  for (const agent of agentTable(ae)) {
    let result: AgentResult;
    try {
      result = opts.uninstall ? uninstallOne(agent, ctx) : installOne(agent, ae, ctx);
    } catch (err) {
      const file = configFile(agent).file;
      if (err instanceof ParseRefusal) {
        result = { id: agent.id, name: agent.name, file, status: 'refused', detail: err.message };
        if (err instanceof ShapeRefusal) result.unusable = true;
      } else {
        result = { id: agent.id, name: agent.name, file, status: 'failed', detail: err instanceof EditUnverified ? err.message : message(err) };
        report.exitCode = 1;
      }
    }
    report.agents.push(result);
    report.lines.push(describe(result, dryRun));
  }

  if (!dryRun) {
    try {
      saveState(stateFile, ctx.state);
    } catch (err) {
      report.lines.push(`state: failed: ${stateFile}: ${message(err)}`);
      report.exitCode = 1;
    }
  }
  if (opts.uninstall && report.exitCode !== 0) {
    // An entry that could not be removed still names the launcher: it stays until a run removes them all.
    report.lines.push(`launcher: kept ${launcher} (not every entry could be removed)`);
  } else if (opts.uninstall) {
    try {
      report.launcher.action = removeLauncher(launcher, dryRun);
    } catch (err) {
      report.launcher = { path: launcher, action: 'failed', detail: message(err) };
      report.exitCode = 1;
    }
    report.lines.push(describeLauncher(report.launcher, dryRun));
  }
  return report;
}
