/** Every native tool, in tools/list order. Each tool module exports one factory; its deps are named in NativeToolDeps. */
import type { NativeTool } from './nativeTool.js';
import { createSessionTool } from './session.js';
import { createTaskTool } from './task.js';
import type { SessionService } from '../../sessions/sessionService.js';
import type { TaskRegistry } from '../tasks.js';

/** What tool factories may use; each field is added by the tool that needs it. */
export interface NativeToolDeps {
  // DEPS: one line per dependency, added with the tool that needs it.
  sessions: SessionService;
  tasks: TaskRegistry;
}

export function createNativeTools(deps: NativeToolDeps): NativeTool[] {
  void deps;
  return [
    // TOOLS: one line per tool, in the order tools/list shows them: session, task, progress, ui, plugin_dev_guide, config, debug.
    createSessionTool(deps),
    createTaskTool(deps),
  ];
}
