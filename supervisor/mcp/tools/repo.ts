/**
 * `repo`: repositories, their status, GitHub PRs/issues through `gh`, worktrees and the project's
 * progress journal. Worktree actions call the same core as HTTP /worktrees (repos/worktrees.ts);
 * `spawn_session` starts a shell in the new worktree, and Claude Code callers get `cc_agent_hint`
 * (they cannot change directory mid-session). Errors of that core (a bad path, a dirty worktree,
 * no gh) reach the caller as tool errors under their own codes.
 */
import { Type } from 'typebox';
import type { TSchema } from 'typebox';

import { RootGate } from '../../fs/rootGate.js';
import type { ProgressJournal } from '../../progress/progressJournal.js';
import type { SessionService } from '../../sessions/sessionService.js';
import type { GhCli } from '../../repos/ghCli.js';
import { changedFiles, repoInfo } from '../../repos/gitQueries.js';
import { toplevelOf } from '../../repos/gitRunner.js';
import { repoPathArg } from '../../repos/repoArgs.js';
import type { RepoRegistry } from '../../repos/repoRegistry.js';
import type { WorktreeManager } from '../../repos/worktrees.js';
import { callerOrigin, type CallerOriginDeps } from './callerOrigin.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { CallerContext, NativeTool } from './nativeTool.js';

export interface RepoToolDeps extends CallerOriginDeps {
  repos: RepoRegistry;
  worktrees: WorktreeManager;
  gh: GhCli;
  sessions: SessionService;
  progressJournal: ProgressJournal;
  /** Whether an MCP protocol session's client is Claude Code (set at initialize). */
  isClaudeCode: (mcpSessionId: string) => boolean;
  /** The root gate every `path` passes (the routes' own); absent: one over the known repositories, worktrees and live sessions' directories. */
  gate?: RootGate;
}

const ISSUE_FILTERS: Record<string, string[]> = { assigned: ['--assignee', '@me'], created: ['--author', '@me'], mentioned: ['--mention', '@me'], all: [] };
const PROGRESS_LIMIT_DEFAULT = 8;

/** The arguments as the schema checked them. */
interface RepoArgs {
  action: string;
  path?: string;
  workspace_id?: string;
  branch?: string;
  base_ref?: string;
  spawn_session?: boolean;
  force?: boolean;
  delete_branch?: boolean;
  filter?: string;
  issue_number?: number;
  input?: { blockedOnly?: boolean; ptyId?: string; limit?: number; cursor?: string };
}

