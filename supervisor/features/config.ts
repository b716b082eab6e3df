/** Settings: GET/PUT /config and the `config` tool, over the config store the root loads at start. */
import type { ConfigStore } from '../config/configStore.js';
import { createConfigTool } from '../mcp/tools/config.js';
import { configRoutes } from '../routes/config.js';
import type { Feature } from './feature.js';

export function configFeature(deps: { config: ConfigStore }): Feature {
  return { name: 'config', routes: configRoutes(deps.config), tools: [createConfigTool({ config: deps.config })] };
}
