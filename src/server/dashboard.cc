#include "server/dashboard.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cluster/fault_centre.h"
#include "common/log.h"
#include "common/metrics.h"
#include "model/config_map_names.h"

namespace clusterd::server {
namespace {

constexpr int kMaxEventStreams = 4;  // each holds a producer thread
constexpr char kClusterInfoNamespace[] = "mindx-dl";

std::string Key(const std::string& node, const std::string& npu, const std::string& code) {
  return absl::StrCat(node, "|", npu, "|", code);
}

// The node an entry of a cluster-info ConfigMap describes (entries are named after the node's
// device-info, switch-info or node-info ConfigMap).
std::string NodeOfEntry(const std::string& entry) {
  for (std::string_view prefix :
       {model::kDeviceInfoPrefix, model::kSwitchInfoPrefix, model::kNodeInfoPrefix}) {
    if (entry.size() > prefix.size() && entry.compare(0, prefix.size(), prefix) == 0) {
      return entry.substr(prefix.size());
    }
  }
  return entry;
}

void AddRow(cluster::FaultViewRow& r, std::map<std::string, FaultFeed::State>* by_node) {
  FaultFeed::Entry e;
  e.node = std::move(r.node);
  e.npu = std::move(r.npu);
  e.code = std::move(r.code);
  e.level = std::move(r.level);
  e.source = std::move(r.source);
  e.jobs = std::move(r.jobs);
  std::string key = Key(e.node, e.npu, e.code);
  FaultFeed::State& state = (*by_node)[e.node];
  state.emplace(std::move(key), std::move(e));
}

// The page. Plain HTML + CSS + JavaScript, no external assets. It redraws from the JSON
// endpoints every 2 s and appends the event stream to the feed as it arrives.
constexpr char kPage[] = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>clusterd</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2329}
header{background:#1d2329;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:baseline}
header h1{font-size:16px;margin:0}#status{opacity:.8}
main{display:grid;grid-template-columns:minmax(420px,1fr) minmax(380px,1fr);gap:12px;padding:12px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px}
h2{font-size:13px;margin:0 0 8px;text-transform:uppercase;letter-spacing:.04em;color:#56606b}
table{border-collapse:collapse;width:100%}td,th{padding:3px 6px;text-align:left;border-bottom:1px solid #eef0f2}
.heat td.cell{width:22px;height:22px;padding:0;border:2px solid #fff;border-radius:4px;text-align:center;font-size:10px;color:#0006}
.lvl-healthy{background:#7dd87d}.lvl-NotHandleFault{background:#c8e6c9}.lvl-SubHealthFault{background:#ffe082}
.lvl-PreSeparateNPU{background:#ffb74d}.lvl-RestartRequest,.lvl-RestartBusiness,.lvl-FreeRestartNPU,.lvl-RestartNPU{background:#ff8a65}
.lvl-SeparateNPU,.lvl-ManuallySeparateNPU{background:#e53935;color:#fff}.lvl-unknown{background:#b0bec5}
.legend span{display:inline-block;padding:1px 6px;margin:0 4px 4px 0;border-radius:3px}
.state{font-family:ui-monospace,monospace}.feed{max-height:260px;overflow:auto;font-family:ui-monospace,monospace;font-size:12px}
.occur{color:#c62828}.clear{color:#2e7d32}.tl{font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap}
</style></head><body>
<header><h1>clusterd</h1><span id="status">loading…</span></header>
<main>
<section><h2>NPUs by node</h2><div class="legend" id="legend"></div><table class="heat" id="heat"></table></section>
<section><h2>Jobs</h2><table id="jobs"><thead><tr><th>job</th><th>status</th><th>pods</th><th>recovery</th><th>strategy</th><th>faults</th></tr></thead><tbody></tbody></table></section>
<section><h2>Recovery timeline (current cycle)</h2><div id="timeline" class="tl"></div></section>
<section><h2>Live fault feed</h2><div id="feed" class="feed"></div></section>
</main>
<script>
const LEVELS=["healthy","NotHandleFault","SubHealthFault","PreSeparateNPU","RestartRequest","RestartBusiness","FreeRestartNPU","RestartNPU","SeparateNPU","ManuallySeparateNPU"];
const rank=l=>{const i=LEVELS.indexOf(l);return i<0?1:i;};
const esc=s=>String(s??"").replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
async function get(p){const r=await fetch(p);if(!r.ok)throw new Error(p+": "+r.status);return r.json();}
function npuNames(cm){const out=new Set();try{const cfg=JSON.parse(cm.data.DeviceInfoCfg);
 const list=(cfg.DeviceInfo||{}).DeviceList||{};for(const [k,v] of Object.entries(list)){if(!k.startsWith("huawei.com/"))continue;
 if(k.endsWith("-Fault"))continue;for(const n of String(v).split(",")){if(n)out.add(n);}}}catch(e){}return out;}
function npuId(n){const m=/-(\d+)$/.exec(n);return m?Number(m[1]):-1;}
async function draw(){
 const [nodes,cms,faults,jobs,rec]=await Promise.all([get("/api/v1/nodes"),get("/api/v1/namespaces/kube-system/configmaps"),
  get("/api/clusterd/v1/faults"),get("/api/clusterd/v1/jobs").catch(()=>({items:[]})),get("/api/clusterd/v1/recovery").catch(()=>({items:[]}))]);
 const npus={};for(const n of nodes.items||[])npus[n.metadata.name]=new Set();
 for(const cm of cms.items||[]){const name=cm.metadata.name;if(!name.startsWith("mindx-dl-deviceinfo-"))continue;
  const node=name.slice("mindx-dl-deviceinfo-".length);npus[node]=npus[node]||new Set();for(const x of npuNames(cm))npus[node].add(x);}
 const worst={};for(const f of faults.items||[]){const k=f.node+"/"+npuId(f.npu);if(!worst[k]||rank(f.level)>rank(worst[k].level))worst[k]=f;
  if(f.npu==="-"){for(const x of npus[f.node]||[]){const kk=f.node+"/"+npuId(x);if(!worst[kk]||rank(f.level)>rank(worst[kk].level))worst[kk]=f;}}}
 let width=0;for(const s of Object.values(npus))for(const x of s)width=Math.max(width,npuId(x)+1);
 let html="<tr><th>node</th>";for(let i=0;i<width;i++)html+="<th>"+i+"</th>";html+="</tr>";
 for(const node of Object.keys(npus).sort((a,b)=>a.localeCompare(b,undefined,{numeric:true}))){html+="<tr><th>"+esc(node)+"</th>";
  const ids=new Set([...npus[node]].map(npuId));for(let i=0;i<width;i++){const f=worst[node+"/"+i];const lvl=f?f.level:(ids.has(i)?"healthy":"unknown");
   const cls=LEVELS.includes(lvl)||lvl==="unknown"?lvl:"unknown";
   html+='<td class="cell lvl-'+esc(cls)+'" id="cell-'+esc(node)+'-'+i+'" data-level="'+esc(lvl)+'" title="'+esc(node+" NPU "+i+": "+lvl+(f?" "+f.code+" ("+f.source+")":""))+'"></td>';}
  html+="</tr>";}
 document.getElementById("heat").innerHTML=html;
 const recBy={};for(const r of rec.items||[])recBy[r.jobId]=r;
 const fcount={};for(const f of faults.items||[])for(const j of f.jobs||[])fcount[j]=(fcount[j]||0)+1;
 let rows="";for(const j of jobs.items||[]){const r=recBy[j.jobId]||{};
  const nf=fcount[j.name]||fcount[j.jobId]||0;
  rows+='<tr id="job-'+esc(j.name)+'" data-faults="'+nf+'" data-cycles="'+esc(r.cycles||0)+'"><td>'+esc(j.namespace+"/"+j.name)+'</td><td>'+esc(j.status)+'</td><td>'+esc(j.pods+"/"+j.replicas)+
  '</td><td class="state" data-state="'+esc(r.state||"")+'" data-ready="'+(r.ready!==false)+'">'+esc((r.state||"-")+(r.ready===false?" (not ready: record not durable, signals held)":""))+'</td><td>'+esc(r.strategy||"-")+'</td><td>'+nf+"</td></tr>";}
 document.querySelector("#jobs tbody").innerHTML=rows||'<tr><td colspan="6">no jobs</td></tr>';
 let tl="";for(const r of rec.items||[]){tl+=esc((r.name||r.jobId)+": "+r.state+(r.strategy?" ("+r.strategy+")":"")+", "+(r.cycles||0)+" cycle(s)")+"\n";
  for(const h of (r.history||[]).slice(-12))tl+="  "+esc(h.at+"  "+h.from+" --"+h.event+"--> "+h.to)+"\n";}
 document.getElementById("timeline").innerHTML=tl||"no recovery controllers";
 document.getElementById("status").textContent=(nodes.items||[]).length+" nodes, "+(jobs.items||[]).length+" jobs, "+(faults.items||[]).length+" faults · "+new Date().toLocaleTimeString();
}
function legend(){document.getElementById("legend").innerHTML=LEVELS.map(l=>'<span class="lvl-'+l+'">'+l+"</span>").join("");}
function feed(){if(!window.EventSource||new URLSearchParams(location.search).get("feed")==="off")return;const es=new EventSource("/api/clusterd/v1/events");
 es.addEventListener("fault",ev=>{const e=JSON.parse(ev.data);const div=document.createElement("div");div.className=e.change;
  div.textContent=e.at+"  "+e.change.padEnd(5)+"  "+e.node+" "+e.npu+"  "+e.code+"  "+e.level+(e.jobs.length?"  jobs "+e.jobs.join(","):"");
  const f=document.getElementById("feed");f.prepend(div);while(f.childNodes.length>200)f.removeChild(f.lastChild);draw().catch(()=>{});});}
async function loop(){try{await draw();}catch(e){document.getElementById("status").textContent="error: "+e.message;}setTimeout(loop,2000);}
legend();loop();feed();
</script></body></html>
)HTML";

}  // namespace

nlohmann::ordered_json FaultFeed::Entry::ToJson() const {
  return nlohmann::ordered_json{
      {"seq", seq},       {"at", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", at, absl::UTCTimeZone())},
      {"change", change}, {"node", node},
      {"npu", npu},       {"code", code},
      {"level", level},   {"source", source},
      {"jobs", jobs}};
}

void FaultFeed::Diff(const State& before, const State& after, Changes* out) {
  for (const auto& [key, e] : after) {
    auto it = before.find(key);
    if (it == before.end() || it->second.level != e.level) out->occur[key] = e;
  }
  for (const auto& [key, e] : before) {
    if (after.count(key) == 0) out->clear[key] = e;
  }
}

FaultFeed::FaultFeed(store::ObjectStore& store, const cluster::FaultCentre& faults, size_t capacity)
    : store_(store), faults_(faults), capacity_(capacity) {}

FaultFeed::~FaultFeed() { Stop(); }

absl::Status FaultFeed::Start() {
  store::WatchOptions options;
  options.ns = kClusterInfoNamespace;
  auto watch = store_.Watch(store::kConfigMaps, options, [this](const store::WatchEvent& e) {
    const std::string name = e.object["metadata"].value("name", "");
    if (name.rfind("cluster-info-", 0) == 0) {
      RefreshConfigMap(e.object, e.type == store::WatchEventType::kDeleted);
    }
  });
  if (!watch.ok()) return watch.status();
  watch_ = std::move(*watch);
  return absl::OkStatus();
}

void FaultFeed::Stop() {
  watch_.reset();
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

void FaultFeed::Refresh() {
  absl::MutexLock lock(&refresh_mu_);
  RefreshNodes({}, /*all=*/true);
}

void FaultFeed::RefreshConfigMap(const store::Object& config_map, bool deleted) {
  const std::string name = store::NameOf(config_map);
  // The ConfigMap's per-node entries: each data value is a JSON map entry name -> entry ("" for
  // none).
  std::map<std::string, nlohmann::json> next;
  bool readable = true;
  auto data = config_map.find("data");
  if (!deleted && data != config_map.end() && data->is_object()) {
    for (const auto& value : *data) {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) continue;
      nlohmann::json parsed =
          nlohmann::json::parse(value.get_ref<const std::string&>(), nullptr, false);
      if (!parsed.is_object()) {
        readable = false;
        break;
      }
      for (auto it = parsed.begin(); it != parsed.end(); ++it) {
        next.insert_or_assign(it.key(), std::move(it.value()));
      }
    }
  }
  absl::MutexLock lock(&refresh_mu_);
  if (!readable) {
    // Not what the fault centre writes: forget the ConfigMap and diff the whole view.
    LogWarn("dashboard", "unreadable cluster-info ConfigMap", {{"name", name}});
    shards_.erase(name);
    RefreshNodes({}, /*all=*/true);
    return;
  }
  std::map<std::string, nlohmann::json>& previous = shards_[name];
  std::set<std::string> touched;
  for (const auto& [entry, value] : next) {
    auto it = previous.find(entry);
    if (it == previous.end() || it->second != value) touched.insert(NodeOfEntry(entry));
  }
  for (const auto& [entry, value] : previous) {
    if (next.count(entry) == 0) touched.insert(NodeOfEntry(entry));
  }
  if (next.empty()) {
    shards_.erase(name);
  } else {
    previous = std::move(next);
  }
  if (!touched.empty()) RefreshNodes(touched, /*all=*/false);
}

void FaultFeed::RefreshNodes(const std::set<std::string>& nodes, bool all) {
  std::map<std::string, State> fresh;
  if (all) {
    for (cluster::FaultViewRow& r : faults_.FaultRows("", "")) AddRow(r, &fresh);
    for (const auto& [node, state] : nodes_) fresh[node];
  } else {
    for (const std::string& node : nodes) {
      fresh[node];
      for (cluster::FaultViewRow& r : faults_.FaultRows(node, "")) AddRow(r, &fresh);
    }
  }
  // Occurrences then clearances, each in key order (as one diff of the whole view orders them).
  Changes changes;
  static const State kNone;
  for (auto& [node, state] : fresh) {
    auto it = nodes_.find(node);
    Diff(it == nodes_.end() ? kNone : it->second, state, &changes);
    if (!state.empty()) {
      nodes_[node] = std::move(state);
    } else if (it != nodes_.end()) {
      nodes_.erase(it);
    }
  }
  if (changes.occur.empty() && changes.clear.empty()) return;
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  auto append = [&](Entry e, const char* change) {
    e.seq = ++seq_;
    e.at = now;
    e.change = change;
    entries_.push_back(std::move(e));
    if (entries_.size() > capacity_) entries_.pop_front();
  };
  for (auto& [key, e] : changes.occur) append(std::move(e), "occur");
  for (auto& [key, e] : changes.clear) append(std::move(e), "clear");
}

std::vector<FaultFeed::Entry> FaultFeed::Since(uint64_t after, absl::Duration wait) const {
  absl::MutexLock lock(&mu_);
  auto ready = [&] { return stopped_ || seq_ > after; };
  mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
  std::vector<Entry> out;
  for (const Entry& e : entries_) {
    if (e.seq > after) out.push_back(e);
  }
  return out;
}

uint64_t FaultFeed::last_seq() const {
  absl::MutexLock lock(&mu_);
  return seq_;
}

bool FaultFeed::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

const char* DashboardHtml() { return kPage; }

void InstallDashboard(HttpTransport& server, FaultFeed* feed) {
  auto page = [](const HttpRequest&, HttpResponse& res) {
    res.set_content(kPage, "text/html; charset=utf-8");
  };
  server.Get("/", page);
  server.Get("/dashboard", page);
  static std::atomic<int> streams{0};
  server.Get("/api/clusterd/v1/events", [feed](const HttpRequest& req, HttpResponse& res) {
    Counter& refused = MetricsRegistry::Default().GetCounter(
        "clusterd_dashboard_event_streams_refused_total",
        "Event-stream requests refused because the limit of open streams was reached");
    if (feed == nullptr) {
      res.status = 503;
      res.set_content("no fault feed\n", "text/plain");
      return;
    }
    if (streams.fetch_add(1) >= kMaxEventStreams) {
      streams.fetch_sub(1);
      refused.Increment();
      LogWarn("dashboard", "event stream refused", {{"reason", "too many open streams"}});
      res.status = 503;
      res.set_content("too many open event streams\n", "text/plain");
      return;
    }
    // A reconnecting EventSource names the last entry it saw; a new one starts from now.
    uint64_t start = feed->last_seq();
    if (req.has_header("Last-Event-ID")) {
      start = std::strtoull(req.get_header_value("Last-Event-ID").c_str(), nullptr, 10);
    }
    struct Cursor {
      uint64_t seq;
      int quiet_seconds = 0;
    };
    auto cursor = std::make_shared<Cursor>(Cursor{start});
    res.set_header("Cache-Control", "no-cache");
    // The producer runs on a thread of the stream's own; it waits a second at a time so that
    // a stream whose client left ends within a second, and says "keep-alive" every 10 s.
    res.set_stream(
        "text/event-stream",
        [feed, cursor](std::string* out) {
          if (feed->stopped()) return false;
          std::vector<FaultFeed::Entry> entries = feed->Since(cursor->seq, absl::Seconds(1));
          if (feed->stopped()) return false;
          for (const FaultFeed::Entry& e : entries) {
            absl::StrAppend(out, "id: ", e.seq, "\nevent: fault\ndata: ", e.ToJson().dump(),
                            "\n\n");
            cursor->seq = e.seq;
          }
          if (!entries.empty()) {
            cursor->quiet_seconds = 0;
          } else if (++cursor->quiet_seconds >= 10) {
            cursor->quiet_seconds = 0;
            *out = ": keep-alive\n\n";
          }
          return true;  // an empty piece: nothing to send yet
        },
        [] { streams.fetch_sub(1); });
  });
}

}  // namespace clusterd::server
