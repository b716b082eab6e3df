/** The wire shapes of the session routes and the session tool: one typebox schema each. */
import { type Static, Type } from 'typebox';

import { PtyConstants } from '../../shared/protocol/pty.js';
import { AGENT_TYPE_NAMES } from './agentDetection.js';

/** A session address: its id, its tuic_session identity or its alias (SessionService.resolve). */
export const SessionRefParams = Type.Object({
  id: Type.String({ minLength: 1, description: 'The session id, its `tuic_session` identity or its alias.' }),
});

const dimension = (name: 'rows' | 'cols') =>
  Type.Integer({
    minimum: 1,
    maximum: PtyConstants.MAX_TERMINAL_DIMENSION,
    description: `Terminal ${name}, 1 to ${PtyConstants.MAX_TERMINAL_DIMENSION}.`,
    errorMessage: `${name} must be between 1 and ${PtyConstants.MAX_TERMINAL_DIMENSION}, got {got}`,
  });

/**
 * A session id a client chooses travels in URL paths, log lines, capture file names and agents'
 * prompts: letters, digits and `._:-`, 1 to 128 of them, and not a path step (`.`, `..`).
 */
export const SESSION_ID_PATTERN = '^(?!\\.+$)[A-Za-z0-9._:-]{1,128}$';
/** Names a client gives (tuic_session, alias, display_name): bounded, as everything a client can grow. */
export const MAX_NAME_CHARS = 256;
/** A new session's terminal when the request names no size. */
export const DEFAULT_TERMINAL = { rows: 24, cols: 80 } as const;
/** `env` of a new session: how many variables, how long each value, what a name looks like. */
export const EnvLimits = {
  MAX_VARS: 64,
  VALUE_MAX_BYTES: 32 * 1024,
  /** Letters, digits and `_`, not starting with a digit. */
  NAME_PATTERN: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
} as const;

const name = (field: 'alias' | 'tuic_session' | 'display_name', description: string) =>
  Type.String({
    maxLength: MAX_NAME_CHARS,
    description,
    errorMessage: `${field} must be a string of at most ${MAX_NAME_CHARS} characters, got {quoted}`,
  });

/** A dimension at create: absent or null takes the default. */
const createDimension = (field: 'rows' | 'cols') =>
  Type.Union([Type.Integer({ minimum: 1, maximum: PtyConstants.MAX_TERMINAL_DIMENSION }), Type.Null()], {
    description: `Terminal ${field}, 1 to ${PtyConstants.MAX_TERMINAL_DIMENSION}; absent or null: ${DEFAULT_TERMINAL[field]}.`,
    errorMessage: `${field} must be between 1 and ${PtyConstants.MAX_TERMINAL_DIMENSION}, got {got}`,
  });

/**
 * POST /sessions (and the session tool's `create`): every field optional. What a schema cannot say
 * is checked by SessionService.create: the working directory exists, env leaves the TUIC_* identity
 * alone and stays within its count and byte limits, the id is free.
 */
export const CreateSessionBody = Type.Object({
  rows: Type.Optional(createDimension('rows')),
  cols: Type.Optional(createDimension('cols')),
  shell: Type.Optional(
    Type.String({
      description: 'The program to run (`~/` expanded); absent or empty: config `shell`, else $SHELL, else /bin/sh.',
      errorMessage: 'shell must be a string, got {quoted}',
    }),
  ),
  args: Type.Optional(
    Type.Array(Type.String({ errorMessage: 'args must be an array of strings, got {quoted}' }), {
      description: "The program's arguments (`~/` expanded).",
      errorMessage: 'args must be an array of strings, got {quoted}',
    }),
  ),
  cwd: Type.Optional(
    Type.String({
      description: 'An existing directory, absolute or `~/…`; absent or empty: the home directory.',
      errorMessage: 'cwd must be a string, got {quoted}',
    }),
  ),
  session_id: Type.Optional(
    Type.String({
      pattern: SESSION_ID_PATTERN,
      description: 'The id to use instead of a new UUID: 1 to 128 of `A-Z a-z 0-9 . _ : -`, not only dots; refused (409) while in use.',
      errorMessage: 'session_id must be 1-128 characters of A-Z a-z 0-9 . _ : - (and not only dots), got {quoted}',
    }),
  ),
  alias: Type.Optional(name('alias', 'A short name to resolve the session by; absent: one is made from the directory (`tu-1`).')),
  tuic_session: Type.Optional(
    name('tuic_session', "The session's stable identity (its TUIC_SESSION), kept across restarts of a tab; absent or empty: the session id."),
  ),
  display_name: Type.Optional(name('display_name', "What a UI shows; absent or empty: the program's name.")),
  agent_type: Type.Optional(
    Type.Union([Type.Enum([...AGENT_TYPE_NAMES]), Type.Null()], {
      description: 'The agent the session is started as: what agent detection falls back to while the foreground program is unknown.',
      errorMessage: `agent_type must be one of ${AGENT_TYPE_NAMES.join(', ')}; got {quoted}`,
    }),
  ),
  env: Type.Optional(
    Type.Unsafe<Record<string, string> | null>({
      type: ['object', 'null'],
      propertyNames: { pattern: EnvLimits.NAME_PATTERN, errorMessage: 'env names must be letters, digits and _, not starting with a digit' },
      additionalProperties: { type: 'string', pattern: '^[^\\u0000]*$', errorMessage: 'env values must be strings without NUL' },
      description:
        `Variables added to the environment: at most ${EnvLimits.MAX_VARS}, each value at most ${EnvLimits.VALUE_MAX_BYTES} bytes; ` +
        'not TUIC_SESSION, TUIC_CONFIG_DIR or TUIC_APP_INSTANCE (tuicd sets them to name the session).',
      errorMessage: 'env must be an object of names to strings, got {quoted}',
    }),
  ),
  keep_open: Type.Optional(
    Type.Boolean({
      description: 'After the process exits, the session and its output stay until it is closed (no expiry).',
      errorMessage: 'keep_open must be a boolean, got {quoted}',
    }),
  ),
});

