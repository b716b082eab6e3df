/**
 * The viewers that said which client they belong to (`?client_id=` on the stream), by session: where
 * a client's output watcher matches go, as `{"type":"watcher-lines","session_id","lines"}` frames.
 */
import type { ViewerSocket } from './viewerSocket.js';

export interface WatcherLinesFrame {
  type: 'watcher-lines';
  session_id: string;
  lines: Array<{ text: string; matched_ids: string[] }>;
}

export class WatcherFrames {
  private readonly bySession = new Map<string, Map<string, Set<ViewerSocket>>>();

  add(sessionId: string, clientId: string, ws: ViewerSocket): void {
    let clients = this.bySession.get(sessionId);
    if (clients === undefined) this.bySession.set(sessionId, (clients = new Map()));
    let sockets = clients.get(clientId);
    if (sockets === undefined) clients.set(clientId, (sockets = new Set()));
    sockets.add(ws);
  }

  remove(sessionId: string, clientId: string, ws: ViewerSocket): void {
    const clients = this.bySession.get(sessionId);
    const sockets = clients?.get(clientId);
    if (sockets === undefined) return;
    sockets.delete(ws);
    if (sockets.size === 0) clients!.delete(clientId);
    if (clients!.size === 0) this.bySession.delete(sessionId);
  }

  /** Clients with a viewer on the session. */
  clientsOf(sessionId: string): Iterable<string> {
    return this.bySession.get(sessionId)?.keys() ?? [];
  }

  /** To each of the client's viewers of the session; a viewer over its buffer limit drops it (it is a notice, not output). */
  send(clientId: string, frame: WatcherLinesFrame): void {
    const sockets = this.bySession.get(frame.session_id)?.get(clientId);
    if (sockets === undefined) return;
    const text = JSON.stringify(frame);
    for (const ws of sockets) ws.cork(() => ws.send(text, false));
  }
}
