/**
 * Every ACP connection tuicd holds, by id. The executable is the `ego_executable` setting, read on
 * every launch (never from a request); the root must be an existing absolute directory. A
 * connection whose first generation does not come up is not kept. Shutdown ends every child.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';

import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { AcpConnection, type AcpConnectionDeps } from './acpConnection.js';
import { acpError } from './acpError.js';

export const AcpRegistryLimits = {
  /** Connections (agent processes) at once. */
  MAX_CONNECTIONS: 32,
} as const;

export interface AcpRegistryDeps extends AcpConnectionDeps {
  /** The configured executable, read per launch. */
  executable: () => string;
}

export class AcpRegistry {
  private readonly connections = new Map<string, AcpConnection>();

  constructor(private readonly deps: AcpRegistryDeps) {}

  get size(): number {
    return this.connections.size;
  }

  async open(root: string): Promise<AcpConnection> {
    const executable = await this.launchable(root, 'connect');
    if (this.connections.size >= AcpRegistryLimits.MAX_CONNECTIONS)
      throw acpError('busy', `at most ${AcpRegistryLimits.MAX_CONNECTIONS} ACP connections; delete one first`, { operation: 'connect' });
    const connection = new AcpConnection(this.deps, root);
    this.connections.set(connection.id, connection);
    try {
      await connection.open(executable, root);
    } catch (err) {
      this.connections.delete(connection.id);
      await connection.delete('initialize failed');
      throw err;
    }
    return connection;
  }

  /** Settles the current generation and starts the next one under the same id. */
  async reconnect(id: string, root: string): Promise<AcpConnection> {
    const connection = this.get(id, 'reconnect');
    const executable = await this.launchable(root, 'reconnect', id);
    await connection.reconnect(executable, root);
    return connection;
  }

  get(id: string, operation: string): AcpConnection {
    const connection = this.connections.get(id);
    if (connection === undefined) throw acpError('not_found', `no ACP connection ${quoteClientInput(id)}`, { connectionId: id, operation });
    return connection;
  }

  /** The connection, or undefined (the stream's socket callbacks, which must not throw). */
  find(id: string): AcpConnection | undefined {
    return this.connections.get(id);
  }

  async delete(id: string): Promise<void> {
    const connection = this.get(id, 'disconnect');
    this.connections.delete(id);
    await connection.delete('deleted');
  }

  /** Shutdown: every child's group ended. */
  async dispose(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((c) => c.delete('shutdown')));
  }

  private async launchable(root: string, operation: string, connectionId?: string): Promise<string> {
    const executable = this.deps.executable();
    if (executable === '')
      throw acpError('capability_unavailable', 'no ACP agent is configured: set ego_executable in the config to the agent binary', { connectionId, operation });
    if (!isAbsolute(root)) throw acpError('invalid_input', `root must be an absolute path: ${quoteClientInput(root)}`, { connectionId, operation });
    const info = await stat(root).catch(() => null);
    if (info === null || !info.isDirectory())
      throw acpError('invalid_input', `root is not a directory: ${quoteClientInput(root)}`, { connectionId, operation });
    return executable;
  }
}
