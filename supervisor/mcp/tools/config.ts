/**
 * `config` (REFERENCE §6.8; off by default through disabled_native_tools): read the redacted config
 * (exactly what GET /config returns) and save a partial one through the same ConfigStore commit as
 * PUT /config, so rebind and tools-changed side effects follow. The prompt and ai_prompt actions are
 * left out: tuicd has no prompt library yet, and an advertised action that cannot work is worse than none.
 */
import { Type } from 'typebox';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import type { ConfigStore } from '../../config/configStore.js';
import { redactForClient } from '../../config/secrets.js';
import { defineTool, requireAction, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

export interface ConfigToolDeps {
  config: ConfigStore;
}

export function createConfigTool(deps: ConfigToolDeps): NativeTool {
  const tool: NativeTool = defineTool({
    name: 'config',
    summary: 'Read or change the TUICommander settings (config.json).',
    actions: {
      get: 'the current config; secrets appear only as *_exists flags',
      save: "merge a partial 'config' object into the settings (objects merge, arrays and scalars replace) → {ok:true}. Local callers only",
    },
    properties: {
      config: Type.Optional(Type.Object({}, { description: 'save: the fields to change (partial)' })),
    },
    handler: async (args, caller) => {
      const action = requireAction(tool, args);
      if (action === 'get') return redactForClient(deps.config.get());
      if (!caller.isLoopback) throw new ToolError('config action=save is only available to local callers (the unix socket or loopback TCP)');
      const partial = args['config'];
      if (typeof partial !== 'object' || partial === null || Array.isArray(partial)) {
        throw new ToolError("config action=save requires 'config': an object with the fields to change");
      }
      try {
        await deps.config.update(partial);
      } catch (err) {
        if (err instanceof SupervisorError && (err.code === ErrorCode.CONFIG_INVALID || err.code === ErrorCode.CONFIG_CORRUPT))
          throw new ToolError(err.message);
        throw err;
      }
      return { ok: true };
    },
  });
  return tool;
}
