/**
 * `repo` (REFERENCE §6.4): repositories, their status, GitHub PRs/issues through `gh`, worktrees
 * and the project's progress journal. Worktree actions call the same core as HTTP /worktrees
 * (repos/worktrees.ts); `spawn_session` starts a shell in the new worktree, and Claude Code callers
 * get `cc_agent_hint` (they cannot change directory mid-session).
 */
import { Type } from 'typebox';

import { ApiError } from '../../../shared/apiError.js';
import type { ProgressJournal } from '../../progress/progressJournal.js';
import type { SessionService } from '../../sessions/sessionService.js';
import type { GhCli } from '../../repos/ghCli.js';
import { changedFiles, repoInfo } from '../../repos/gitQueries.js';
import { toplevelOf } from '../../repos/gitRunner.js';
import { repoPathArg } from '../../repos/repoArgs.js';
import type { RepoRegistry } from '../../repos/repoRegistry.js';
import type { WorktreeManager } from '../../repos/worktrees.js';
import { callerOrigin, type CallerOriginDeps } from './callerOrigin.js';
import { defineTool, describeArgument, requireAction, ToolError } from './nativeTool.js';
import type { CallerContext, NativeTool } from './nativeTool.js';

export interface RepoToolDeps extends CallerOriginDeps {
  repos: RepoRegistry;
  worktrees: WorktreeManager;
  gh: GhCli;
  sessions: SessionService;
  progressJournal: ProgressJournal;
  /** Whether an MCP protocol session's client is Claude Code (set at initialize). */
  isClaudeCode: (mcpSessionId: string) => boolean;
}

const ISSUE_FILTERS: Record<string, string[]> = { assigned: ['--assignee', '@me'], created: ['--author', '@me'], mentioned: ['--mention', '@me'], all: [] };
const PROGRESS_INPUT_KEYS = ['blockedOnly', 'ptyId', 'limit', 'cursor'];
const PROGRESS_LIMIT_DEFAULT = 8;

