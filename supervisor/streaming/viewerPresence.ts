/**
 * Which sessions someone is watching on the /mobile page right now: the page opens its stream with
 * `?client=mobile` only while its session view is on screen, so a push about a session the user is
 * already looking at can be skipped (issue 18: none while a viewer of that session is active).
 */
export class ViewerPresence {
  private readonly counts = new Map<string, number>();

  add(sessionId: string): void {
    this.counts.set(sessionId, (this.counts.get(sessionId) ?? 0) + 1);
  }

  remove(sessionId: string): void {
    const n = (this.counts.get(sessionId) ?? 0) - 1;
    if (n > 0) this.counts.set(sessionId, n);
    else this.counts.delete(sessionId);
  }

  watched(sessionId: string): boolean {
    return this.counts.has(sessionId);
  }
}
