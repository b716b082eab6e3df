/**
 * `ui`: show something to the human. Headless tuicd has no window, so every action becomes an event
 * on the bus (SSE) that web clients render: `ui-tab`, `mcp-toast`, `mcp-confirm`.
 */
import { Type } from 'typebox';

import type { EventBus } from '../../events/eventBus.js';
import { NOTIFICATION_SOUNDS, TOAST_LEVELS, type EventPayload, type NotificationSound, type ToastLevel } from '../../events/eventMap.js';
import type { ConfirmBroker } from '../confirmBroker.js';
import { callerOrigin } from './callerOrigin.js';
import type { CallerOriginDeps } from './callerOrigin.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

export { NOTIFICATION_SOUNDS, TOAST_LEVELS, type NotificationSound, type ToastLevel } from '../../events/eventMap.js';

/** `sound: true` picks the level's own sound. */
const SOUND_FOR_LEVEL: Readonly<Record<ToastLevel, NotificationSound>> = { info: 'info', warn: 'warning', error: 'error' };

export interface UiToolDeps extends CallerOriginDeps {
  bus: EventBus;
  confirmBroker: ConfirmBroker;
}

/** `sound` as the schema lets it through: true (the level's own sound), false (silence) or a sound's name. */
export type ToastSoundArg = boolean | NotificationSound | undefined;

/** Resolves `sound` to a concrete name or silence (an unknown name never gets here: the schema refuses it). */
export function resolveToastSound(raw: ToastSoundArg, level: ToastLevel): NotificationSound | null {
  if (raw === undefined || raw === false) return null;
  return raw === true ? SOUND_FOR_LEVEL[level] : raw;
}

/** The arguments as the schema checked them. */
interface UiArgs {
  action: 'tab' | 'toast' | 'confirm' | 'screenshot';
  id?: string;
  title?: string;
  html?: string;
  url?: string;
  pinned?: boolean;
  focus?: boolean;
  message?: string;
  level?: ToastLevel;
  sound?: ToastSoundArg;
}

/** An argument the action needs: present and not blank. */
function requiredString(args: UiArgs, key: 'id' | 'title'): string {
  const value = args[key];
  if (value === undefined || value.trim() === '')
    throw new ToolError('invalid_input', `ui action=${args.action} requires '${key}' (a non-empty string)`, { field: key });
  return value;
}

/** `'<key>' must be a string`: the ui tool's wording for a mistyped text argument. */
const textArg = (key: string, options: Record<string, unknown>) => Type.String({ ...options, errorMessage: `'${key}' must be a string` });
const flagArg = (key: string, options: Record<string, unknown>) => Type.Boolean({ ...options, errorMessage: `'${key}' must be a boolean` });

/** The schemes a tab can show; anything else (vscode://, javascript:, …) cannot work in an iframe. */
export function checkTabUrl(url: string): void {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  const scheme = match?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') {
    if (!URL.canParse(url)) throw new ToolError('invalid_input', `Invalid url '${url}'`, { field: 'url' });
    return;
  }
  if (scheme === 'file' && url.startsWith('file://') && url.length > 'file://'.length) return;
  if (scheme === 'tuic' && /^tuic:\/\/(edit|open)\/.+/.test(url)) return;
  throw new ToolError(
    'invalid_input',
    `Unsupported url '${url}' for ui action=tab. Use http(s)://, file://, tuic://edit/<path>?line=N (// for an absolute path) or tuic://open/<path>; custom schemes such as vscode:// do not work in a tab`,
    { field: 'url' },
  );
}

