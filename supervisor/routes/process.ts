/** GET /process/stats (CPU and memory of tuicd, the pty host and each session tree) and GET /process/monitor (a live page). */
import { Type } from 'typebox';

import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { ProcessStats } from '../processStats.js';
import type { SessionService } from '../sessions/sessionService.js';

/** Self-contained: no external scripts, styles or fonts, so it works on a phone over the TCP listener. */
const MONITOR_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>tuicd processes</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1rem;background:#111;color:#ddd}
h1{font-size:1.1rem;margin:0 0 .5rem}
table{border-collapse:collapse;width:100%}
th,td{padding:.3rem .5rem;border-bottom:1px solid #333;text-align:right;white-space:nowrap}
th:nth-child(-n+3),td:nth-child(-n+3){text-align:left}
tr.tuicd td{color:#8cf}tr.pty-host td{color:#fc8}
#status{color:#888;font-size:.85rem}
.bar{display:inline-block;height:.6rem;background:#4a8;vertical-align:middle;margin-left:.3rem}
</style></head><body>
<h1>tuicd processes</h1><div id="status">loading…</div>
<table><thead><tr><th>kind</th><th>session</th><th>name</th><th>pid</th><th>procs</th><th>RSS MiB</th><th>CPU %</th></tr></thead><tbody id="rows"></tbody></table>
<script>
const rows = document.getElementById('rows'), status = document.getElementById('status');
function cell(text){const td=document.createElement('td');td.textContent=text;return td;}
async function refresh(){
  try{
    const r = await fetch('stats',{cache:'no-store'}); const data = await r.json();
    rows.replaceChildren(...data.map(p=>{const tr=document.createElement('tr');tr.className=p.kind;
      const cpu=cell(p.cpu_pct.toFixed(1));const bar=document.createElement('span');bar.className='bar';bar.style.width=Math.min(100,p.cpu_pct)+'px';cpu.append(bar);
      tr.append(cell(p.kind),cell(p.session_id?p.session_id.slice(0,8):''),cell(p.name),cell(p.pid),cell(p.processes),cell((p.rss_kb/1024).toFixed(1)),cpu);return tr;}));
    status.textContent='updated '+new Date().toLocaleTimeString()+' · '+data.length+' rows';
  }catch(e){status.textContent='error: '+e;}
}
refresh(); setInterval(refresh, 2000);
</script></body></html>`;

const TAG = 'monitoring';

/** One process tree (ProcessRow). */
const ProcessRowSchema = Type.Object({
  kind: Type.Union([Type.Literal('tuicd'), Type.Literal('pty-host'), Type.Literal('session')]),
  session_id: Type.Optional(Type.String({ description: 'Present for a session.' })),
  name: Type.String({ description: "The root process's name." }),
  pid: Type.Integer(),
  processes: Type.Integer({ minimum: 1, description: 'Processes in the tree: the root and its descendants.' }),
  rss_kb: Type.Integer({ minimum: 0 }),
  cpu_pct: Type.Number({ minimum: 0, description: 'Share of one core since the previous sample of this tree (0 on the first).' }),
});

export function processRoutes(sessions: SessionService, ptyHostPid: () => number | null): Route[] {
  const stats = new ProcessStats();
  return [
    defineRoute({
      method: 'GET',
      pattern: '/process/stats',
      tag: TAG,
      summary: "CPU and memory of tuicd, the pty host and each live session's process tree (Linux /proc)",
      answers: { 200: Type.Array(ProcessRowSchema) },
      handler: () => {
        const roots: Array<{ kind: 'tuicd' | 'pty-host' | 'session'; pid: number; session_id?: string }> = [{ kind: 'tuicd', pid: process.pid }];
        const host = ptyHostPid();
        if (host !== null) roots.push({ kind: 'pty-host', pid: host });
        for (const r of sessions.list()) if (!r.exit) roots.push({ kind: 'session', pid: r.pid, session_id: r.session_id });
        return json(stats.sample(roots));
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/process/monitor',
      tag: TAG,
      summary: 'A self-contained page that shows /process/stats live, refreshed every 2 s',
      answers: { 200: { description: 'An HTML page with no external scripts, styles or fonts.', contentType: 'text/html' } },
      handler: () => ({ status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8' }, body: MONITOR_HTML }),
    }),
  ];
}