export type CreateSessionFields = Static<typeof CreateSessionBody>;

export const WriteBody = Type.Object({
  data: Type.String({ description: 'Text typed into the session as it is (UTF-8); control characters included.', errorMessage: 'data must be a string' }),
});

export const ResizeBody = Type.Object({
  rows: dimension('rows'),
  cols: dimension('cols'),
});

export const OkAnswer = Type.Object({ ok: Type.Literal(true) });

/** SessionState: the always-present fields; the agent fields appear only when known. */
export const SessionStateSchema = Type.Object(
  {
    awaiting_input: Type.Boolean(),
    rate_limited: Type.Boolean(),
    last_activity_ms: Type.Number(),
    shell_state: Type.Optional(Type.Union([Type.Literal('busy'), Type.Literal('idle')])),
    agent_state: Type.Optional(Type.String()),
    agent_type: Type.Optional(Type.String()),
    background_work: Type.Optional(Type.Literal(true)),
    last_prompt: Type.Optional(Type.String()),
    queued_commands: Type.Optional(Type.Integer({ minimum: 1 })),
    terminal_mode: Type.Optional(Type.Unknown({ description: '`"Shell"`, or `{FullscreenTui: {app_hint, depth}}` while a full-screen program draws.' })),
  },
  { additionalProperties: true, description: 'What tuicd knows of the session now; agent fields (question_text, progress…) only when the parser saw them.' },
);

export const SessionInfoSchema = Type.Object({
  session_id: Type.String(),
  cwd: Type.String(),
  worktree_path: Type.Optional(Type.String({ description: 'The linked git worktree the cwd lies in (its top directory).' })),
  worktree_branch: Type.Optional(Type.String({ description: "That worktree's checked-out branch; absent when detached." })),
  display_name: Type.String(),
  display_name_is_custom: Type.Boolean({ description: 'A person named the session (PUT /sessions/:id/name): terminal titles do not replace the name.' }),
  display_name_from_spawn: Type.Optional(Type.Literal(true, { description: 'The name came with the create request; a title may replace it.' })),
  is_remote: Type.Boolean({ description: 'Created by an API client (REST or MCP), not a desktop window.' }),
  pty_description: Type.Optional(Type.String({ description: "The orchestrator's description of the work assigned to the session." })),
  alias: Type.String(),
  tuic_session: Type.String(),
  pid: Type.Integer(),
  rows: Type.Integer(),
  cols: Type.Integer(),
  paused: Type.Boolean(),
  total_written: Type.Integer({ minimum: 0 }),
  state: SessionStateSchema,
  exit: Type.Optional(Type.Object({ exit_code: Type.Union([Type.Integer(), Type.Null()]), reason: Type.String() })),
  keep_open: Type.Optional(Type.Literal(true)),
  standby: Type.Optional(Type.Literal(true, { description: 'Alive, idle at its prompt and untouched for config `standby_timeout_minutes` (0: never).' })),
});

export const CreatedSessionSchema = Type.Object({
  session_id: Type.String(),
  alias: Type.String(),
  tuic_session: Type.String(),
  pid: Type.Integer(),
});

export const nonNegative = (name: string, note = '', description = `A non-negative integer${note}.`) =>
  Type.Integer({ minimum: 0, errorMessage: `${name} must be a non-negative integer${note}, got {got}`, description });

/** How output is read (GET /sessions/:id/output) or streamed (the WebSocket): raw bytes, or stripped lines and the screen. */
export const outputFormat = (description: string) =>
  Type.Union([Type.Literal('raw'), Type.Literal('text'), Type.Literal('log')], { description, errorMessage: 'format must be raw, text or log, got {got}' });

export const OutputQuery = Type.Object({
  format: Type.Optional(outputFormat('`raw` (default): ring bytes; `text`: the screen grid; `log`: stripped scrollback lines and the screen.')),
  limit: Type.Optional(nonNegative('limit')),
  offset: Type.Optional(nonNegative('offset')),
  since_cursor: Type.Optional(nonNegative('since_cursor')),
});

const exitCode = { exit_code: Type.Optional(Type.Integer({ description: 'Present once the process exited with a code.' })) };

export const OutputAnswer = Type.Union([
  Type.Object({ data: Type.String(), data_length: Type.Integer(), offset: Type.Integer(), total_written: Type.Integer(), ...exitCode }, { title: 'raw' }),
  Type.Object(
    {
      data: Type.String(),
      data_length: Type.Integer(),
      total_written: Type.Integer(),
      offset: Type.Integer(),
      cursor_row: Type.Integer(),
      cursor_col: Type.Integer(),
      alt_screen: Type.Boolean(),
      ...exitCode,
    },
    { title: 'text' },
  ),
  Type.Object(
    {
      lines: Type.Array(Type.Object({ text: Type.String() })),
      offset: Type.Integer(),
      total_lines: Type.Integer(),
      oldest_offset: Type.Integer(),
      cursor: Type.Integer(),
      screen: Type.Optional(Type.Array(Type.Object({ text: Type.String() }))),
      ...exitCode,
    },
    { title: 'log' },
  ),
]);