export function createUiTool(deps: UiToolDeps): NativeTool {
  const tool: NativeTool = defineTool({
    name: 'ui',
    summary: 'Show something to the human at the TUICommander clients: a tab, a toast notification, or a yes/no question.',
    actions: {
      tab: 'open or replace a tab (id = dedup key; title; html or url; pinned default false; focus default true) → {ok:true}',
      toast: 'show a notification (title, message?, level info|warn|error, sound true|false|name) → {ok:true}',
      confirm:
        'ask a yes/no question (title, message?); waits up to 300 s for the first answer from any client → {confirmed} or {confirmed:false, reason}. Local callers only',
      screenshot: 'not available in headless tuicd (needs the desktop WebView)',
    },
    notes:
      'url schemes: http(s):// and file:// load in a sandboxed iframe; tuic://edit/<path>?line=N opens an editor (// prefix for an absolute path); tuic://open/<path> opens a preview. ' +
      `sound true picks the level's sound; names: ${NOTIFICATION_SOUNDS.join(', ')} (attention = blocked on the user).`,
    properties: {
      id: Type.Optional(textArg('id', { description: 'tab: dedup key (required)' })),
      title: Type.Optional(textArg('title', { description: 'tab/toast/confirm: required' })),
      html: Type.Optional(textArg('html', { description: 'tab: content (xor url)' })),
      url: Type.Optional(textArg('url', { description: 'tab: address (xor html)' })),
      pinned: Type.Optional(flagArg('pinned', { default: false })),
      focus: Type.Optional(flagArg('focus', { default: true })),
      message: Type.Optional(textArg('message', {})),
      level: Type.Optional(
        Type.String({ enum: [...TOAST_LEVELS], default: 'info', errorMessage: `Invalid level '{got}'. Must be: ${TOAST_LEVELS.join(', ')}` } as never),
      ),
      sound: Type.Optional(
        Type.Union([Type.Boolean(), Type.String({ enum: [...NOTIFICATION_SOUNDS] } as never)], {
          errorMessage: `Invalid sound '{got}'. Must be true, false or one of: ${NOTIFICATION_SOUNDS.join(', ')}`,
        }),
      ),
    },
    handler: async (raw, caller) => {
      const args = raw as unknown as UiArgs;
      const origin = callerOrigin(caller, deps);
      switch (args.action) {
        case 'toast': {
          const title = requiredString(args, 'title');
          const { message } = args;
          const level = args.level ?? 'info';
          const sound = resolveToastSound(args.sound, level);
          const event: EventPayload<'mcp-toast'> = { title, ...(message === undefined ? {} : { message }), level, sound, ...origin };
          deps.bus.publish('mcp-toast', event);
          return { ok: true };
        }
        case 'tab': {
          const id = requiredString(args, 'id');
          const title = requiredString(args, 'title');
          const { html, url } = args;
          if ((html === undefined) === (url === undefined)) throw new ToolError('invalid_input', "ui action=tab needs exactly one of 'html' or 'url'");
          if (url !== undefined) checkTabUrl(url);
          const event: EventPayload<'ui-tab'> = {
            id,
            title,
            ...(html === undefined ? {} : { html }),
            ...(url === undefined ? {} : { url }),
            pinned: args.pinned ?? false,
            focus: args.focus ?? true,
            ...(origin.origin_session_id === undefined ? {} : { origin_session_id: origin.origin_session_id }),
          };
          deps.bus.publish('ui-tab', event);
          return { ok: true };
        }
        case 'confirm': {
          if (!caller.isLoopback) throw new ToolError('forbidden', 'ui action=confirm is only available to local callers (the unix socket or loopback TCP)');
          const title = requiredString(args, 'title');
          const { message } = args;
          const outcome = await deps.confirmBroker.request({
            title,
            ...(message === undefined ? {} : { message }),
            ...(origin.origin_session_id === undefined ? {} : { originSessionId: origin.origin_session_id }),
            signal: caller.signal,
          });
          return outcome.reason === undefined ? { confirmed: outcome.confirmed } : { confirmed: outcome.confirmed, reason: outcome.reason };
        }
        default:
          throw new ToolError('not_implemented', 'ui action=screenshot needs the desktop WebView and is not available in headless tuicd');
      }
    },
  });
  return tool;
}
