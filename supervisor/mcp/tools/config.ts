/**
 * `config` (off by default through disabled_native_tools): read the redacted config
 * (exactly what GET /config returns) and save a partial one through the same ConfigStore commit as
 * PUT /config, so rebind and tools-changed side effects follow; and the prompt library
 * (prompt-library.json, also GET/PUT /config/prompt-library): saved prompts and the AI prompts a
 * user replaced. Every save is for local callers only.
 */
import { Type } from 'typebox';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import type { ConfigStore } from '../../config/configStore.js';
import { redactForClient } from '../../config/secrets.js';
import type { PromptLibrary } from '../../prompts/promptLibrary.js';
import { PromptLimits, promptId } from '../../prompts/promptSchemas.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

export interface ConfigToolDeps {
  config: ConfigStore;
  prompts: PromptLibrary;
}

const MISSING_CONFIG = "config action=save requires 'config': an object with the fields to change";
const SAVES = new Set(['save', 'save_prompt', 'save_ai_prompt']);

function required<T>(args: Record<string, unknown>, key: string): T {
  const value = args[key];
  if (value === undefined) throw new ToolError('invalid_input', `config action=${String(args['action'])} requires '${key}'`, { field: key });
  return value as T;
}

export function createConfigTool(deps: ConfigToolDeps): NativeTool {
  const { prompts } = deps;
  const tool: NativeTool = defineTool({
    name: 'config',
    summary: 'Read or change the TUICommander settings (config.json) and the prompt library.',
    actions: {
      get: 'the config; secrets appear only as *_exists flags',
      save: "merge a partial 'config' (objects merge, arrays and scalars replace) → {ok:true}",
      list_ai_prompts: '→ {services:[{name, description, is_custom}]}',
      load_ai_prompt: "'service' → {service, prompt, default_prompt, is_custom}",
      save_ai_prompt: "'service', 'prompt' (null or empty resets to the default)",
      list_prompts: '→ {prompts:[{id, label, pinned}]}',
      load_prompt: "'id' → {id, label, text, pinned}",
      save_prompt: "'id', 'label', 'text', 'pinned'?: adds or replaces that id",
    },
    notes: 'Every save: local callers only.',
    properties: {
      config: Type.Optional(Type.Object({}, { errorMessage: MISSING_CONFIG })),
      service: Type.Optional(Type.String({ maxLength: 64 })),
      prompt: Type.Optional(Type.Union([Type.String({ maxLength: PromptLimits.TEXT_CHARS }), Type.Null()])),
      id: Type.Optional(promptId('')),
      label: Type.Optional(Type.String({ minLength: 1, maxLength: PromptLimits.LABEL_CHARS })),
      text: Type.Optional(Type.String({ maxLength: PromptLimits.TEXT_CHARS })),
      pinned: Type.Optional(Type.Boolean()),
    },
    refuse: (args, caller) => {
      const action = String(args['action']);
      if (SAVES.has(action) && !caller.isLoopback) {
        throw new ToolError('forbidden', `config action=${action} is only available to local callers (the unix socket or loopback TCP)`);
      }
    },
    handler: async (args) => {
      switch (args['action']) {
        case 'get':
          return redactForClient(deps.config.get());
        case 'list_ai_prompts':
          return { services: await prompts.listAiPrompts() };
        case 'load_ai_prompt':
          return prompts.loadAiPrompt(required(args, 'service'));
        case 'save_ai_prompt':
          // An absent prompt is a reset too: the service named is what the caller meant to change.
          await prompts.saveAiPrompt(required(args, 'service'), (args['prompt'] as string | null | undefined) ?? null);
          return { ok: true };
        case 'list_prompts':
          return { prompts: await prompts.list() };
        case 'load_prompt':
          return prompts.load(required(args, 'id'));
        case 'save_prompt':
          await prompts.save({
            id: required(args, 'id'),
            label: required(args, 'label'),
            text: required(args, 'text'),
            pinned: (args['pinned'] as boolean | undefined) ?? false,
          });
          return { ok: true };
        default:
          return saveConfig(deps.config, args['config']);
      }
    },
  });
  return tool;
}

async function saveConfig(config: ConfigStore, partial: unknown): Promise<{ ok: true }> {
  if (partial === undefined) throw new ToolError('invalid_input', MISSING_CONFIG, { field: 'config' });
  try {
    await config.update(partial);
  } catch (err) {
    // The values are the config schema's to check (CONFIG_INVALID names the field); a corrupt file on disk is refused as it stands.
    if (err instanceof SupervisorError && err.code === ErrorCode.CONFIG_INVALID) throw new ToolError('invalid_input', err.message);
    if (err instanceof SupervisorError && err.code === ErrorCode.CONFIG_CORRUPT) throw new ToolError('conflict', err.message);
    throw err;
  }
  return { ok: true };
}
