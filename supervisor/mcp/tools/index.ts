/** Every native tool, in tools/list order. Each tool module exports one factory; its deps are named in NativeToolDeps. */
import type { NativeTool } from './nativeTool.js';

/** What tool factories may use; each field is added by the tool that needs it. */
export interface NativeToolDeps {
  // DEPS: one line per dependency, added with the tool that needs it.
}

export function createNativeTools(deps: NativeToolDeps): NativeTool[] {
  void deps;
  return [
    // TOOLS: one line per tool, in the order tools/list shows them: session, task, progress, ui, plugin_dev_guide, config, debug.
  ];
}
