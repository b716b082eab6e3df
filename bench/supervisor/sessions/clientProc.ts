/** The bench side of client.ts: starts it as a tracked child and sends it one command at a time. */
import { fileURLToPath } from 'node:url';

import { spawnTracked, type Tracked } from '../../http/children.js';
import {
  RESULT_PREFIX,
  type BareHoldResult,
  type ClientAnswer,
  type ClientCommand,
  type EchoResult,
  type HealthResult,
  type StreamResult,
  type ViewerCloseResult,
  type ViewerOpenResult,
} from './protocol.js';

type ResultOf<C extends ClientCommand['op']> = C extends 'stream' | 'bareStream'
  ? StreamResult
  : C extends 'echo' | 'bareEcho'
    ? EchoResult
    : C extends 'health'
      ? HealthResult
      : C extends 'bareHold'
        ? BareHoldResult
        : C extends 'viewerOpen'
          ? ViewerOpenResult
          : C extends 'viewerClose'
            ? ViewerCloseResult
            : Record<string, never>;

const ANSWER_RE = new RegExp(`^${RESULT_PREFIX}(.*)$`);

export class LoadClient {
  private nextId = 1;

  private constructor(private readonly proc: Tracked) {}

  static start(): LoadClient {
    const script = fileURLToPath(new URL('./client.js', import.meta.url));
    return new LoadClient(spawnTracked(process.execPath, [script]));
  }

  get pid(): number {
    return this.proc.child.pid!;
  }

  /** Sends one command; rejects with the client's error, or when no answer came within `timeoutMs`. */
  async call<C extends ClientCommand>(cmd: C, timeoutMs: number): Promise<ResultOf<C['op']>> {
    const id = this.nextId++;
    // Registered before the command goes out, so the answer cannot slip past.
    const answered = this.waitForAnswer(id, timeoutMs, cmd.op);
    this.proc.child.stdin!.write(JSON.stringify({ ...cmd, id }) + '\n');
    const a = await answered;
    if (!a.ok) throw new Error(`${cmd.op}: ${a.error}`);
    return a.result as ResultOf<C['op']>;
  }

  private async waitForAnswer(id: number, timeoutMs: number, op: string): Promise<ClientAnswer> {
    // Answers to other ids (none are concurrent today) are skipped until ours comes.
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`load client: no answer to ${op} within ${timeoutMs / 1000} s`);
      const m = await this.proc.waitForLine(ANSWER_RE, left).catch((err: Error) => {
        throw new Error(`load client (${op}): ${err.message.replace('ready line', 'answer')}; ${this.proc.tail().slice(-300)}`);
      });
      const a = JSON.parse(m[1]!) as ClientAnswer;
      if (a.id === id) return a;
    }
  }

  /** Closing stdin makes the client exit on its own; stop() escalates if it does not. */
  async stop(): Promise<void> {
    this.proc.child.stdin?.end();
    await this.proc.stop();
  }
}