function bool(args: Record<string, unknown>, key: string, dflt: boolean): boolean {
  const v = args[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw new ToolError(`'${key}' must be a boolean, got ${describeArgument(v)}`);
  return v;
}

function optionalString(args: Record<string, unknown>, key: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new ToolError(`'${key}' must be a string, got ${describeArgument(v)}`);
  return v;
}

function requiredPath(args: Record<string, unknown>, action: string): string {
  if (args['path'] === undefined || args['path'] === null || args['path'] === '')
    throw new ToolError(`repo action=${action} requires 'path' (an absolute repository path)`);
  return repoPathArg(args['path'], 'path');
}

function issueNumber(args: Record<string, unknown>): string {
  const n = args['issue_number'];
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new ToolError(`'issue_number' must be a positive integer, got ${describeArgument(n)}`);
  return String(n);
}

function ccHint(path: string): Record<string, string> {
  return {
    worktree_path: path,
    suggested_prompt: `Work in the worktree at \`${path}\`. Use absolute paths under ${path} for ALL file operations (Read, Edit, Write, Glob, Grep), and run shell commands as \`cd ${path} && …\`: your own working directory stays where it was.`,
  };
}

export function createRepoTool(deps: RepoToolDeps): NativeTool {
  const activeRepo = async (caller: CallerContext): Promise<string | null> => {
    const cwd = callerOrigin(caller, deps).origin_repo_path;
    return cwd === undefined ? null : toplevelOf(cwd);
  };

  const handlers: Record<string, (args: Record<string, unknown>, caller: CallerContext) => Promise<Record<string, unknown> | unknown[]>> = {
    list: async () => {
      await deps.repos.discover();
      return { repos: deps.repos.list() };
    },
    active: async (_args, caller) => {
      const path = await activeRepo(caller);
      return { repo: path === null ? null : await repoInfo(path) };
    },
    status: async (args, caller) => {
      const path = args['path'] !== undefined ? repoPathArg(args['path'], 'path') : await activeRepo(caller);
      if (path === null) throw new ToolError("repo action=status needs 'path': the caller has no repository of its own");
      const [info, files] = await Promise.all([repoInfo(path), changedFiles(path).catch(() => [])]);
      return { ...info, changed_files: files };
    },
    prs: async (args) => ({
      prs: await deps.gh.json(requiredPath(args, 'prs'), [
        'pr',
        'list',
        '--state',
        'open',
        '--limit',
        '100',
        '--json',
        'number,title,state,headRefName,url,isDraft,reviewDecision',
      ]),
    }),
    issues: async (args) => {
      const filter = optionalString(args, 'filter') ?? 'assigned';
      const f = ISSUE_FILTERS[filter];
      if (!f) throw new ToolError(`'filter' must be one of ${Object.keys(ISSUE_FILTERS).join(', ')}`);
      return { issues: await deps.gh.json(requiredPath(args, 'issues'), ['issue', 'list', ...f, '--json', 'number,title,state,url,labels']) };
    },
    close_issue: async (args) => {
      await deps.gh.call(requiredPath(args, 'close_issue'), ['issue', 'close', issueNumber(args)]);
      return { ok: true };
    },
    reopen_issue: async (args) => {
      await deps.gh.call(requiredPath(args, 'reopen_issue'), ['issue', 'reopen', issueNumber(args)]);
      return { ok: true };
    },
    worktree_list: async (args) => ({ worktrees: await deps.worktrees.list([requiredPath(args, 'worktree_list')]) }),
    worktree_create: async (args, caller) => {
      const created = await deps.worktrees.create({
        base_repo: requiredPath(args, 'worktree_create'),
        branch_name: optionalString(args, 'branch'),
        base_ref: optionalString(args, 'base_ref'),
        creator_session: caller.tuicSession ?? caller.boundSessionId ?? undefined,
      });
      const out: Record<string, unknown> = { ...created };
      if (bool(args, 'spawn_session', false)) {
        const session = await deps.sessions.create({ cwd: created.worktree_path });
        out['session_id'] = session.session_id;
      }
      if (caller.mcpSessionId !== null && deps.isClaudeCode(caller.mcpSessionId)) out['cc_agent_hint'] = ccHint(created.worktree_path);
      return out;
    },
    worktree_remove: async (args) => {
      const path = requiredPath(args, 'worktree_remove');
      const id = optionalString(args, 'workspace_id') ?? optionalString(args, 'branch');
      if (id === undefined) throw new ToolError("repo action=worktree_remove requires 'workspace_id'");
      const force = bool(args, 'force', false);
      const r = await deps.worktrees.remove(path, id, { force, deleteBranch: bool(args, 'delete_branch', !force) });
      return {
        ok: true,
        removal_rule: r.removal_rule,
        ...(r.branch_delete_warning ? { branch_delete_warning: r.branch_delete_warning } : {}),
        ...(r.discarded_files.length > 0 ? { discarded_files: r.discarded_files } : {}),
      };
    },
    progress_list: async (args) => {
      const project = requiredPath(args, 'progress_list');
      const input = args['input'] ?? {};
      if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ToolError("progress_invalid_request: 'input' must be an object");
      const unknown = Object.keys(input).filter((k) => !PROGRESS_INPUT_KEYS.includes(k));
      if (unknown.length > 0) throw new ToolError(`progress_invalid_request: unknown input field(s): ${unknown.join(', ')}`);
      const rawLimit = (input as Record<string, unknown>)['limit'];
      if (rawLimit !== undefined && (typeof rawLimit !== 'number' || !Number.isInteger(rawLimit)))
        throw new ToolError('progress_invalid_request: limit must be an integer');
      const limit = Math.min(100, Math.max(1, (rawLimit as number | undefined) ?? PROGRESS_LIMIT_DEFAULT));
      const page = await deps.progressJournal.list({ project, limit: 100_000 });
      let entries = page.entries;
      if ((input as Record<string, unknown>)['blockedOnly'] === true) entries = entries.filter((e) => e.kind === 'blocked');
      const ptyId = (input as Record<string, unknown>)['ptyId'];
      if (typeof ptyId === 'string') entries = entries.filter((e) => e.session_id === ptyId);
      const cursor = (input as Record<string, unknown>)['cursor'];
      const start = typeof cursor === 'string' && /^\d+$/.test(cursor) ? Number(cursor) : 0;
      const pageEntries = entries.slice(start, start + limit).map((e) => (e.session_id ? { ...e, ptyId: e.session_id } : e));
      const ptyIds = [...new Set(entries.map((e) => e.session_id).filter((s): s is string => typeof s === 'string'))];
      return { project, entries: pageEntries, total: entries.length, nextCursor: start + limit < entries.length ? String(start + limit) : null, ptyIds };
    },
  };

  const tool: NativeTool = defineTool({
    name: 'repo',
    summary:
      'Repositories tuicd knows, their git status, GitHub PRs and issues (through gh), isolated worktrees for parallel agents, and the project progress journal.',
    actions: {
      list: 'registered repositories and those of live sessions',
      active: "the caller's own repository (from its session's cwd)",
      prs: 'open pull requests (path; needs gh)',
      status: 'branch, state and changed files (path, default the active repo)',
      issues: 'GitHub issues (path, filter: assigned|created|mentioned|all; needs gh)',
      close_issue: 'close an issue (path, issue_number; needs gh)',
      reopen_issue: 'reopen an issue (path, issue_number; needs gh)',
      worktree_list: "a repository's linked worktrees (path)",
      worktree_create: 'new worktree on a new or existing branch (path, branch?, base_ref?, spawn_session?)',
      worktree_remove: 'remove a worktree (path, workspace_id, force?, delete_branch?)',
      progress_list: "the project's progress entries, newest first (path, input?)",
    },
    notes:
      'force=true discards uncommitted work in the worktree; ask the user first. delete_branch defaults to true unless force; an unmerged branch is kept and branch_delete_warning says so.',
    properties: {
      path: Type.Optional(Type.String({ description: 'Absolute repository path' })),
      workspace_id: Type.Optional(Type.String({ description: 'Worktree id (worktree_remove)' })),
      branch: Type.Optional(Type.String({ description: 'Branch name (worktree_create; generated when omitted)' })),
      base_ref: Type.Optional(Type.String({ description: 'Commit the new branch starts from (default HEAD)' })),
      spawn_session: Type.Optional(Type.Boolean({ description: 'Start a terminal session in the new worktree (default false)' })),
      force: Type.Optional(Type.Boolean({ description: 'Discard uncommitted work (default false)' })),
      delete_branch: Type.Optional(Type.Boolean({ description: 'Delete the branch too (default true unless force)' })),
      filter: Type.Optional(Type.String({ description: 'issues filter (default assigned)' })),
      issue_number: Type.Optional(Type.Integer({ description: 'Issue number' })),
      input: Type.Optional(
        Type.Object(
          {
            blockedOnly: Type.Optional(Type.Boolean()),
            ptyId: Type.Optional(Type.String()),
            limit: Type.Optional(Type.Integer({ description: '1-100, default 8' })),
            cursor: Type.Optional(Type.String()),
          },
          { description: 'progress_list paging and filters', additionalProperties: false } as never,
        ),
      ),
    },
    handler: async (args, caller) => {
      const action = requireAction(tool, args);
      try {
        return await handlers[action]!(args, caller);
      } catch (err) {
        // Route-layer refusals (bad path, 409 dirty worktree, 503 no gh) read the same over MCP.
        if (err instanceof ApiError) throw new ToolError(err.message, { ...err.extra, code: err.code });
        throw err;
      }
    },
  });
  return tool;
}
