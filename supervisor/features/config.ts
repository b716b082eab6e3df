/**
 * Settings: GET/PUT /config, the defaults and notifications.json, the prompt library, the session
 * token's routes, the system routes a settings page shows (addresses, home), and the `config` tool,
 * over the config store the root loads at start.
 */
import type { ConfigStore } from '../config/configStore.js';
import { createConfigTool } from '../mcp/tools/config.js';
import { PromptLibrary } from '../prompts/promptLibrary.js';
import { DomainConfigFile } from '../repos/domainConfigFile.js';
import { authTokenRoutes } from '../routes/authToken.js';
import { configRoutes } from '../routes/config.js';
import { configDomainRoutes, NOTIFICATIONS_FILE } from '../routes/configDomains.js';
import { promptRoutes } from '../routes/prompts.js';
import { systemRoutes } from '../routes/system.js';
import type { Feature } from './feature.js';

export function configFeature(deps: { config: ConfigStore; configDir: string }): Feature {
  const prompts = new PromptLibrary(deps.configDir);
  return {
    name: 'config',
    routes: [
      ...configRoutes(deps.config),
      ...configDomainRoutes(new DomainConfigFile(deps.configDir, NOTIFICATIONS_FILE)),
      ...promptRoutes(prompts),
      ...authTokenRoutes(deps.config),
      ...systemRoutes(),
    ],
    tools: [createConfigTool({ config: deps.config, prompts })],
  };
}
