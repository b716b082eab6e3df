/**
 * What the typed edges cost per call: the compiled schema check that runs before every route and
 * tool handler, on the hot paths' own inputs (POST /sessions/:id/write's body, a session tool
 * call's arguments), against the JSON.parse of the same body that the edge did before anyway.
 */
import { Bench } from 'tinybench';
import type { TSchema } from 'typebox';

import { checker } from '../../shared/schemaCheck.js';
import { createSessionTool } from '../../supervisor/mcp/tools/session.js';
import { WriteBody } from '../../supervisor/sessions/sessionSchemas.js';
import type { SessionService } from '../../supervisor/sessions/sessionService.js';
import { type BenchContext, type BenchModule, type BenchRow, failedRow, median, row, withNote } from '../harness.js';

const TIME_MS = { full: 500, quick: 100 };
const GROUP = 'compiled input check, per call';

const WRITE_BODY = '{"data":"ls -la\\r"}';
const TOOL_ARGS = { action: 'output', session_id: 'a1b2c3', limit: 50, format: 'text' };

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  // The session tool's advertised input schema: what tools/call checks its arguments against.
  const tool = createSessionTool({ sessions: {} as SessionService });
  const checkArgs = checker(tool.definition.inputSchema as unknown as TSchema, 'arguments');
  const checkWrite = checker(WriteBody, 'body');
  try {
    checkWrite(JSON.parse(WRITE_BODY));
    checkArgs(TOOL_ARGS);
  } catch (err) {
    return [failedRow(GROUP, 'write body', ctx, 'ns/call', `sanity: a valid input was refused: ${(err as Error).message}`)];
  }
  const values = { parse: [] as number[], parseCheck: [] as number[], args: [] as number[] };
  let sink: unknown;
  for (let rep = 0; rep < ctx.repetitions; rep++) {
    const bench = new Bench({ time: ctx.quick ? TIME_MS.quick : TIME_MS.full, warmupTime: 100, throws: true });
    bench
      .add('parse', () => void (sink = JSON.parse(WRITE_BODY)))
      .add('parse+check', () => void (sink = checkWrite(JSON.parse(WRITE_BODY))))
      .add('args', () => void (sink = checkArgs(TOOL_ARGS)));
    await bench.run();
    const nsPerCall = (name: string): number => {
      const task = bench.getTask(name)!;
      const result = task.result;
      if (result.state !== 'completed') throw new Error(`${name}: ${result.state}`);
      return 1e9 / result.throughput.p50;
    };
    values.parse.push(nsPerCall('parse'));
    values.parseCheck.push(nsPerCall('parse+check'));
    values.args.push(nsPerCall('args'));
  }
  void sink;
  const parse = { name: 'JSON.parse alone', median: median(values.parse) };
  return [
    withNote(row(GROUP, 'JSON.parse of a write body', ctx, 'ns/call', values.parse), 'what the edge did before the check existed'),
    withNote(row(GROUP, 'JSON.parse + check, write body', ctx, 'ns/call', values.parseCheck, parse), 'POST /sessions/:id/write; lower is better'),
    withNote(row(GROUP, 'check, session tool arguments', ctx, 'ns/call', values.args), 'tools/call session action=output; lower is better'),
  ];
};
