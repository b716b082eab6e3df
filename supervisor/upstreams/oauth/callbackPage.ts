/**
 * The page a browser lands on after the authorization server redirects back: it says plainly what
 * happened and, when it did not work, what to do next. No script, nothing from the request echoed
 * but the upstream's name (escaped).
 */

export type CallbackOutcome =
  | { kind: 'authorized'; upstream: string }
  | { kind: 'denied'; upstream: string; detail: string }
  | { kind: 'expired'; upstream: string | null; reason: string }
  | { kind: 'failed'; upstream: string; detail: string };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The HTTP status the page goes out with. */
export function outcomeStatus(outcome: CallbackOutcome): number {
  switch (outcome.kind) {
    case 'authorized':
      return 200;
    case 'expired':
      return 410;
    case 'denied':
      return 403;
    default:
      return 502;
  }
}

export function callbackPage(outcome: CallbackOutcome): string {
  const retry = (name: string | null) =>
    `To try again, start a new authorization for ${name === null ? 'the upstream' : `<b>${escapeHtml(name)}</b>`} (the Authorize button, or <code>POST /mcp/upstreams/oauth/start</code>).`;
  let title: string;
  let body: string;
  switch (outcome.kind) {
    case 'authorized':
      title = 'Authorized';
      body = `<p>tuicd is now authorized for <b>${escapeHtml(outcome.upstream)}</b>; its tools are being connected. You can close this page.</p>`;
      break;
    case 'denied':
      title = 'Authorization denied';
      body = `<p>The authorization server refused access for <b>${escapeHtml(outcome.upstream)}</b> (${escapeHtml(outcome.detail)}). Nothing was authorized.</p><p>${retry(outcome.upstream)}</p>`;
      break;
    case 'expired':
      title = 'This authorization request is no longer valid';
      body = `<p>${escapeHtml(outcome.reason)} Nothing was authorized.</p><p>${retry(outcome.upstream)}</p>`;
      break;
    default:
      title = 'Authorization failed';
      body = `<p>The code could not be exchanged for tokens for <b>${escapeHtml(outcome.upstream)}</b>: ${escapeHtml(outcome.detail)}</p><p>${retry(outcome.upstream)}</p>`;
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>tuicd: ${title}</title></head><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem"><h1>${title}</h1>${body}</body></html>`;
}
