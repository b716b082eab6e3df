/** Shapes of the prompt library (prompt-library.json): saved prompts and the AI prompt overrides. */
import { type Static, Type } from 'typebox';

export const PromptLimits = {
  ID_CHARS: 128,
  LABEL_CHARS: 200,
  /** A prompt's text and an AI prompt: generous for a long instruction, bounded like a request body. */
  TEXT_CHARS: 64 * 1024,
  PROMPTS: 500,
} as const;

export const PROMPT_ID_RULE = 'Letters, digits, `.`, `_` and `-`, starting with a letter or digit.';

/** A prompt id; `description` '' leaves it out (the tool's schema is read by agents: every byte is context). */
export const promptId = (description: string = PROMPT_ID_RULE) =>
  Type.String({
    minLength: 1,
    maxLength: PromptLimits.ID_CHARS,
    pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
    ...(description === '' ? {} : { description }),
  });

export const PromptEntrySchema = Type.Object({
  id: promptId(),
  label: Type.String({ minLength: 1, maxLength: PromptLimits.LABEL_CHARS }),
  text: Type.String({ maxLength: PromptLimits.TEXT_CHARS }),
  pinned: Type.Boolean(),
});
export type PromptEntry = Static<typeof PromptEntrySchema>;

/** The file and GET/PUT /config/prompt-library: the prompts in the order a client shows them, and the AI prompts a user replaced. */
export const PromptLibrarySchema = Type.Object({
  prompts: Type.Array(PromptEntrySchema, { maxItems: PromptLimits.PROMPTS }),
  ai_prompts: Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: PromptLimits.TEXT_CHARS }), {
    description: 'Service name → the prompt that replaces its built-in default (absent: the default).',
  }),
});
export type PromptLibraryData = Static<typeof PromptLibrarySchema>;

export const PromptSummarySchema = Type.Object({ id: Type.String(), label: Type.String(), pinned: Type.Boolean() });

export const AiPromptServiceSchema = Type.Object({ name: Type.String(), description: Type.String(), is_custom: Type.Boolean() });

export const AiPromptSchema = Type.Object({
  service: Type.String(),
  prompt: Type.String({ description: 'What the service uses: the saved prompt, or the default.' }),
  default_prompt: Type.String(),
  is_custom: Type.Boolean(),
});
