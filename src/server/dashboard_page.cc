// The dashboard page: plain HTML + CSS + JavaScript, no external assets. It reads clusterd's own
// JSON views (/api/clusterd/v1/*: they work with the store mirror off), redraws every 2 s, loads
// the feed's backlog and then follows the event stream. Every number in the header is counted
// from what was drawn, so the header and the drawing cannot disagree.
#include "server/dashboard.h"

namespace clusterd::server {
namespace {

constexpr char kPage[] = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>clusterd</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2329}
header{background:#1d2329;color:#fff;padding:8px 16px;display:flex;gap:14px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:16px;margin:0}#status{opacity:.7}.count b{font-weight:600}
main{display:grid;grid-template-columns:minmax(440px,1fr) minmax(440px,1fr);gap:12px;padding:12px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px;min-width:0;overflow:auto}
section.wide{grid-column:1/-1}
h2{font-size:13px;margin:0 0 8px;text-transform:uppercase;letter-spacing:.04em;color:#56606b}
table{border-collapse:collapse;width:100%}td,th{padding:3px 6px;text-align:left;border-bottom:1px solid #eef0f2;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.heat{width:auto}.heat td{border-bottom:0}.heat td.cell,.heat td.absent{width:22px;height:22px;padding:0;border:2px solid #fff;border-radius:4px}
.heat td.cell.held{box-shadow:inset 0 0 0 2px #0003}
.lvl-healthy{background:#a5d6a7}.lvl-NotHandleFault{background:#e6ee9c}.lvl-SubHealthFault{background:#ffe082}
.lvl-PreSeparateNPU{background:#ffb74d}.lvl-RestartRequest,.lvl-RestartBusiness,.lvl-FreeRestartNPU,.lvl-RestartNPU{background:#ff8a65}
.lvl-SeparateNPU,.lvl-ManuallySeparateNPU{background:#e53935;color:#fff}.lvl-unknown{background:#b0bec5}
.legend{margin-bottom:6px}.legend span{display:inline-block;padding:1px 6px;margin:0 4px 4px 0;border-radius:3px}
.muted{color:#56606b}.state{font-family:ui-monospace,monospace}
.feed{max-height:300px;overflow:auto;font-family:ui-monospace,monospace;font-size:12px}
.occur{color:#c62828}.clear{color:#2e7d32}
.use-training{fill:#66bb6a;background:#66bb6a}.use-detection{fill:#ffca28;background:#ffca28}.use-decision{fill:#ffa726;background:#ffa726}
.use-process_restart{fill:#ef5350;background:#ef5350}.use-rescheduling{fill:#ab47bc;background:#ab47bc}.use-waiting_for_resources{fill:#90a4ae;background:#90a4ae}
svg text{font:11px system-ui,sans-serif;fill:#1d2329}svg text.on{fill:#fff}
.offender{color:#c62828;font-weight:600}
</style></head><body>
<header><h1>clusterd</h1>
<span class="count" id="count-nodes" data-count="0"><b>0</b> nodes</span>
<span class="count" id="count-npus" data-count="0"><b>0</b> NPUs</span>
<span class="count" id="count-held" data-count="0"><b>0</b> held by jobs</span>
<span class="count" id="count-faulted" data-count="0"><b>0</b> faulted</span>
<span class="count" id="count-jobs" data-count="0"><b>0</b> jobs</span>
<span class="count" id="count-recovering" data-count="0"><b>0</b> recovering</span>
<span class="count" id="count-offenders" data-count="0"><b>0</b> repeat offenders</span>
<span id="status">loading…</span></header>
<main>
<section><h2>NPUs by node</h2><div class="legend" id="legend"></div><table class="heat" id="heat"></table></section>
<section><h2>Jobs</h2><table id="jobs"><thead><tr><th>job</th><th>status</th><th class="num">pods</th><th class="num">NPUs</th><th>recovery</th><th>strategy</th><th class="num">faults</th><th class="num">ETTR</th></tr></thead><tbody></tbody></table></section>
<section class="wide"><h2>Recovery timeline (per job, last <span id="tl-span">-</span>)</h2><div class="legend" id="tl-legend"></div><div id="timeline"></div></section>
<section class="wide"><h2>Fault episodes (fault to training again)</h2><table id="episodes"><thead><tr><th>fault</th><th>where</th><th>job</th><th>occurred</th><th class="num">detected</th><th class="num">notified</th><th class="num">decided</th><th class="num">resumed</th><th class="num">total</th><th>strategy</th><th>state</th></tr></thead><tbody></tbody></table>
<div class="muted">detected, notified (the job's recovery cycle started) and decided (first strategy) from the fault's own time; resumed from the decision; total from the fault to training again.</div></section>
<section class="wide"><h2>Goodput per job</h2><table id="goodput"><thead><tr><th>job</th><th class="num">ETTR</th><th class="num">window</th><th class="num">training</th><th class="num">detection</th><th class="num">decision</th><th class="num">restart</th><th class="num">resched.</th><th class="num">waiting</th><th class="num">cycles</th></tr></thead><tbody></tbody></table></section>
<section><h2>Repeat offenders</h2><div id="policy" class="muted"></div><table id="offenders"><thead><tr><th>node</th><th class="num">faults</th><th>by level</th><th class="num">MTBF</th><th>verdict</th></tr></thead><tbody></tbody></table></section>
<section><h2>Fault feed (newest first)</h2><div id="feed" class="feed"></div></section>
</main>
<script>
const LEVELS=["healthy","NotHandleFault","SubHealthFault","PreSeparateNPU","RestartRequest","RestartBusiness","FreeRestartNPU","RestartNPU","SeparateNPU","ManuallySeparateNPU"];
const LEVEL_TEXT={healthy:"healthy, free",unknown:"unknown (fault on an NPU the node does not list)"};
const USES=["training","detection","decision","process_restart","rescheduling","waiting_for_resources"];
const JOB_COLOURS=["#42a5f5","#26c6da","#7e57c2","#5c6bc0","#00897b","#8d6e63","#29b6f6","#9575cd","#4db6ac","#78909c"];
const rank=l=>{const i=LEVELS.indexOf(l);return i<0?1:i;};
const esc=s=>String(s??"").replace(/[&<>"']/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"}[c]));
const q=new URLSearchParams(location.search);
let names={};  // job id -> namespace/name
const jobName=id=>names[id]||id;
async function get(p){const r=await fetch(p);if(!r.ok)throw new Error(p+": "+r.status);return r.json();}
const optional=p=>get(p).catch(()=>({items:[]}));
function npuNames(cm){const out=new Set();try{const cfg=JSON.parse(cm.data.DeviceInfoCfg);
 const list=(cfg.DeviceInfo||{}).DeviceList||{};for(const [k,v] of Object.entries(list)){if(!k.includes("/"))continue;
 if(k.endsWith("-Fault"))continue;for(const n of String(v).split(",")){if(n)out.add(n);}}}catch(e){}return out;}
function npuId(n){const m=/-(\d+)$/.exec(String(n))||/^[A-Za-z][A-Za-z-]*(\d+)$/.exec(String(n));return m?Number(m[1]):(/^\d+$/.test(String(n))?Number(n):-1);}
function secs(v){if(v===null||v===undefined)return "-";const s=Number(v);if(s<60)return s.toFixed(s<10?2:1)+"s";
 if(s<3600)return (s/60).toFixed(1)+"m";return (s/3600).toFixed(1)+"h";}
function pct(v){return v===null||v===undefined?"-":(100*v).toFixed(1)+"%";}
function clock(t){if(!t)return "-";const d=new Date(t);return isNaN(d)?"-":d.toLocaleTimeString();}
function setCount(id,n){const e=document.getElementById(id);e.dataset.count=n;e.querySelector("b").textContent=n;}

function drawHeat(nodes,cms,faults,jobs){
 const npus={};for(const n of nodes.items||[])npus[n.metadata.name]=new Set();
 for(const cm of cms.items||[]){const name=cm.metadata.name;if(!name.startsWith("mindx-dl-deviceinfo-"))continue;
  const node=name.slice("mindx-dl-deviceinfo-".length);npus[node]=npus[node]||new Set();for(const x of npuNames(cm))npus[node].add(npuId(x));}
 const holder={},colour={};let ci=0;
 for(const j of jobs.items||[]){const jn=j.namespace+"/"+j.name;
  for(const p of j.placement||[]){for(const d of p.npus||[]){holder[p.node+"/"+npuId(d)]=jn;if(!(jn in colour))colour[jn]=JOB_COLOURS[ci++%JOB_COLOURS.length];}}}
 const worst={};const put=(k,f)=>{if(!worst[k]||rank(f.level)>rank(worst[k].level))worst[k]=f;};
 for(const f of faults.items||[]){npus[f.node]=npus[f.node]||new Set();
  if(f.npu==="-"){for(const i of npus[f.node])put(f.node+"/"+i,f);}else put(f.node+"/"+npuId(f.npu),f);}
 let width=0;for(const s of Object.values(npus))for(const i of s)width=Math.max(width,i+1);
 for(const k of Object.keys(worst))width=Math.max(width,Number(k.split("/").pop())+1);
 let html="<tr><th>node</th>";for(let i=0;i<width;i++)html+='<th class="muted">'+i+"</th>";html+="</tr>";
 for(const node of Object.keys(npus).sort((a,b)=>a.localeCompare(b,undefined,{numeric:true}))){
  html+='<tr class="node-row" data-node="'+esc(node)+'"><th>'+esc(node)+"</th>";
  for(let i=0;i<width;i++){const k=node+"/"+i;const f=worst[k];const listed=npus[node].has(i);
   if(!f&&!listed){html+='<td class="absent"></td>';continue;}
   const cls=listed?(f?(LEVELS.includes(f.level)?f.level:"unknown"):"healthy"):"unknown";const job=holder[k]||"";
   const style=job&&cls==="healthy"?' style="background:'+colour[job]+'"':"";
   const title=node+" NPU "+i+": "+(f?f.level+" "+f.code+" ("+f.source+")":(listed?"healthy":"unknown"))+(job?" · job "+job:" · free");
   html+='<td class="cell lvl-'+esc(cls)+(job?" held":"")+'" id="cell-'+esc(node)+"-"+i+'" data-level="'+esc(f?f.level:(listed?"healthy":"unknown"))+
    '" data-job="'+esc(job)+'"'+style+' title="'+esc(title)+'"></td>';}
  html+="</tr>";}
 document.getElementById("heat").innerHTML=html;
 // The legend: every colour the map can use, the jobs holding NPUs first.
 let lg="";for(const [jn,c] of Object.entries(colour))lg+='<span class="legend-job" data-job="'+esc(jn)+'" style="background:'+c+';color:#fff">job '+esc(jn)+"</span>";
 for(const l of LEVELS.concat(["unknown"]))lg+='<span class="lvl-'+l+'" title="'+esc(l)+'">'+esc(LEVEL_TEXT[l]||l)+"</span>";
 lg+='<span class="muted">outlined: held by a job (hover for which)</span>';
 document.getElementById("legend").innerHTML=lg;
}

function drawJobs(jobs,rec,faults,goodput){
 const recBy={};for(const r of rec.items||[])recBy[r.jobId]=r;
 const gpBy={};for(const g of goodput.items||[])gpBy[g.jobId]=g;
 const fcount={};for(const f of faults.items||[])for(const j of f.jobs||[])fcount[j]=(fcount[j]||0)+1;
 let rows="";for(const j of jobs.items||[]){const r=recBy[j.jobId]||{};const g=gpBy[j.jobId]||{};
  const nf=fcount[j.jobId]||0;const jn=j.namespace+"/"+j.name;
  rows+='<tr class="job-row" id="job-'+esc(j.name)+'" data-faults="'+nf+'" data-cycles="'+esc(r.cycles||0)+'" data-job="'+esc(jn)+'" title="job id '+esc(j.jobId)+'"><td>'+esc(jn)+"</td><td>"+esc(j.status)+
  '</td><td class="num">'+esc(j.pods+"/"+j.replicas)+'</td><td class="num">'+esc(j.npus)+'</td><td class="state" data-state="'+esc(r.state||"")+'" data-ready="'+(r.ready!==false)+'">'+
  esc((r.state||"-")+(r.ready===false?" (not ready: record not durable, signals held)":""))+"</td><td>"+esc(r.strategy||"-")+'</td><td class="num">'+nf+'</td><td class="num">'+pct(g.ettr)+"</td></tr>";}
 document.querySelector("#jobs tbody").innerHTML=rows||'<tr><td colspan="8" class="muted">no jobs</td></tr>';
}

function drawTimeline(goodput){
 // From the oldest live job's first sight, at most an hour back and at least a minute.
 const now=Date.now();let start=now;
 for(const g of goodput.items||[]){if(g.status==="deleted")continue;const fs=Date.parse(g.firstSeen);if(fs<start)start=fs;}
 start=Math.min(Math.max(start,now-60*60*1000),now-60*1000);const span=Math.max(1,now-start);
 document.getElementById("tl-span").textContent=secs(span/1000);
 const W=1000,H=22,left=170;let out="";
 for(const g of goodput.items||[]){if(g.status==="deleted")continue;const jn=g.namespace+"/"+g.name;
  let bars="";for(const t of g.timeline||[]){const s=Math.max(start,Date.parse(t.start));const e=t.end?Date.parse(t.end):now;if(e<=start||e<=s)continue;
   const x=left+(s-start)/span*(W-left),w=Math.max(1,(e-s)/span*(W-left));const label=t.use+(t.strategy?" ("+t.strategy+")":"");
   bars+='<rect class="use-'+esc(t.use)+'" data-use="'+esc(t.use)+'" data-strategy="'+esc(t.strategy||"")+'" x="'+x.toFixed(1)+'" y="2" width="'+w.toFixed(1)+'" height="'+(H-4)+
    '"><title>'+esc(jn+": "+label+", "+clock(t.start)+" to "+(t.end?clock(t.end):"now")+" ("+secs(t.seconds)+")")+"</title></rect>";
   if(t.strategy&&w>60)bars+='<text class="on" x="'+(x+4).toFixed(1)+'" y="15">'+esc(t.strategy)+"</text>";}
  out+='<svg class="tl-row" id="tl-'+esc(g.name)+'" data-job="'+esc(jn)+'" width="100%" viewBox="0 0 '+W+" "+H+'" preserveAspectRatio="none" height="'+H+'">'+
   '<text x="0" y="15">'+esc(jn)+" · "+pct(g.windowEttr)+"</text>"+bars+"</svg>";}
 out+='<div class="muted">'+esc(new Date(start).toLocaleTimeString())+" to now; hover a bar for its phase, strategy and times</div>";
 document.getElementById("timeline").innerHTML=(goodput.items||[]).some(g=>g.status!=="deleted")?out:'<span class="muted">no jobs tracked</span>';
 document.getElementById("tl-legend").innerHTML=USES.map(u=>'<span class="use-'+u+'" style="color:#fff">'+u.replace(/_/g," ")+"</span>").join("");
}

function drawEpisodes(episodes){
 let rows="";for(const e of (episodes.items||[]).slice(0,50)){const s=e.seconds||{};const jn=e.namespace?e.namespace+"/"+e.name:(e.name||jobName(e.jobId));
  rows+='<tr class="episode-row" data-code="'+esc(e.code)+'" data-job="'+esc(jn)+'" data-state="'+esc(e.state)+'"><td>'+esc(e.code?e.code+" "+e.level:"no fault seen")+"</td><td>"+esc(e.where)+"</td><td>"+esc(jn)+
  "</td><td>"+esc(clock(e.occurred||e.detected))+'</td><td class="num">'+secs(s.detected)+'</td><td class="num">'+secs(s.notified)+'</td><td class="num">'+secs(s.decided)+
  '</td><td class="num">'+secs(s.resumed)+'</td><td class="num">'+(s.total!==null&&s.total!==undefined?secs(s.total):(s.open!==null&&s.open!==undefined?secs(s.open)+"…":"-"))+"</td><td>"+esc((e.strategies||[]).join(">")||"-")+"</td><td>"+esc(e.state)+"</td></tr>";}
 document.querySelector("#episodes tbody").innerHTML=rows||'<tr><td colspan="11" class="muted">no fault episodes</td></tr>';
}

function drawGoodput(goodput){
 let rows="";for(const g of goodput.items||[]){if(g.status==="deleted")continue;const l=g.lostSeconds||{};const jn=g.namespace+"/"+g.name;
  rows+='<tr class="goodput-row" id="goodput-'+esc(g.name)+'" data-job="'+esc(jn)+'" data-ettr="'+esc(g.ettr??"")+'"><td>'+esc(jn)+'</td><td class="num">'+pct(g.ettr)+'</td><td class="num">'+pct(g.windowEttr)+
  '</td><td class="num">'+secs(g.trainingSeconds)+'</td><td class="num">'+secs(l.detection)+'</td><td class="num">'+secs(l.decision)+'</td><td class="num">'+secs(l.process_restart)+
  '</td><td class="num">'+secs(l.rescheduling)+'</td><td class="num">'+secs(l.waiting_for_resources)+'</td><td class="num">'+esc(g.recoveryCycles)+"</td></tr>";}
 document.querySelector("#goodput tbody").innerHTML=rows||'<tr><td colspan="10" class="muted">no jobs tracked</td></tr>';
}

function drawOffenders(off){
 const p=off.policy||{};document.getElementById("policy").textContent=p.enabled?
  "policy: "+p.faults+" faults within "+p.windowHours+"h"+((p.levels||[]).length?" of "+p.levels.join(","):"")+", action "+p.action:"policy: off (faults are counted, nobody is judged)";
 let rows="";for(const n of (off.items||[]).slice(0,50)){const lv=Object.entries(n.byLevel||{}).map(([k,v])=>k+" "+v).join(", ");
  rows+='<tr class="offender-row" data-node="'+esc(n.node)+'" data-faults="'+esc(n.faults)+'" data-offender="'+(n.offender?"true":"false")+'"><td>'+esc(n.node)+'</td><td class="num">'+esc(n.faults)+"</td><td>"+esc(lv)+
  '</td><td class="num">'+secs(n.mtbfSeconds)+"</td><td"+(n.offender?' class="offender" title="'+esc(n.reason)+'">repeat offender':">-")+"</td></tr>";}
 document.querySelector("#offenders tbody").innerHTML=rows||'<tr><td colspan="5" class="muted">no node has faulted</td></tr>';
}

function countDrawn(){
 const cells=[...document.querySelectorAll("#heat td.cell")];
 setCount("count-nodes",document.querySelectorAll("#heat tr.node-row").length);
 setCount("count-npus",cells.length);
 setCount("count-held",cells.filter(c=>c.dataset.job).length);
 setCount("count-faulted",cells.filter(c=>c.dataset.level!=="healthy").length);
 setCount("count-jobs",document.querySelectorAll("#jobs tr.job-row").length);
 setCount("count-recovering",document.querySelectorAll("#episodes tr.episode-row[data-state=recovering]").length);
 setCount("count-offenders",document.querySelectorAll('#offenders tr.offender-row[data-offender="true"]').length);
}

async function draw(){
 const [nodes,cms,faults,jobs,rec,goodput,episodes,off]=await Promise.all([get("/api/clusterd/v1/nodes"),get("/api/clusterd/v1/deviceinfo"),
  get("/api/clusterd/v1/faults"),optional("/api/clusterd/v1/jobs"),optional("/api/clusterd/v1/recovery"),optional("/api/clusterd/v1/goodput"),
  optional("/api/clusterd/v1/episodes"),optional("/api/clusterd/v1/offenders")]);
 const n={};for(const j of jobs.items||[])n[j.jobId]=j.namespace+"/"+j.name;for(const g of goodput.items||[])if(!n[g.jobId]&&g.name)n[g.jobId]=g.namespace+"/"+g.name;names=n;
 drawHeat(nodes,cms,faults,jobs);drawJobs(jobs,rec,faults,goodput);drawTimeline(goodput);drawEpisodes(episodes);drawGoodput(goodput);drawOffenders(off);
 countDrawn();document.getElementById("status").textContent="updated "+new Date().toLocaleTimeString();
}

function feedLine(e){const div=document.createElement("div");div.className="feed-entry "+e.change;div.dataset.code=e.code;
 div.textContent=clock(e.at)+"  "+e.change.padEnd(5)+"  "+e.node+" "+e.npu+"  "+e.code+"  "+e.level+((e.jobs||[]).length?"  jobs "+e.jobs.map(jobName).join(","):"");return div;}
function addFeed(e,atTop){const f=document.getElementById("feed");if(atTop)f.prepend(feedLine(e));else f.append(feedLine(e));while(f.childNodes.length>300)f.removeChild(f.lastChild);}
async function feed(){let after=0;try{const recent=await get("/api/clusterd/v1/events/recent?limit=200");after=recent.lastSeq||0;
  const items=recent.items||[];for(let i=items.length-1;i>=0;i--)addFeed(items[i],false);
  if(!items.length)document.getElementById("feed").innerHTML='<span class="muted">no fault changes since clusterd started</span>';}catch(e){}
 if(!window.EventSource||q.get("feed")==="off")return;const es=new EventSource("/api/clusterd/v1/events?after="+after);
 es.addEventListener("fault",ev=>{const f=document.getElementById("feed");if(f.querySelector(".muted"))f.innerHTML="";addFeed(JSON.parse(ev.data),true);draw().catch(()=>{});});}
async function loop(){try{await draw();}catch(e){document.getElementById("status").textContent="error: "+e.message;}setTimeout(loop,2000);}
loop().then(feed);
</script></body></html>
)HTML";

}  // namespace

const char* DashboardHtml() { return kPage; }

}  // namespace clusterd::server
