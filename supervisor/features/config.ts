/** Settings: GET/PUT /config, the prompt library (GET/PUT /config/prompt-library) and the `config` tool over both. */
import type { ConfigStore } from '../config/configStore.js';
import { createConfigTool } from '../mcp/tools/config.js';
import { PromptLibrary } from '../prompts/promptLibrary.js';
import { configRoutes } from '../routes/config.js';
import { promptRoutes } from '../routes/prompts.js';
import type { Feature } from './feature.js';

export function configFeature(deps: { config: ConfigStore; configDir: string }): Feature {
  const prompts = new PromptLibrary(deps.configDir);
  return {
    name: 'config',
    routes: [...configRoutes(deps.config), ...promptRoutes(prompts)],
    tools: [createConfigTool({ config: deps.config, prompts })],
  };
}
