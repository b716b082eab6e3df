/** GET/PUT /config/prompt-library: the prompt library file as a whole (the `config` tool's prompt actions work on entries). */
import { Type } from 'typebox';

import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { PromptLibrary } from '../prompts/promptLibrary.js';
import { type PromptLibraryData, PromptLibrarySchema } from '../prompts/promptSchemas.js';

export function promptRoutes(library: PromptLibrary): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/config/prompt-library',
      tag: 'config',
      summary: 'The prompt library: saved prompts and the AI prompts a user replaced',
      description:
        'An empty library (`{"prompts":[],"ai_prompts":{}}`) until something is saved; 409 `conflict` when prompt-library.json cannot be read as one.',
      answers: { 200: PromptLibrarySchema },
      handler: async () => json(await library.read()),
    }),
    defineRoute({
      method: 'PUT',
      pattern: '/config/prompt-library',
      tag: 'config',
      summary: 'Replace the prompt library',
      description:
        'The whole library, saved atomically. Prompt ids must be unique, `ai_prompts` keys must name a known service (`diff_triage`); ' +
        'a service left out uses its default prompt.',
      body: PromptLibrarySchema,
      answers: { 200: Type.Object({ ok: Type.Literal(true) }) },
      handler: async ({ body }) => {
        await library.replace(body as PromptLibraryData);
        return json({ ok: true });
      },
    }),
  ];
}
