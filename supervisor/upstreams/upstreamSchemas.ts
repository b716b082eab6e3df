/**
 * The wire shapes of the hub's HTTP routes (routes/mcpUpstreams.ts, routes/projectUpstreams.ts):
 * one typebox schema each. Refusals keep the wording clients already show (`errorMessage`); a
 * missing required field is "<field> is required". What a schema cannot say (the rules of a whole
 * upstream list, a path's traversal) the domain checks and words itself.
 */
import { Type } from 'typebox';

import { UpstreamStatusRowSchema } from '../../shared/protocol/mcpHub.js';
import { UpstreamServerSchema } from '../../shared/protocol/upstreamServer.js';
import { INVALID_PREFIX } from './upstreamStore.js';
import { MAX_NAME_CHARS } from './validateUpstreams.js';

/** A credential is a token or a header value: 64 KiB is far beyond any real one, and keyrings choke on more. */
export const MAX_CREDENTIAL_BYTES = 64 * 1024;
/** PATH_MAX: no longer path names a repository on Linux; a longer one would only grow the saved file. */
export const MAX_REPO_PATH_CHARS = 4096;

/** The routes that answer no content answer a JSON `null`. */
export const NullAnswer = Type.Null({ description: 'Done: the body is JSON `null`.' });

/** GET /mcp/upstreams: mcp-upstreams.json as it is now, defaults applied, Bearer tokens blanked. */
export const UpstreamListAnswer = Type.Object({
  servers: Type.Array(UpstreamServerSchema, { description: 'Bearer tokens come back as `""`: the credential store holds them.' }),
});

/** One side (`base` or `config`) of a save; each server is checked by the domain, every error reported at once. */
const serverList = (what: 'base' | 'requested', description: string) =>
  Type.Object(
    {
      servers: Type.Optional(
        Type.Union([Type.Array(Type.Unknown()), Type.Null()], {
          description: 'Upstream servers as GET /mcp/upstreams lists them, each with a unique `id`; absent or null = none.',
          errorMessage: `${INVALID_PREFIX}${what}.servers must be an array`,
        }),
      ),
    },
    { additionalProperties: true, description, errorMessage: `${INVALID_PREFIX}${what} must be an object with servers` },
  );

/** PUT /mcp/upstreams: what changed from `base` to `config` is applied to the file as it is now. */
export const UpstreamSaveBody = Type.Object({
  base: serverList('base', 'The list as the client last read it (GET /mcp/upstreams).'),
  config: serverList('requested', 'The list the client wants; a Bearer `auth.token` given here moves to the credential store.'),
});

const MISSING_NAME = "missing 'name'";

/** POST /mcp/upstreams/reconnect. */
export const UpstreamReconnectBody = Type.Object({
  name: Type.String({ minLength: 1, description: 'The upstream to reconnect (also out of `failed`).', errorMessage: MISSING_NAME }),
});

/** GET /mcp/upstream-status. */
export const UpstreamStatusAnswer = Type.Object({ upstreams: Type.Array(UpstreamStatusRowSchema) });

const HEADER_SHAPE = "'header' must be {name, credential_ref} with a UUID credential_ref";
const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/**
 * Credential accounts are upstream names, so they follow the same rule (validateUpstreams.ts),
 * checked in this order: a string, not empty; its length; its characters. Each has its own words.
 */
const credentialName = Type.String({
  minLength: 1,
  errorMessage: MISSING_NAME,
  allOf: [
    { maxLength: MAX_NAME_CHARS, errorMessage: `Name '{got}' is invalid: must be at most ${MAX_NAME_CHARS} characters` },
    { pattern: '^[a-z0-9_-]+$', errorMessage: "Name '{got}' is invalid: must contain only lowercase letters, digits, hyphens, and underscores" },
  ],
  description: `The upstream's name: lowercase letters, digits, \`-\` and \`_\`, at most ${MAX_NAME_CHARS} characters.`,
});

const credentialHeader = Type.Union(
  [
    Type.Null(),
    Type.Object({
      name: Type.String({ minLength: 1, errorMessage: HEADER_SHAPE }),
      credential_ref: Type.String({ pattern: UUID, errorMessage: HEADER_SHAPE }),
    }),
  ],
  {
    description: "A custom header's value (`{name, credential_ref}` as the server's `headers` entry lists it); absent or null = the Bearer token.",
    errorMessage: HEADER_SHAPE,
  },
);

/** DELETE /mcp/upstreams/credential: which secret to forget. */
export const CredentialTargetBody = Type.Object({
  name: credentialName,
  header: Type.Optional(credentialHeader),
});

/** POST /mcp/upstreams/credential: a secret to store; it never comes back out. */
export const CredentialSetBody = Type.Object({
  name: credentialName,
  header: Type.Optional(credentialHeader),
  token: Type.String({
    minLength: 1,
    errorMessage: "missing 'token'",
    allOf: [{ maxLength: MAX_CREDENTIAL_BYTES, errorMessage: `'token' must be at most ${MAX_CREDENTIAL_BYTES} bytes` }],
    description: `The Bearer token or the header's value, at most ${MAX_CREDENTIAL_BYTES} bytes of UTF-8.`,
  }),
});

const NAMES_SHAPE = "'upstreamNames' must be an array of upstream names, or null for every upstream";

/** POST /config/project-mcp-upstreams. */
export const ProjectUpstreamsBody = Type.Object({
  repoPath: Type.String({
    minLength: 1,
    errorMessage: "path is required (missing 'repoPath')",
    allOf: [{ maxLength: MAX_REPO_PATH_CHARS, errorMessage: `'repoPath' must be at most ${MAX_REPO_PATH_CHARS} characters` }],
    description: 'The repository: an absolute path without `..` segments.',
  }),
  upstreamNames: Type.Optional(
    Type.Union([Type.Array(Type.String({ minLength: 1, errorMessage: NAMES_SHAPE }), { errorMessage: NAMES_SHAPE }), Type.Null()], {
      description: 'The upstreams MCP sessions in that repository may list and call; absent or null = every upstream.',
      errorMessage: NAMES_SHAPE,
    }),
  ),
});
