/**
 * The fuzz run: starts a tuicd, sends generated cases (bounded by count and time) from a few
 * concurrent workers, judges every answer, watches for tuicd's death (and restarts it, a bounded
 * number of times, to keep looking), and reports findings grouped, with seed and index to replay.
 */
import { send } from './client.js';
import type { Answer } from './client.js';
import { generateCase, requestBytes } from './cases.js';
import type { Case } from './cases.js';
import { FuzzTarget } from './harness.js';
import type { ProcInfo } from './harness.js';
import { describeAnswer, describeRequest, Findings, groupKey, judge, KIND_ORDER, KIND_TITLES, normalizeMessage } from './oracle.js';
import type { FindingKind, Group } from './oracle.js';
import { Rng } from './rng.js';

export interface FuzzOptions {
  seed: number;
  /** Most cases to send. */
  requests: number;
  /** Stop sending new cases after this long. */
  seconds: number;
  concurrency: number;
  /** Only these case indexes (replay). */
  replay?: number[];
  /** TUIC_HTTP_ENGINE for the tuicd under test; default: its own choice. */
  engine?: string;
  /** Fuzz the TCP listener too (default true). */
  tcp?: boolean;
  /** Examples kept per finding group. */
  examples?: number;
  /** Restarts after a crash before giving up. */
  maxRestarts?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** Also log every case slower than 1 s. */
  verbose?: boolean;
}

export interface CrashRecord {
  code: number | null;
  signal: string | null;
  afterCases: number;
  inFlight: Array<{ index: number; request: string }>;
  recent: Array<{ index: number; request: string }>;
  stderrTail: string;
}

export interface FuzzReport {
  seed: number;
  engine: string;
  sent: number;
  harnessRequests: number;
  /** Times a fuzzed config save turned TCP off or moved it and the harness restored it. */
  tcpRestores: number;
  elapsedMs: number;
  byFamily: Record<string, number>;
  byStatus: Record<string, number>;
  expectedTimeouts: number;
  crashes: CrashRecord[];
  findings: Findings;
  rssBeforeKb: number | null;
  rssAfterKb: number | null;
  rssPeakKb: number | null;
  ptyHostRssBeforeKb: number | null;
  ptyHostRssAfterKb: number | null;
  finalExitCode: number | null;
  leftovers: ProcInfo[];
  loggedErrors: { total: number; warnings: number; distinct: Array<{ msg: string; count: number }> };
  /** Any finding (crash, 5xx, non-JSON error, no answer, hang, …). */
  failed: boolean;
}

