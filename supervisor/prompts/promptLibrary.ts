/**
 * The prompt library: prompts a user keeps (id, label, text, pinned) and the AI prompts a user
 * replaced, in prompt-library.json in the config dir: a DomainConfigFile, read on every access (the
 * file is small and another tuicd or an editor may change it), every save a read-modify-write under
 * its file lock, atomic on disk.
 */
import { ApiError } from '../../shared/apiError.js';
import { checker } from '../../shared/schemaCheck.js';
import { DomainConfigFile, type JsonObject } from '../repos/domainConfigFile.js';
import { type PromptEntry, type PromptLibraryData, PromptLibrarySchema, PromptLimits } from './promptSchemas.js';

export const PROMPT_LIBRARY_FILE = 'prompt-library.json';

/** The services whose model prompt a user may replace, with the prompt each uses by default. */
export const AI_PROMPT_SERVICES: Readonly<Record<string, { description: string; defaultPrompt: string }>> = {
  diff_triage: {
    description: 'Sorts the files of a diff into what needs a careful review and what can be skimmed.',
    defaultPrompt: [
      'You triage a code diff for a reviewer. For each changed file, answer one line:',
      '<path>: review | skim — <one short reason>.',
      '"review" when the change alters behaviour, security, data or public interfaces; "skim" for',
      'formatting, renames, generated files, comments and tests that only follow the code.',
      'Do not summarize the diff; do not suggest changes.',
    ].join('\n'),
  },
};

const checkLibrary = checker(PromptLibrarySchema, 'body');

/** I/O, lock and API errors as they are; what is left is content that is not a JSON object. */
function unreadable(err: unknown): never {
  if ((err as NodeJS.ErrnoException).code !== undefined) throw err;
  throw new ApiError('conflict', `${PROMPT_LIBRARY_FILE} is not valid JSON (${(err as Error).message}); fix or remove it`);
}

/** The file's content as a library: `{}` (no file yet) is an empty one; content off the schema is refused. */
function parseLibrary(raw: JsonObject): PromptLibraryData {
  if (Object.keys(raw).length === 0) return { prompts: [], ai_prompts: {} };
  try {
    return checkLibrary(raw) as PromptLibraryData;
  } catch (err) {
    throw new ApiError('conflict', `${PROMPT_LIBRARY_FILE} does not match its schema: ${(err as Error).message}; fix or remove it`);
  }
}

export class PromptLibrary {
  private readonly file: DomainConfigFile;

  constructor(configDir: string) {
    this.file = new DomainConfigFile(configDir, PROMPT_LIBRARY_FILE);
  }

  get path(): string {
    return this.file.path;
  }

  /** The whole library; a missing file is an empty one, an unreadable one is refused (never overwritten unseen). */
  async read(): Promise<PromptLibraryData> {
    return parseLibrary(await this.file.read().catch(unreadable));
  }

  /** Replaces the whole library (PUT /config/prompt-library); the caller checked its shape. Ids must be unique. */
  replace(library: PromptLibraryData): Promise<void> {
    const seen = new Set<string>();
    for (const p of library.prompts) {
      if (seen.has(p.id)) throw new ApiError('invalid_input', `duplicate prompt id '${p.id}'`, { extra: { field: 'prompts' } });
      seen.add(p.id);
    }
    for (const service of Object.keys(library.ai_prompts)) this.service(service);
    return this.mutate(() => library);
  }

  async list(): Promise<Array<{ id: string; label: string; pinned: boolean }>> {
    return (await this.read()).prompts.map(({ id, label, pinned }) => ({ id, label, pinned }));
  }

  async load(id: string): Promise<PromptEntry> {
    const entry = (await this.read()).prompts.find((p) => p.id === id);
    if (entry === undefined) throw new ApiError('not_found', `Prompt not found: ${id}`);
    return entry;
  }

  /** Adds the prompt, or replaces the one with its id where it stands. */
  save(entry: PromptEntry): Promise<void> {
    return this.mutate((library) => {
      const at = library.prompts.findIndex((p) => p.id === entry.id);
      if (at >= 0) library.prompts[at] = entry;
      else if (library.prompts.length >= PromptLimits.PROMPTS)
        throw new ApiError('payload_too_large', `the prompt library holds at most ${PromptLimits.PROMPTS} prompts`);
      else library.prompts.push(entry);
      return library;
    });
  }

  async listAiPrompts(): Promise<Array<{ name: string; description: string; is_custom: boolean }>> {
    const custom = (await this.read()).ai_prompts;
    return Object.entries(AI_PROMPT_SERVICES).map(([name, s]) => ({ name, description: s.description, is_custom: Object.hasOwn(custom, name) }));
  }

  async loadAiPrompt(service: string): Promise<{ service: string; prompt: string; default_prompt: string; is_custom: boolean }> {
    const known = this.service(service);
    const custom = (await this.read()).ai_prompts;
    const is_custom = Object.hasOwn(custom, service);
    return { service, prompt: is_custom ? custom[service]! : known.defaultPrompt, default_prompt: known.defaultPrompt, is_custom };
  }

  /** null or an empty prompt resets the service to its default. */
  saveAiPrompt(service: string, prompt: string | null): Promise<void> {
    this.service(service);
    return this.mutate((library) => {
      if (prompt === null || prompt.trim() === '') delete library.ai_prompts[service];
      else library.ai_prompts[service] = prompt;
      return library;
    });
  }

  private service(name: string): { description: string; defaultPrompt: string } {
    const known = Object.hasOwn(AI_PROMPT_SERVICES, name) ? AI_PROMPT_SERVICES[name] : undefined;
    if (known === undefined) {
      throw new ApiError('invalid_input', `Unknown AI prompt service '${name}'; known: ${Object.keys(AI_PROMPT_SERVICES).join(', ')}`, {
        extra: { field: 'service' },
      });
    }
    return known;
  }

  private mutate(change: (library: PromptLibraryData) => PromptLibraryData): Promise<void> {
    return this.file.update((raw) => change(parseLibrary(raw)) as unknown as JsonObject).catch(unreadable);
  }
}
