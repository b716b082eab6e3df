/**
 * `task`: poll or cancel the handle `agent action=spawn` returns, so an orchestrator can follow an
 * agent past one wait's ceiling. A task_id is a capability over a spawned agent: ownership is
 * checked before any state is returned or changed.
 */
import { Type } from 'typebox';

import { TaskConstants, type Task, type TaskRegistry } from '../../agents/tasks.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { CallerContext, NativeTool } from './nativeTool.js';

export interface TaskToolDeps {
  tasks: TaskRegistry;
}

/** The owner stamped at spawn is the caller's TUIC identity, or its MCP session id when it spawned before binding one. */
export function ownsTask(task: Task, caller: CallerContext): boolean {
  return task.owner === caller.tuicSession || task.owner === caller.mcpSessionId;
}

/** get's answer: optional fields omitted; a failure's reason is error_detail, never error (that means the call failed). */
export function taskView(task: Task): Record<string, unknown> {
  const view: Record<string, unknown> = { task_id: task.task_id, status: task.status };
  if (task.status_message !== undefined) view['status_message'] = task.status_message;
  if (task.result !== undefined) view['result'] = { ...task.result };
  if (task.error_detail !== undefined) view['error_detail'] = task.error_detail;
  view['poll_interval_ms'] = TaskConstants.POLL_INTERVAL_MS;
  return view;
}

export function createTaskTool(deps: TaskToolDeps): NativeTool {
  const tool: NativeTool = defineTool({
    name: 'task',
    summary:
      'Follow an agent started with agent action=spawn past the 300 s wait ceiling: poll its task_id with get every poll_interval_ms instead of holding a wait open. ' +
      'Status: working or input_required while it runs; completed, failed or cancelled are final and never change.',
    actions: {
      get: '{task_id, status, status_message?, result?: {session_id, exit_code}, error_detail?, poll_interval_ms}; a failed agent reports why in error_detail (a top-level error means the call itself failed)',
      cancel:
        'mark the task cancelled → {task_id, status, cancelled, note}; the agent keeps running (stop it with session action=kill); cancelling a finished task is not an error and reports cancelled:false with the state that stands. Local callers only',
    },
    notes: 'Only the identity that spawned the agent can read or cancel its task. Tasks expire 24 h after creation.',
    properties: {
      task_id: Type.String({ description: 'the task_id agent action=spawn returned' }),
    },
    required: ['task_id'],
    handler: (args, caller) => {
      const action = args['action'] as 'get' | 'cancel';
      const taskId = args['task_id'] as string;
      if (taskId === '') throw new ToolError('invalid_input', `Action '${action}' requires 'task_id'`, { field: 'task_id' });
      if (action === 'cancel' && !caller.isLoopback) throw new ToolError('forbidden', 'Task cancellation is restricted to localhost connections');
      const task = deps.tasks.get(taskId);
      if (!task) throw new ToolError('not_found', 'unknown or expired task_id');
      if (!ownsTask(task, caller)) throw new ToolError('forbidden', 'task_id is not owned by the calling identity');
      if (action === 'get') return taskView(task);
      if (deps.tasks.cancel(taskId)) {
        return { task_id: taskId, status: 'cancelled', cancelled: true, note: 'Task cancelled. The agent keeps running; stop it with session action=kill.' };
      }
      return { task_id: taskId, status: task.status, cancelled: false, note: `Task already ${task.status}; a finished task never changes.` };
    },
  });
  return tool;
}
