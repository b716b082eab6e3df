/** The answers of the /worktrees routes (WorktreeManager's results), one schema each. */
import { type TSchema, Type } from 'typebox';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const WarmStateSchema = Type.Object({
  status: Type.Union([Type.Literal('pending'), Type.Literal('done'), Type.Literal('failed'), Type.Literal('skipped')], {
    description: "Copying the repository's git-ignored top-level directories (node_modules, build output) into the new checkout.",
  }),
  warmed_directories: Type.Integer({ minimum: 0 }),
  error: Type.Optional(Type.String()),
});

export const ScriptResultSchema = Type.Object({
  exit_code: Type.Integer({ description: '-1 when a signal ended the script.' }),
  stdout: Type.String(),
  stderr: Type.String(),
});

export const CreatedWorktreeSchema = Type.Object({
  name: Type.String(),
  path: Type.String(),
  worktree_path: Type.String(),
  workspace_id: Type.String({ description: "The checkout's directory name under `<repo>__wt/`." }),
  branch: Type.String(),
  base_repo: Type.String({ description: 'The main repository (a linked worktree given as base_repo is normalized to it).' }),
  base_ref: Type.String(),
  instructions: Type.Object({ warm_artifacts: WarmStateSchema, setup_script: Nullable(ScriptResultSchema) }),
});

export const WorktreeListEntrySchema = Type.Object({
  workspace_id: Type.String(),
  branch: Nullable(Type.String()),
  path: Type.String(),
  base_repo: Type.String(),
  kind: Type.Literal('worktree'),
  detached: Type.Boolean(),
  missing_checkout: Type.Boolean(),
  warm_artifacts: WarmStateSchema,
});

export const WorktreePathsSchema = Type.Record(
  Type.String(),
  Type.Object({
    branch: Nullable(Type.String()),
    path: Type.String(),
    kind: Type.Literal('worktree'),
    warm_artifacts: Type.Object({ status: WarmStateSchema.properties.status }),
  }),
  { description: 'Workspace id → its checkout.' },
);

const lifecycleCommon = {
  untracked_files: Type.Array(Type.String()),
  missing_checkout: Type.Boolean(),
  submodule_unpushed_commits: Type.Array(Type.String()),
  live_sessions: Type.Integer({ minimum: 0 }),
  warnings: Type.Array(Type.String()),
};

export const LifecycleSchema = Type.Union([
  Type.Object(
    {
      dirty_files: Type.Array(Type.String()),
      dirty_fingerprint: Type.String({ description: 'Pass back as expectedFingerprint: a removal is refused (409) if the checkout changed since.' }),
      commit_status: Type.Union([Type.Literal('unmerged'), Type.Literal('in_sync'), Type.Literal('merged'), Type.Literal('unknown')]),
      removal_safety: Type.Union([Type.Literal('safe'), Type.Literal('requires_force'), Type.Literal('unknown')]),
      ...lifecycleCommon,
    },
    { title: 'inspected' },
  ),
  Type.Object(
    {
      dirty_files: Type.Null(),
      commit_status: Type.Literal('unknown'),
      removal_safety: Type.Literal('unknown'),
      error: Type.String({ description: 'Why the checkout could not be inspected (nothing is called safe then).' }),
      ...lifecycleCommon,
    },
    { title: 'uninspectable' },
  ),
]);

const removal = {
  ok: Type.Literal(true),
  removal_rule: Type.Union(
    [Type.Literal('in_sync'), Type.Literal('ancestry'), Type.Literal('patch_equivalence'), Type.Literal('kept_branch'), Type.Literal('force')],
    { description: 'Why the branch was deleted (in_sync, ancestry, patch_equivalence), kept, or forced.' },
  ),
  branch_delete_warning: Nullable(Type.String()),
  branch: Nullable(Type.String()),
  discarded_files: Type.Array(Type.String({ description: 'Uncommitted files a forced removal threw away.' })),
};

export const RemoveResultSchema = Type.Object(removal);

export const FinalizeAnswer = Type.Union([
  Type.Object({ action: Type.Literal('needs_confirmation'), merged: Type.Boolean(), lifecycle: LifecycleSchema }, { title: 'needs_confirmation' }),
  Type.Object({ action: Type.Union([Type.Literal('archive'), Type.Literal('delete')]), ...removal }, { title: 'done' }),
]);
