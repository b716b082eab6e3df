/** The typebox schemas of the ACP routes (checked at the edge, published in GET /openapi.json). */
import { Type } from 'typebox';

const id = (what: string) => Type.String({ minLength: 1, maxLength: 128, description: what });

export const ConnectionParams = Type.Object({ id: id('The connection id POST /acp/connections answered.') });
export const SessionParams = Type.Object({ id: id('The connection id.'), sid: id("The agent's session id.") });
export const InteractionParams = Type.Object({ id: id('The connection id.'), rid: id('The interaction id GET …/interactions lists.') });

export const ConnectBody = Type.Object(
  { root: Type.String({ minLength: 1, maxLength: 4096, description: "Absolute directory: the agent's working directory and the limit of its file access." }) },
  { additionalProperties: false },
);

export const NewSessionBody = Type.Object(
  { cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'The root (default) or a directory below it.' })) },
  { additionalProperties: false },
);

export const PromptBody = Type.Object(
  {
    prompt: Type.Array(
      Type.Object(
        { type: Type.String({ minLength: 1, maxLength: 64, description: '`text`, `image`, `audio`, `resource_link`, `resource`.' }) },
        { additionalProperties: true, description: 'An ACP ContentBlock, sent to the agent as it is (the SDK checks it).' },
      ),
      { minItems: 1, maxItems: 256 },
    ),
  },
  { additionalProperties: false },
);

export const ConfigBody = Type.Object(
  {
    configId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    value: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Boolean()])),
    modeId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Sets the session mode (session/set_mode) instead of a config option.' })),
  },
  { additionalProperties: false },
);

export const PermissionAnswerBody = Type.Object(
  {
    optionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "One of the request's options." })),
    cancelled: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);

export const ElicitationAnswerBody = Type.Object(
  {
    action: Type.Union([Type.Literal('accept'), Type.Literal('decline'), Type.Literal('cancel')]),
    content: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "The form's values (accept only)." })),
  },
  { additionalProperties: false },
);

export const StreamQuery = Type.Object({
  after: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Resume after this seq (0: from the first frame; absent: from the oldest frame the journal still holds).' }),
  ),
  client: Type.Optional(Type.String({ description: "`mobile`: the /mobile page's own view of the connection (no push for a question on screen)." })),
});

export const SnapshotSchema = Type.Object(
  {
    id: Type.String(),
    generation: Type.Integer({ minimum: 1 }),
    state: Type.Union([Type.Literal('starting'), Type.Literal('ready'), Type.Literal('closed'), Type.Literal('failed')]),
    reason: Type.Optional(Type.String()),
    root: Type.String(),
    pid: Type.Union([Type.Integer(), Type.Null()]),
    protocolVersion: Type.Union([Type.Integer(), Type.Null()]),
    agentInfo: Type.Unknown({ description: "The agent's `agentInfo` from initialize (name, version), or null." }),
    agentCapabilities: Type.Unknown(),
    authMethods: Type.Array(Type.Unknown()),
    clientCapabilities: Type.Unknown(),
    sessions: Type.Array(Type.Object({ sessionId: Type.String(), cwd: Type.String(), turnId: Type.Union([Type.String(), Type.Null()]) })),
    pendingInteractions: Type.Integer(),
    terminals: Type.Array(Type.String({ description: 'tuicd session ids of the agent’s terminals (watch them on /sessions/:id/stream).' })),
    lastSeq: Type.Integer(),
    firstSeq: Type.Integer(),
    journal: Type.Object({ frames: Type.Integer(), chars: Type.Integer({ description: 'JSON text held (UTF-16 code units).' }) }),
    viewers: Type.Integer(),
    exit: Type.Unknown(),
    stderrTail: Type.String(),
  },
  { description: 'An ACP connection now.' },
);

export const AcpErrorSchema = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    message: Type.String(),
    connectionId: Type.Union([Type.String(), Type.Null()]),
    sessionId: Type.Union([Type.String(), Type.Null()]),
    operation: Type.String(),
    retryable: Type.Boolean(),
  },
  { additionalProperties: true, description: 'An ACP error: what failed, where, and whether the same call may work again.' },
);

export const OkAnswer = Type.Object({ ok: Type.Literal(true) }, { additionalProperties: true });
export const AgentAnswer = Type.Object({}, { additionalProperties: true, description: "The agent's answer, as it sent it." });
