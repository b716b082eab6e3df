/** The wire shapes of the session routes and the session tool: one typebox schema each. */
import { Type } from 'typebox';

import { PtyConstants } from '../../shared/protocol/pty.js';

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
  display_name: Type.String(),
  display_name_is_custom: Type.Boolean(),
  is_remote: Type.Boolean(),
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
});

export const CreatedSessionSchema = Type.Object({
  session_id: Type.String(),
  alias: Type.String(),
  tuic_session: Type.String(),
  pid: Type.Integer(),
});

const nonNegative = (name: string, note = '') =>
  Type.Integer({ minimum: 0, errorMessage: `${name} must be a non-negative integer${note}, got {got}`, description: `A non-negative integer${note}.` });

export const OutputQuery = Type.Object({
  format: Type.Optional(
    Type.Union([Type.Literal('raw'), Type.Literal('text'), Type.Literal('log')], {
      description: '`raw` (default): ring bytes; `text`: the screen grid; `log`: stripped scrollback lines and the screen.',
      errorMessage: 'format must be raw, text or log, got {got}',
    }),
  ),
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
