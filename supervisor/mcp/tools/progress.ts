/**
 * `progress`: an agent appends one `done` or `blocked` entry to the progress journal (spec "Project
 * Progress reporting", REFERENCE §6.5). Project and agent come from the caller, never from the
 * arguments. Secrets are redacted before the length checks, so a long secret never earns a refusal
 * the redacted text would not get.
 */
import { Type } from 'typebox';

import { redactSecrets } from '../../../shared/redactor.js';
import type { ConfigStore } from '../../config/configStore.js';
import type { EventBus } from '../../events/eventBus.js';
import { ProgressConstants } from '../../progress/progressJournal.js';
import type { ProgressJournal } from '../../progress/progressJournal.js';
import { callerOrigin } from './callerOrigin.js';
import type { CallerOriginDeps } from './callerOrigin.js';
import { defineTool, describeArgument, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

/** What an agent may report. */
export const REPORTED_KINDS = ['done', 'blocked'] as const;
/** Kinds TUICommander writes itself from what it observes; an agent claiming one is refused. */
const HOST_WRITTEN_KINDS = ['intent', 'delegated', 'message'];

export interface ProgressToolDeps extends CallerOriginDeps {
  bus: EventBus;
  config: ConfigStore;
  progressJournal: ProgressJournal;
}

function checkedText(raw: unknown, key: 'text' | 'step', max: number): string {
  if (typeof raw !== 'string') throw new ToolError(`'${key}' must be a string`);
  const redacted = redactSecrets(raw);
  if (redacted.length > max) throw new ToolError(`'${key}' is ${redacted.length} characters; the limit is ${max}`);
  return redacted;
}

export function createProgressTool(deps: ProgressToolDeps): NativeTool {
  return defineTool({
    name: 'progress',
    summary:
      'Report progress on the current project: one short entry when a unit of work is done, or when you are blocked and need the human. Project and agent are taken from your connection.',
    properties: {
      type: Type.String({ enum: [...REPORTED_KINDS], description: 'done = finished a unit of work; blocked = cannot continue without the human' } as never),
      text: Type.String({ maxLength: ProgressConstants.TEXT_MAX_CHARS, description: 'What was done, or what blocks you' }),
      step: Type.Optional(Type.String({ maxLength: ProgressConstants.STEP_MAX_CHARS, description: 'Short name of the plan step' })),
    },
    required: ['type', 'text'],
    _meta: { 'anthropic/alwaysLoad': true },
    handler: async (args, caller) => {
      // The catalog hides the tool while tracking is off; a call that raced the toggle still gets a clear answer.
      if (!deps.config.get().progress_tracking) {
        throw new ToolError('progress_tracking_disabled: Progress collection is off (progress_tracking is false in config.json)');
      }
      const type = args['type'];
      if (typeof type === 'string' && HOST_WRITTEN_KINDS.includes(type)) {
        throw new ToolError(`Progress type '${type}' is recorded by TUICommander itself and cannot be reported. Use: ${REPORTED_KINDS.join(', ')}`);
      }
      if (type !== 'done' && type !== 'blocked') throw new ToolError(`Invalid type '${describeArgument(type)}'. Must be: ${REPORTED_KINDS.join(', ')}`);
      if (args['text'] === undefined || args['text'] === '') throw new ToolError("progress requires 'text' (what was done, or what blocks you)");
      const text = checkedText(args['text'], 'text', ProgressConstants.TEXT_MAX_CHARS);
      const step = args['step'] === undefined || args['step'] === null ? undefined : checkedText(args['step'], 'step', ProgressConstants.STEP_MAX_CHARS);

      const origin = callerOrigin(caller, deps);
      const entry = await deps.progressJournal.append({
        kind: type,
        project: origin.origin_repo_path ?? 'unknown',
        agent: caller.tuicSession ?? caller.clientName ?? 'unknown',
        text,
        ...(step === undefined ? {} : { step }),
        ...(caller.boundSessionId === null ? {} : { session_id: caller.boundSessionId }),
      });
      deps.bus.publish('progress-recorded', { entry });
      return { ok: true, id: entry.id };
    },
  });
}