const MAINTENANCE_MS = 1_000;

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const log = opts.log ?? (() => undefined);
  const examples = opts.examples ?? 3;
  const maxRestarts = opts.maxRestarts ?? 3;
  const started = Date.now();
  const deadline = started + opts.seconds * 1000;
  const findings = new Findings();
  const crashes: CrashRecord[] = [];
  const byFamily: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  let expectedTimeouts = 0;
  let sent = 0;
  let lastProgress = 0;
  let harnessRequests = 0;
  let tcpRestores = 0;
  const queue = opts.replay ? [...opts.replay] : null;
  let next = 0;
  const takeIndex = (): number | null => {
    if (Date.now() >= deadline) return null;
    if (queue) return queue.length > 0 ? queue.shift()! : null;
    return next < opts.requests ? next++ : null;
  };

  let target = await FuzzTarget.start({ seed: opts.seed, tcp: opts.tcp ?? true, ...(opts.engine ? { engine: opts.engine } : {}) });
  const engine = /http engine (\w+)/.exec(target.tuicd.stdout)?.[1] ?? 'unknown';
  log(`tuicd pid ${target.pid} (http engine ${engine}), socket ${target.tuicd.socketPath}, tcp 127.0.0.1:${target.ctx.tcpPort ?? '-'}`);
  const rssBefore = target.rss();
  const ptyBefore = target.ptyHostRss();
  let peakKb = rssBefore?.peakKb ?? null;
  let epoch = 0;
  let restarting: Promise<void> | null = null;
  let gaveUp = false;
  const inFlight = new Map<number, Case>();
  const recent: Case[] = [];

  const sample = () => {
    const r = target.rss();
    if (r) peakKb = Math.max(peakKb ?? 0, r.peakKb);
  };

  /** tuicd died: record it, restart (bounded), and let the workers go on. */
  const onCrash = (): Promise<void> => {
    if (restarting) return restarting;
    restarting = (async () => {
      const exit = target.exit!;
      const stderr = target.tuicd.stderr;
      crashes.push({
        code: exit.code,
        signal: exit.signal,
        afterCases: sent,
        inFlight: [...inFlight.values()].map((c) => ({ index: c.index, request: describeRequest(c) })),
        recent: recent.slice(-6).map((c) => ({ index: c.index, request: describeRequest(c) })),
        stderrTail: stderr.slice(-3000),
      });
      const first = [...inFlight.values()][0] ?? recent[recent.length - 1];
      if (first)
        findings.add(
          'crash',
          'crash',
          first.route,
          0,
          `tuicd exited code ${exit.code} signal ${exit.signal}`,
          { index: first.index, request: describeRequest(first), answer: `tuicd exited (code ${exit.code}, signal ${exit.signal})`, notes: first.notes },
          examples,
        );
      else
        findings.add(
          'crash',
          'crash',
          '(between cases)',
          0,
          `tuicd exited code ${exit.code} signal ${exit.signal}`,
          { index: -1, request: '', answer: '', notes: [] },
          examples,
        );
      log(`CRASH: tuicd exited (code ${exit.code}, signal ${exit.signal}) after ${sent} cases; in flight: ${[...inFlight.keys()].join(', ') || 'none'}`);
      harnessRequests += target.harnessRequests;
      tcpRestores += target.tcpRestores;
      const stopped = await target.stop();
      if (stopped.leftovers.length > 0) log(`stopped ${stopped.leftovers.length} process(es) the dead tuicd left behind`);
      if (crashes.length > maxRestarts || Date.now() >= deadline) {
        gaveUp = true;
        return;
      }
      target = await FuzzTarget.start({ seed: opts.seed, tcp: opts.tcp ?? true, ...(opts.engine ? { engine: opts.engine } : {}) });
      epoch++;
      log(`restarted tuicd (pid ${target.pid})`);
    })().finally(() => {
      restarting = null;
    });
    return restarting;
  };

  const record = (c: Case, a: Answer) => {
    byFamily[c.family] = (byFamily[c.family] ?? 0) + 1;
    const statusKey = a.kind === 'answer' ? String(a.status) : a.kind;
    byStatus[statusKey] = (byStatus[statusKey] ?? 0) + 1;
    if (a.kind === 'timeout' && c.mayBlock) expectedTimeouts++;
    for (const f of judge(c, a, engine)) {
      const message = f.kind === 'no-answer' || f.kind === 'hang' ? f.detail : `${f.detail} ${normalizeMessage(a.body.toString('utf8'))}`.trim();
      findings.add(
        f.kind,
        groupKey(f.kind, c),
        c.route,
        a.status,
        message,
        { index: c.index, request: describeRequest(c), answer: describeAnswer(a), notes: c.notes },
        examples,
      );
    }
  };

  const worker = async () => {
    for (;;) {
      if (restarting) await restarting;
      if (gaveUp) return;
      if (target.exit) {
        await onCrash();
        continue;
      }
      const index = takeIndex();
      if (index === null) return;
      const c = generateCase(Rng.forCase(opts.seed, index), target.ctx, index);
      const myEpoch = epoch;
      const dest = c.listener === 'tcp' && target.ctx.tcpPort !== null ? { port: target.ctx.tcpPort } : target.socket;
      inFlight.set(index, c);
      recent.push(c);
      if (recent.length > 32) recent.shift();
      const sentAt = Date.now();
      const a = await send(dest, requestBytes(c), { timeoutMs: c.timeoutMs, head: c.method === 'HEAD', sseReadMs: 150, ...(c.ws ? { ws: c.ws } : {}) });
      inFlight.delete(index);
      sent++;
      if (a.kind === 'dropped' && c.listener === 'tcp' && (await target.tcpStoppedDuring(sentAt, Date.now()))) {
        // Remote access went off under it (a fuzzed config save): closing is what turning it off means.
        byFamily[c.family] = (byFamily[c.family] ?? 0) + 1;
        byStatus['closed with the listener'] = (byStatus['closed with the listener'] ?? 0) + 1;
        continue;
      }
      if (opts.verbose && a.kind === 'error') log(`case #${index} ${c.listener} could not connect: ${a.note ?? ''}`);
      if (opts.verbose && a.ms > (process.env.FUZZ_SLOW_MS ? Number(process.env.FUZZ_SLOW_MS) : 1000))
        log(`slow case #${index} ${c.family} ${c.route}: ${a.kind} ${a.status} after ${a.ms} ms`);
      // A failure to answer because tuicd died is the crash's finding, not this case's.
      if (a.kind !== 'answer' && a.kind !== 'timeout') await new Promise((r) => setTimeout(r, 50));
      if (myEpoch !== epoch || target.exit) {
        if (a.kind === 'answer') record(c, a);
        else {
          byFamily[c.family] = (byFamily[c.family] ?? 0) + 1;
          byStatus['lost to crash'] = (byStatus['lost to crash'] ?? 0) + 1;
        }
        continue;
      }
      record(c, a);
      if (sent % 500 === 0 && sent !== lastProgress && (lastProgress = sent))
        log(`${sent} cases, ${findings.total} findings, ${Math.round((Date.now() - started) / 1000)} s`);
    }
  };

  let maintaining = true;
  const maintenance = (async () => {
    while (maintaining) {
      await new Promise((r) => setTimeout(r, MAINTENANCE_MS));
      if (!maintaining) break;
      if (restarting || target.exit) continue;
      sample();
      await target.maintain();
    }
  })();

  const onSignal = () => {
    log('interrupted: stopping tuicd');
    void target.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, () => worker()));
    maintaining = false;
    await maintenance;
    if (target.exit && !gaveUp) await onCrash();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  let rssAfter: { rssKb: number; peakKb: number } | null = null;
  let ptyAfter: number | null = null;
  let finalExitCode: number | null = null;
  let leftovers: ProcInfo[] = [];
  let loggedErrors = { total: 0, warnings: 0, distinct: [] as Array<{ msg: string; count: number }> };
  if (!gaveUp) {
    // Let in-flight work settle, then give the sessions back before measuring.
    await new Promise((r) => setTimeout(r, 500));
    rssAfter = target.rss();
    if (rssAfter) peakKb = Math.max(peakKb ?? 0, rssAfter.peakKb);
    ptyAfter = target.ptyHostRss();
    loggedErrors = target.loggedErrors();
    harnessRequests += target.harnessRequests;
    tcpRestores += target.tcpRestores;
    const stopped = await target.stop();
    finalExitCode = stopped.exitCode;
    leftovers = stopped.leftovers;
    if (target.exit === null && finalExitCode !== 0) {
      findings.add(
        'crash',
        'shutdown',
        '(shutdown)',
        0,
        `tuicd exited ${finalExitCode} on SIGTERM`,
        { index: -1, request: 'SIGTERM at the end of the run', answer: target.tuicd.stderr.slice(-500), notes: [] },
        examples,
      );
    }
  }

  return {
    seed: opts.seed,
    engine,
    sent,
    harnessRequests,
    tcpRestores,
    elapsedMs: Date.now() - started,
    byFamily,
    byStatus,
    expectedTimeouts,
    crashes,
    findings,
    rssBeforeKb: rssBefore?.rssKb ?? null,
    rssAfterKb: rssAfter?.rssKb ?? null,
    rssPeakKb: peakKb,
    ptyHostRssBeforeKb: ptyBefore,
    ptyHostRssAfterKb: ptyAfter,
    finalExitCode,
    leftovers,
    loggedErrors,
    failed: findings.failing > 0,
  };
}

