/** The page's HTTP calls: same origin, the `tui-session` cookie rides along; a 401 sends the user to the login page. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function toLogin(): never {
  const next = location.pathname + location.search;
  location.assign(`/mobile/login?next=${encodeURIComponent(next)}`);
  throw new ApiError(401, 'login required');
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const res = await fetch(path, init);
  if (res.status === 401) toLogin();
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // A non-JSON answer (a proxy's error page): reported below by status.
  }
  if (!res.ok) throw new ApiError(res.status, (parsed as { error?: string } | undefined)?.error ?? `${method} ${path}: HTTP ${res.status}`);
  return parsed as T;
}

/** Writes keystrokes or text to a session's terminal (POST /sessions/:id/write). */
export function writeToSession(sessionId: string, data: string): Promise<unknown> {
  return api('POST', `/sessions/${encodeURIComponent(sessionId)}/write`, { data });
}
