/**
 * `config` (off by default through disabled_native_tools): read the redacted config
 * (exactly what GET /config returns) and save a partial one through the same ConfigStore commit as
 * PUT /config, so rebind and tools-changed side effects follow. The prompt and ai_prompt actions are
 * left out: tuicd has no prompt library yet, and an advertised action that cannot work is worse than none.
 */
import { Type } from 'typebox';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import type { ConfigStore } from '../../config/configStore.js';
import { redactForClient } from '../../config/secrets.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

export interface ConfigToolDeps {
  config: ConfigStore;
}

const MISSING_CONFIG = "config action=save requires 'config': an object with the fields to change";

export function createConfigTool(deps: ConfigToolDeps): NativeTool {
  const tool: NativeTool = defineTool({
    name: 'config',
    summary: 'Read or change the TUICommander settings (config.json).',
    actions: {
      get: 'the current config; secrets appear only as *_exists flags',
      save: "merge a partial 'config' object into the settings (objects merge, arrays and scalars replace) → {ok:true}. Local callers only",
    },
    properties: {
      config: Type.Optional(Type.Object({}, { description: 'save: the fields to change (partial)', errorMessage: MISSING_CONFIG })),
    },
    handler: async (args, caller) => {
      if (args['action'] === 'get') return redactForClient(deps.config.get());
      if (!caller.isLoopback) throw new ToolError('forbidden', 'config action=save is only available to local callers (the unix socket or loopback TCP)');
      const partial = args['config'];
      if (partial === undefined) throw new ToolError('invalid_input', MISSING_CONFIG, { field: 'config' });
      try {
        await deps.config.update(partial);
      } catch (err) {
        // The values are the config schema's to check (CONFIG_INVALID names the field); a corrupt file on disk is refused as it stands.
        if (err instanceof SupervisorError && err.code === ErrorCode.CONFIG_INVALID) throw new ToolError('invalid_input', err.message);
        if (err instanceof SupervisorError && err.code === ErrorCode.CONFIG_CORRUPT) throw new ToolError('conflict', err.message);
        throw err;
      }
      return { ok: true };
    },
  });
  return tool;
}
