/**
 * `progress`: an agent appends one `done` or `blocked` entry to the project's progress journal, what
 * a human reads to see where the agents are. Project and agent come from the caller, never from the
 * arguments. Secrets are redacted before the length checks, so a long secret never earns a refusal
 * the redacted text would not get.
 */
import { Type } from 'typebox';

import { redactSecrets } from '../../../shared/redactor.js';
import type { ConfigStore } from '../../config/configStore.js';
import type { EventBus } from '../../events/eventBus.js';
import { ProgressConstants } from '../../progress/progressJournal.js';
import type { ProgressJournal } from '../../progress/progressJournal.js';
import { callerAgentType } from '../callerAgentType.js';
import { callerOrigin } from './callerOrigin.js';
import type { CallerOriginDeps } from './callerOrigin.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

/** What an agent may report. */
export const REPORTED_KINDS = ['done', 'blocked'] as const;
/** Kinds TUICommander writes itself from what it observes; an agent claiming one is refused. */
const HOST_WRITTEN_KINDS = ['intent', 'delegated', 'message'];

export interface ProgressToolDeps extends CallerOriginDeps {
  bus: EventBus;
  config: ConfigStore;
  progressJournal: ProgressJournal;
  /** Whether progress tracking is on for an agent type (agents.json `progress_tracking`); absent = always. */
  trackedFor?: (agentType: string | null) => boolean;
  /** The agent detected in a live PTY session, by session id. */
  sessionAgentType?: (sessionId: string) => string | null | undefined;
}

/** The text redacted, then held to its limit (the schema's maxLength, applied here after redaction). */
function checkedText(raw: string, key: 'text' | 'step', max: number): string {
  const redacted = redactSecrets(raw);
  if (redacted.length > max) throw new ToolError('invalid_input', `'${key}' is ${redacted.length} characters; the limit is ${max}`, { field: key });
  return redacted;
}

const INVALID_TYPE = `Invalid type '{got}'. Must be: ${REPORTED_KINDS.join(', ')}`;

export function createProgressTool(deps: ProgressToolDeps): NativeTool {
  return defineTool({
    name: 'progress',
    summary:
      'Report progress on the current project: one short entry when a unit of work is done, or when you are blocked and need the human. Project and agent are taken from your connection.',
    properties: {
      type: Type.String({
        enum: [...REPORTED_KINDS],
        description: 'done = finished a unit of work; blocked = cannot continue without the human',
        errorMessage: INVALID_TYPE,
      } as never),
      text: Type.String({
        maxLength: ProgressConstants.TEXT_MAX_CHARS,
        description: 'What was done, or what blocks you',
        errorMessage: "'text' must be a string",
      }),
      step: Type.Optional(
        Type.String({ maxLength: ProgressConstants.STEP_MAX_CHARS, description: 'Short name of the plan step', errorMessage: "'step' must be a string" }),
      ),
    },
    required: ['type', 'text'],
    // The lengths count after redaction (a secret becomes a shorter marker): checkedText holds them.
    checkedAs: {
      text: Type.String({ errorMessage: "'text' must be a string" }),
      step: Type.Optional(Type.String({ errorMessage: "'step' must be a string" })),
    },
    refuse: (args, caller) => {
      // The catalog hides the tool while tracking is off; a call that raced the toggle still gets a clear answer.
      if (!deps.config.get().progress_tracking) {
        throw new ToolError('forbidden', 'progress_tracking_disabled: Progress collection is off (progress_tracking is false in config.json)');
      }
      if (deps.trackedFor) {
        const bound = caller.boundSessionId === null ? undefined : deps.sessionAgentType?.(caller.boundSessionId);
        if (!deps.trackedFor(callerAgentType(bound, caller.clientName))) {
          throw new ToolError('forbidden', 'progress_tracking_disabled: Progress collection is off for this agent (progress_tracking is false in agents.json)');
        }
      }
      const type = args['type'];
      if (typeof type === 'string' && HOST_WRITTEN_KINDS.includes(type)) {
        throw new ToolError(
          'invalid_input',
          `Progress type '${type}' is recorded by TUICommander itself and cannot be reported. Use: ${REPORTED_KINDS.join(', ')}`,
          { field: 'type' },
        );
      }
    },
    _meta: { 'anthropic/alwaysLoad': true },
    handler: async (args, caller) => {
      const type = args['type'] as (typeof REPORTED_KINDS)[number];
      if (args['text'] === '') throw new ToolError('invalid_input', "progress requires 'text' (what was done, or what blocks you)", { field: 'text' });
      const text = checkedText(args['text'] as string, 'text', ProgressConstants.TEXT_MAX_CHARS);
      const step = args['step'] === undefined ? undefined : checkedText(args['step'] as string, 'step', ProgressConstants.STEP_MAX_CHARS);

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
