/**
 * `ui`: show something to the human (REFERENCE §6.6). Headless tuicd has no window, so every action
 * becomes an event on the bus (SSE) that web clients render: `ui-tab`, `mcp-toast`, `mcp-confirm`.
 */
import { Type } from 'typebox';

import type { EventBus } from '../../events/eventBus.js';
import type { EventPayload } from '../../events/eventMap.js';
import type { ConfirmBroker } from '../confirmBroker.js';
import { callerOrigin } from './callerOrigin.js';
import type { CallerOriginDeps } from './callerOrigin.js';
import { defineTool, describeArgument, requireAction, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

export const TOAST_LEVELS = ['info', 'warn', 'error'] as const;
export type ToastLevel = (typeof TOAST_LEVELS)[number];

/** The notification sounds every client knows how to play (spec: ui toast sound). */
export const NOTIFICATION_SOUNDS = ['question', 'completion', 'error', 'warning', 'info', 'attention'] as const;
export type NotificationSound = (typeof NOTIFICATION_SOUNDS)[number];

/** `sound: true` picks the level's own sound. */
const SOUND_FOR_LEVEL: Readonly<Record<ToastLevel, NotificationSound>> = { info: 'info', warn: 'warning', error: 'error' };

export interface UiToolDeps extends CallerOriginDeps {
  bus: EventBus;
  confirmBroker: ConfirmBroker;
}

export function parseLevel(raw: unknown): ToastLevel {
  if (raw === undefined || raw === null) return 'info';
  if (typeof raw === 'string' && (TOAST_LEVELS as readonly string[]).includes(raw)) return raw as ToastLevel;
  throw new ToolError(`Invalid level '${describeArgument(raw)}'. Must be: ${TOAST_LEVELS.join(', ')}`);
}

/** Resolves `sound` to a concrete name or silence; an unknown name is an error, never a silently silent toast. */
export function resolveToastSound(raw: unknown, level: ToastLevel): NotificationSound | null {
  if (raw === undefined || raw === null || raw === false) return null;
  if (raw === true) return SOUND_FOR_LEVEL[level];
  if (typeof raw === 'string' && (NOTIFICATION_SOUNDS as readonly string[]).includes(raw)) return raw as NotificationSound;
  throw new ToolError(`Invalid sound '${describeArgument(raw)}'. Must be true, false or one of: ${NOTIFICATION_SOUNDS.join(', ')}`);
}

function requiredString(args: Record<string, unknown>, key: string, action: string): string {
  const value = args[key];
  if (typeof value !== 'string' || value.trim() === '') throw new ToolError(`ui action=${action} requires '${key}' (a non-empty string)`);
  return value;
}

function optionalString(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ToolError(`'${key}' must be a string`);
  return value;
}

function optionalBoolean(args: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = args[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw new ToolError(`'${key}' must be a boolean`);
  return value;
}

/** The schemes a tab can show; anything else (vscode://, javascript:, …) cannot work in an iframe. */
export function checkTabUrl(url: string): void {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  const scheme = match?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') {
    if (!URL.canParse(url)) throw new ToolError(`Invalid url '${url}'`);
    return;
  }
  if (scheme === 'file' && url.startsWith('file://') && url.length > 'file://'.length) return;
  if (scheme === 'tuic' && /^tuic:\/\/(edit|open)\/.+/.test(url)) return;
  throw new ToolError(
    `Unsupported url '${url}' for ui action=tab. Use http(s)://, file://, tuic://edit/<path>?line=N (// for an absolute path) or tuic://open/<path>; custom schemes such as vscode:// do not work in a tab`,
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
      id: Type.Optional(Type.String({ description: 'tab: dedup key (required)' })),
      title: Type.Optional(Type.String({ description: 'tab/toast/confirm: required' })),
      html: Type.Optional(Type.String({ description: 'tab: content (xor url)' })),
      url: Type.Optional(Type.String({ description: 'tab: address (xor html)' })),
      pinned: Type.Optional(Type.Boolean({ default: false })),
      focus: Type.Optional(Type.Boolean({ default: true })),
      message: Type.Optional(Type.String()),
      level: Type.Optional(Type.String({ enum: [...TOAST_LEVELS], default: 'info' } as never)),
      sound: Type.Optional(Type.Union([Type.Boolean(), Type.String({ enum: [...NOTIFICATION_SOUNDS] } as never)])),
    },
    handler: async (args, caller) => {
      const action = requireAction(tool, args);
      const origin = callerOrigin(caller, deps);
      switch (action) {
        case 'toast': {
          const title = requiredString(args, 'title', action);
          const message = optionalString(args, 'message');
          const level = parseLevel(args['level']);
          const sound = resolveToastSound(args['sound'], level);
          const event: EventPayload<'mcp-toast'> = { title, ...(message === undefined ? {} : { message }), level, sound, ...origin };
          deps.bus.publish('mcp-toast', event);
          return { ok: true };
        }
        case 'tab': {
          const id = requiredString(args, 'id', action);
          const title = requiredString(args, 'title', action);
          const html = optionalString(args, 'html');
          const url = optionalString(args, 'url');
          if ((html === undefined) === (url === undefined)) throw new ToolError("ui action=tab needs exactly one of 'html' or 'url'");
          if (url !== undefined) checkTabUrl(url);
          const event: EventPayload<'ui-tab'> = {
            id,
            title,
            ...(html === undefined ? {} : { html }),
            ...(url === undefined ? {} : { url }),
            pinned: optionalBoolean(args, 'pinned', false),
            focus: optionalBoolean(args, 'focus', true),
            ...(origin.origin_session_id === undefined ? {} : { origin_session_id: origin.origin_session_id }),
          };
          deps.bus.publish('ui-tab', event);
          return { ok: true };
        }
        case 'confirm': {
          if (!caller.isLoopback) throw new ToolError('ui action=confirm is only available to local callers (the unix socket or loopback TCP)');
          const title = requiredString(args, 'title', action);
          const message = optionalString(args, 'message');
          const outcome = await deps.confirmBroker.request({
            title,
            ...(message === undefined ? {} : { message }),
            ...(origin.origin_session_id === undefined ? {} : { originSessionId: origin.origin_session_id }),
            signal: caller.signal,
          });
          return outcome.reason === undefined ? { confirmed: outcome.confirmed } : { confirmed: outcome.confirmed, reason: outcome.reason };
        }
        default:
          throw new ToolError('ui action=screenshot needs the desktop WebView and is not available in headless tuicd');
      }
    },
  });
  return tool;
}
