import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metrics } from '../../supervisor/metrics.js';

describe('Metrics', () => {
  it('renders JSON: unlabelled as numbers, labelled as k=v maps with sorted names, gauges read live', () => {
    const m = new Metrics();
    let subscribers = 3;
    m.counter('total_spawned', 'Sessions spawned');
    m.counter('failed_spawns', 'Session spawns that failed');
    m.counter('http_requests_total', 'HTTP responses sent');
    m.gauge('sse_subscribers', 'Live subscribers', () => subscribers);
    m.inc('total_spawned');
    m.inc('total_spawned', {}, 2);
    m.inc('http_requests_total', { status: '200', listener: 'socket' });
    m.inc('http_requests_total', { listener: 'socket', status: '200' });
    m.inc('http_requests_total', { listener: 'tcp', status: '401' });
    assert.deepEqual(m.toJson(), {
      total_spawned: 3,
      failed_spawns: 0,
      http_requests_total: { 'listener=socket,status=200': 2, 'listener=tcp,status=401': 1 },
      sse_subscribers: 3,
    });
    subscribers = 7;
    assert.equal(m.toJson()['sse_subscribers'], 7);
    assert.equal(m.value('sse_subscribers'), 7);
  });

  it('reads values back by labels in any order, 0 for unknown ones', () => {
    const m = new Metrics();
    m.counter('c', 'help');
    m.inc('c', { a: '1', b: '2' }, 5);
    assert.equal(m.value('c', { b: '2', a: '1' }), 5);
    assert.equal(m.value('c', { a: '1' }), 0);
    assert.equal(m.value('missing'), 0);
  });

  it('throws on an unknown metric', () => {
    const m = new Metrics();
    assert.throws(() => m.inc('nope'), /unknown metric nope/);
    assert.throws(() => m.cell('nope'), /unknown metric nope/);
  });

  it('keeps the first help when a counter is declared twice, with its values', () => {
    const m = new Metrics();
    m.counter('c', 'first');
    m.inc('c');
    m.counter('c', 'second');
    assert.equal(m.value('c'), 1);
    assert.match(m.toPrometheus(), /# HELP tuicd_c first\n/);
  });

  it('cell() returns the same cell for the same labels in any order', () => {
    const m = new Metrics();
    m.counter('http_requests_total', 'help');
    const a = m.cell('http_requests_total', { listener: 'tcp', status: '200' });
    const b = m.cell('http_requests_total', { status: '200', listener: 'tcp' });
    assert.equal(a, b);
    assert.notEqual(m.cell('http_requests_total', { listener: 'tcp', status: '404' }), a);
    a.value += 4;
    m.inc('http_requests_total', { status: '200', listener: 'tcp' });
    assert.equal(m.value('http_requests_total', { listener: 'tcp', status: '200' }), 5);
  });

  it('keeps label values holding , or = apart', () => {
    const m = new Metrics();
    m.counter('c', 'help');
    m.inc('c', { a: 'x,b=y' });
    m.inc('c', { a: 'x', b: 'y' }, 10);
    assert.equal(m.value('c', { a: 'x,b=y' }), 1);
    assert.equal(m.value('c', { a: 'x', b: 'y' }), 10);
    const text = m.toPrometheus('');
    assert.ok(text.includes('c{a="x,b=y"} 1\n'), text);
    assert.ok(text.includes('c{a="x",b="y"} 10\n'), text);
  });

  it('is not relabelled when the caller mutates its labels object afterwards', () => {
    const m = new Metrics();
    m.counter('c', 'help');
    const labels = { route: '/a' };
    m.inc('c', labels);
    labels.route = '/b';
    assert.ok(m.toPrometheus('').includes('c{route="/a"} 1\n'));
    assert.equal(m.value('c', { route: '/a' }), 1);
  });
});

describe('Metrics.toPrometheus', () => {
  it('renders HELP and TYPE lines, a 0 sample for untouched counters, labelled samples and live gauges', () => {
    const m = new Metrics();
    let uptime = 12;
    m.counter('total_spawned', 'Sessions spawned');
    m.counter('http_requests_total', 'HTTP responses sent, by listener and status');
    m.gauge('uptime_seconds', 'Seconds since start', () => uptime);
    m.inc('http_requests_total', { listener: 'socket', status: '200' }, 3);
    uptime = 99;
    assert.equal(
      m.toPrometheus(),
      [
        '# HELP tuicd_total_spawned Sessions spawned',
        '# TYPE tuicd_total_spawned counter',
        'tuicd_total_spawned 0',
        '# HELP tuicd_http_requests_total HTTP responses sent, by listener and status',
        '# TYPE tuicd_http_requests_total counter',
        'tuicd_http_requests_total{listener="socket",status="200"} 3',
        '# HELP tuicd_uptime_seconds Seconds since start',
        '# TYPE tuicd_uptime_seconds gauge',
        'tuicd_uptime_seconds 99',
        '',
      ].join('\n'),
    );
  });

  it('uses the given prefix', () => {
    const m = new Metrics();
    m.counter('c', 'h');
    m.inc('c');
    assert.equal(m.toPrometheus('x_'), '# HELP x_c h\n# TYPE x_c counter\nx_c 1\n');
  });

  it('escapes backslash, double quote and newline in label values', () => {
    const m = new Metrics();
    m.counter('c', 'h');
    m.inc('c', { path: 'C:\\dir "q"\nnext' });
    const sample = m
      .toPrometheus('')
      .split('\n')
      .find((l) => l.startsWith('c{'));
    assert.equal(sample, 'c{path="C:\\\\dir \\"q\\"\\nnext"} 1');
  });

  it('reads gauges at scrape time, every scrape', () => {
    const m = new Metrics();
    let reads = 0;
    m.gauge('g', 'h', () => ++reads);
    assert.equal(reads, 0);
    assert.match(m.toPrometheus(), /^tuicd_g 1$/m);
    assert.match(m.toPrometheus(), /^tuicd_g 2$/m);
  });
});