const routesOf = (g: Group) => {
  const routes = g.routes.length === 1 ? g.routes[0]! : `${g.routes.length}${g.routes.length >= 12 ? '+' : ''} routes (${g.routes.join('; ')})`;
  return g.key !== '' && !(g.routes.length === 1 && g.routes[0] === g.key) ? `${g.key} — ${routes}` : routes;
};

const mib = (kb: number | null) => (kb === null ? 'n/a' : `${(kb / 1024).toFixed(1)} MiB`);

function sortedGroups(findings: Findings, kind: FindingKind): Group[] {
  return [...findings.groups.values()].filter((g) => g.kind === kind).sort((a, b) => b.count - a.count || a.routes[0]!.localeCompare(b.routes[0]!));
}

export function formatReport(r: FuzzReport, opts: { maxGroups?: number } = {}): string {
  const maxGroups = opts.maxGroups ?? 40;
  const L: string[] = [];
  const f = r.findings;
  L.push(`tuicd fuzz: seed ${r.seed}, http engine ${r.engine}, ${(r.elapsedMs / 1000).toFixed(1)} s`);
  L.push(`  requests sent:            ${r.sent} (plus ${r.harnessRequests} harness requests)`);
  if (r.tcpRestores > 0)
    L.push(`  TCP listener restored:    ${r.tcpRestores}× (a fuzzed config save turned it off or moved it; TCP cases meanwhile could not connect)`);
  L.push(
    `  by family:                ${Object.entries(r.byFamily)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  L.push(
    `  answers:                  ${Object.entries(r.byStatus)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}×${v}`)
      .join(' ')}`,
  );
  L.push(`  crashes (tuicd exited):   ${f.count('crash')}`);
  L.push(`  5xx answers:              ${f.count('5xx')}`);
  L.push(`  non-JSON error answers:   ${f.count('non-json-error')}`);
  L.push(`  no answer (dropped):      ${f.count('no-answer')}`);
  L.push(`  hangs:                    ${f.count('hang')} (plus ${r.expectedTimeouts} expected timeouts of blocking requests)`);
  const more: Array<[FindingKind, string]> = [
    ['truncated', 'truncated answers'],
    ['huge-error-body', 'huge error bodies'],
    ['cross-site-accepted', 'cross-site accepted'],
    ['auth-bypass', 'bad credentials accepted'],
    ['simple-content-type-accepted', 'text/plain body accepted'],
    ['ws-internal-error', 'WebSocket 1011 closes'],
    ['mcp-internal-error', 'MCP internal errors'],
  ];
  for (const [k, label] of more) L.push(`  ${`${label}:`.padEnd(26)}${f.count(k)}`);
  L.push(`  supervisor RSS:           before ${mib(r.rssBeforeKb)}, after ${mib(r.rssAfterKb)}, peak ${mib(r.rssPeakKb)} (VmHWM)`);
  L.push(`  pty host RSS:             before ${mib(r.ptyHostRssBeforeKb)}, after ${mib(r.ptyHostRssAfterKb)}`);
  L.push(`  tuicd exit on SIGTERM:    ${r.finalExitCode ?? 'n/a'}; processes still running after tuicd stopped (killed by pid): ${r.leftovers.length}`);
  for (const p of r.leftovers.slice(0, 5)) L.push(`      pid ${p.pid}: ${p.cmd}`);
  L.push(`  tuicd logged:             ${r.loggedErrors.total} error/fatal lines, ${r.loggedErrors.warnings} warnings`);
  for (const e of r.loggedErrors.distinct.slice(0, 8)) L.push(`      ${String(e.count).padStart(5)}× ${e.msg}`);
  L.push(`  RESULT: ${r.failed ? 'FAIL' : 'PASS'} (${f.total} findings in ${f.groups.size} distinct groups)`);

  for (const c of r.crashes) {
    L.push('');
    L.push(`CRASH after ${c.afterCases} cases: code ${c.code}, signal ${c.signal}`);
    for (const x of c.inFlight) L.push(`  in flight #${x.index}: ${x.request}`);
    for (const x of c.recent) L.push(`  recent    #${x.index}: ${x.request}`);
    L.push(`  stderr tail: ${c.stderrTail.split('\n').slice(-8).join('\n    ')}`);
  }
  let shown = 0;
  for (const kind of KIND_ORDER) {
    const groups = sortedGroups(f, kind);
    if (groups.length === 0) continue;
    L.push('');
    L.push(`== ${KIND_TITLES[kind]}: ${f.count(kind)} in ${groups.length} group(s)`);
    for (const g of groups) {
      if (shown++ >= maxGroups) {
        L.push(`- [${g.count}×] ${routesOf(g)}${g.status ? ` → ${g.status}` : ''}: ${g.message} (seed ${r.seed} index ${g.examples[0]?.index ?? '?'})`);
        continue;
      }
      L.push(`- [${g.count}×] ${routesOf(g)}${g.status ? ` → ${g.status}` : ''}: ${g.message}`);
      for (const ex of g.examples) {
        L.push(`    seed ${r.seed} index ${ex.index}${ex.notes.length ? ` (${ex.notes.join('; ').slice(0, 200)})` : ''}`);
        L.push(`      request: ${ex.request}`);
        L.push(`      answer:  ${ex.answer}`);
      }
    }
  }
  if (f.total > 0) {
    L.push('');
    L.push(`Replay one case against a fresh tuicd: node dist/test/fuzz/run.js --seed ${r.seed} --replay <index>[,<index>…]`);
  }
  return L.join('\n');
}