/** An optional text argument: "" counts as not given, as it always has. */
function optionalString(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

/** The repository the action needs (the same checks as the repository routes: absolute, no traversal, a directory). */
function requiredPath(gate: RootGate, args: RepoArgs): string {
  if (args.path === undefined || args.path === '')
    throw new ToolError('invalid_input', `repo action=${args.action} requires 'path' (an absolute repository path)`, { field: 'path' });
  return repoPathArg(gate, args.path, 'path');
}

function issueNumber(args: RepoArgs): string {
  if (args.issue_number === undefined)
    throw new ToolError('invalid_input', `repo action=${args.action} requires 'issue_number' (a positive integer)`, { field: 'issue_number' });
  return String(args.issue_number);
}

/** `'<key>' must be a <what>, got <value>`: the repo tool's wording for a mistyped argument. */
const mistyped = (key: string, what: string) => `'${key}' must be ${what}, got {got}`;
const textArg = (key: string, description: string) => Type.String({ description, errorMessage: mistyped(key, 'a string') });
const flagArg = (key: string, description: string) => Type.Boolean({ description, errorMessage: mistyped(key, 'a boolean') });
/** progress_list's refusals name their kind first, as they always have (clients match on the prefix). */
const progressInvalid = (what: string) => `progress_invalid_request: ${what}`;

/** progress_list's `input`; `additional` says what a field outside the four gets. */
const progressInput = (additional: false | TSchema) =>
  Type.Object(
    {
      blockedOnly: Type.Optional(Type.Boolean({ errorMessage: progressInvalid('blockedOnly must be a boolean') })),
      ptyId: Type.Optional(Type.String({ errorMessage: progressInvalid('ptyId must be a string') })),
      // Any integer: clamped to 1-100.
      limit: Type.Optional(Type.Integer({ description: '1-100, default 8', errorMessage: progressInvalid('limit must be an integer') })),
      cursor: Type.Optional(Type.String({ errorMessage: progressInvalid('cursor must be a string') })),
    },
    { description: 'progress_list paging and filters', additionalProperties: additional, errorMessage: progressInvalid("'input' must be an object") } as never,
  );

function ccHint(path: string): Record<string, string> {
  return {
    worktree_path: path,
    suggested_prompt: `Work in the worktree at \`${path}\`. Use absolute paths under ${path} for ALL file operations (Read, Edit, Write, Glob, Grep), and run shell commands as \`cd ${path} && …\`: your own working directory stays where it was.`,
  };
}

export function createRepoTool(deps: RepoToolDeps): NativeTool {
  const gate =
    deps.gate ??
    new RootGate(() => [
      ...deps.repos.roots(),
      ...deps.worktrees.knownWorktreePaths(),
      ...deps.sessions
        .list()
        .filter((r) => r.exit === null)
        .map((r) => r.cwd),
    ]);
  const activeRepo = async (caller: CallerContext): Promise<string | null> => {
    const cwd = callerOrigin(caller, deps).origin_repo_path;
    return cwd === undefined ? null : toplevelOf(cwd);
  };

  const handlers: Record<string, (args: RepoArgs, caller: CallerContext) => Promise<Record<string, unknown> | unknown[]>> = {
    list: async () => {
      await deps.repos.discover();
      return { repos: deps.repos.list() };
    },
    active: async (_args, caller) => {
      const path = await activeRepo(caller);
      return { repo: path === null ? null : await repoInfo(path) };
    },
    status: async (args, caller) => {
      const path = args.path !== undefined ? repoPathArg(gate, args.path, 'path') : await activeRepo(caller);
      if (path === null) throw new ToolError('invalid_input', "repo action=status needs 'path': the caller has no repository of its own", { field: 'path' });
      const [info, files] = await Promise.all([repoInfo(path), changedFiles(path).catch(() => [])]);
      return { ...info, changed_files: files };
    },
    prs: async (args) => ({
      prs: await deps.gh.json(requiredPath(gate, args), [
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
      const filter = ISSUE_FILTERS[optionalString(args.filter) ?? 'assigned']!;
      return { issues: await deps.gh.json(requiredPath(gate, args), ['issue', 'list', ...filter, '--json', 'number,title,state,url,labels']) };
    },
    close_issue: async (args) => {
      await deps.gh.call(requiredPath(gate, args), ['issue', 'close', issueNumber(args)]);
      return { ok: true };
    },
    reopen_issue: async (args) => {
      await deps.gh.call(requiredPath(gate, args), ['issue', 'reopen', issueNumber(args)]);
      return { ok: true };
    },
    worktree_list: async (args) => ({ worktrees: await deps.worktrees.list([requiredPath(gate, args)]) }),
    worktree_create: async (args, caller) => {
      const created = await deps.worktrees.create({
        base_repo: requiredPath(gate, args),
        branch_name: optionalString(args.branch),
        base_ref: optionalString(args.base_ref),
        creator_session: caller.tuicSession ?? caller.boundSessionId ?? undefined,
      });
      const out: Record<string, unknown> = { ...created };
      if (args.spawn_session === true) {
        const session = await deps.sessions.create({ cwd: created.worktree_path });
        out['session_id'] = session.session_id;
      }
      if (caller.mcpSessionId !== null && deps.isClaudeCode(caller.mcpSessionId)) out['cc_agent_hint'] = ccHint(created.worktree_path);
      return out;
    },
    worktree_remove: async (args) => {
      const path = requiredPath(gate, args);
      const id = optionalString(args.workspace_id) ?? optionalString(args.branch);
      if (id === undefined) throw new ToolError('invalid_input', "repo action=worktree_remove requires 'workspace_id'", { field: 'workspace_id' });
      const force = args.force ?? false;
      const r = await deps.worktrees.remove(path, id, { force, deleteBranch: args.delete_branch ?? !force });
      return {
        ok: true,
        removal_rule: r.removal_rule,
        ...(r.branch_delete_warning ? { branch_delete_warning: r.branch_delete_warning } : {}),
        ...(r.discarded_files.length > 0 ? { discarded_files: r.discarded_files } : {}),
      };
    },
    progress_list: async (args) => {
      const project = requiredPath(gate, args);
      const input = args.input ?? {};
      const limit = Math.min(100, Math.max(1, input.limit ?? PROGRESS_LIMIT_DEFAULT));
      const page = await deps.progressJournal.list({ project, limit: 100_000 });
      let entries = page.entries;
      if (input.blockedOnly === true) entries = entries.filter((e) => e.kind === 'blocked');
      const { ptyId, cursor } = input;
      if (ptyId !== undefined) entries = entries.filter((e) => e.session_id === ptyId);
      const start = cursor !== undefined && /^\d+$/.test(cursor) ? Number(cursor) : 0;
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
      path: Type.Optional(textArg('path', 'Absolute repository path')),
      workspace_id: Type.Optional(textArg('workspace_id', 'Worktree id (worktree_remove)')),
      branch: Type.Optional(textArg('branch', 'Branch name (worktree_create; generated when omitted)')),
      base_ref: Type.Optional(textArg('base_ref', 'Commit the new branch starts from (default HEAD)')),
      spawn_session: Type.Optional(flagArg('spawn_session', 'Start a terminal session in the new worktree (default false)')),
      force: Type.Optional(flagArg('force', 'Discard uncommitted work (default false)')),
      delete_branch: Type.Optional(flagArg('delete_branch', 'Delete the branch too (default true unless force)')),
      filter: Type.Optional(
        Type.String({
          enum: [...Object.keys(ISSUE_FILTERS), ''],
          description: 'issues filter (default assigned)',
          errorMessage: `'filter' must be one of ${Object.keys(ISSUE_FILTERS).join(', ')}`,
        } as never),
      ),
      issue_number: Type.Optional(Type.Integer({ minimum: 1, description: 'Issue number', errorMessage: mistyped('issue_number', 'a positive integer') })),
      input: Type.Optional(progressInput(false)),
    },
    // The same schema, with the refusal of an unknown field in its own words (it names the field).
    checkedAs: { input: Type.Optional(progressInput(Type.Never({ errorMessage: progressInvalid('unknown input field(s): {field}') }))) },
    handler: (args, caller) => handlers[args['action'] as string]!(args as unknown as RepoArgs, caller),
  });
  return tool;
}
