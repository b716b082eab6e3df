/** The `plugin_dev_guide` tool: how to extend tuicd from outside (HTTP API, /events, /mcp, upstreams). */
import { createPluginDevGuideTool } from '../mcp/tools/pluginDevGuide.js';
import type { Feature } from './feature.js';

export function guideFeature(): Feature {
  return { name: 'guide', tools: [createPluginDevGuideTool()] };
}
