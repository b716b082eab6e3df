/**
 * Newline-delimited JSON-RPC on stdio, the MCP stdio transport's framing: one message per line in,
 * one whole line per message out. Lines are handed over in order; a handler that returns a promise
 * (initialize) is awaited before the next line is read.
 */

export function readLines(input: NodeJS.ReadableStream, onLine: (line: string) => void | Promise<void>, onEnd: () => void): void {
  let pending = '';
  const queue: string[] = [];
  let pumping = false;
  let ended = false;
  const pump = async () => {
    if (pumping) return;
    pumping = true;
    while (queue.length > 0) {
      const result = onLine(queue.shift()!);
      if (result !== undefined) await result;
    }
    pumping = false;
    if (ended) onEnd();
  };
  input.setEncoding('utf8');
  input.on('data', (chunk: string) => {
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      queue.push(pending.slice(0, nl).replace(/\r$/, ''));
      pending = pending.slice(nl + 1);
    }
    void pump();
  });
  input.once('end', () => {
    if (pending.trim() !== '') queue.push(pending);
    pending = '';
    ended = true;
    void pump();
  });
}

/** Whole lines to stdout; a client that closed its end stops the bridge (nothing can reach it). */
export function lineWriter(output: NodeJS.WritableStream, onClosed: () => void): (line: string) => void {
  output.on('error', onClosed);
  return (line) => {
    output.write(`${line}\n`);
  };
}
