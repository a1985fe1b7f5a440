#include <algorithm>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cluster/public_fault_cache.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "sim/clusterd_waits.h"
#include "sim/scenario_run.h"
#include "sim/sim_objects.h"

namespace clusterd::sim {
namespace {

// The public fault of a slow-network alarm with an endpoint that is no NPU
// (jobs-ranktable-diagnosis.md §7.5).
constexpr char kNetFaultNonNpuCode[] = "200001012";

std::string Millis(const std::optional<absl::Time>& t, absl::Time base) {
  if (!t.has_value()) return "-";
  return absl::StrFormat("%.1fs", absl::ToDoubleSeconds(*t - base));
}

std::string Delta(const std::optional<absl::Time>& from, const std::optional<absl::Time>& to) {
  if (!from.has_value() || !to.has_value()) return "-";
  return absl::StrFormat("%.2fs", absl::ToDoubleSeconds(*to - *from));
}

// One alarm's root cause as the report shows it (object types of jobs-ranktable-diagnosis.md
// §7.4 step 6: 0 is an NPU): "npu <addr>" or "npu <a>,<b>" (a pair); "link <src>-><dst>" (a
// topology element pair, level 0); otherwise the element's id ("0.L1-1", "plane-0").
std::string RootCauseOf(const nlohmann::json& alarm) {
  const std::string src = alarm.value("srcId", ""), dst = alarm.value("dstId", "");
  if (alarm.value("srcType", 0) == 0 && alarm.value("dstType", 0) == 0) {
    return src == dst ? absl::StrCat("npu ", src) : absl::StrCat("npu ", src, ",", dst);
  }
  if (src != dst) return absl::StrCat("link ", src, "->", dst);
  return src;
}

// Whether a row's outcome is what its `expect` says: the exact root causes for an A5 link,
// part of the decision chain for everything else.
bool ExpectMet(const FaultRun& r) {
  if (r.spec->expect.empty()) return true;
  if (IsSlowNetLink(*r.spec)) return r.strategy == r.spec->expect;
  return r.strategy.find(r.spec->expect) != std::string::npos;
}

}  // namespace

std::string ScenarioRun::NetFaultSeen(uint32_t sdid) {
  // The alarm's public fault names its source SDID as the node (§7.5), which is no Node of the
  // fault view: the slow-network view says what was reported.
  httplib::Client http("http://" + clusterd_->http_address());
  auto res = http.Get("/api/clusterd/v1/netfault");
  if (!res || res->status != 200) return "";
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("superPods") || !body["superPods"].is_array()) return "";
  const std::string id = std::to_string(sdid);
  for (const auto& pod : body["superPods"]) {
    if (pod.value("faultsSent", int64_t{0}) == 0 || !pod.contains("lastAlarms")) continue;
    for (const auto& a : pod["lastAlarms"]) {
      const std::string src = a.value("srcId", ""), dst = a.value("dstId", "");
      if (src != id && dst != id) continue;
      uint64_t s = 0, d = 0;
      const bool npus = absl::SimpleAtoi(src, &s) && absl::SimpleAtoi(dst, &d);
      if (!npus || a.value("srcType", 0) != 0 || a.value("dstType", 0) != 0) {
        return std::string(kNetFaultNonNpuCode);
      }
      return (s >> 22) == (d >> 22) ? "200001010" : "200001011";
    }
  }
  return "";
}

std::string ScenarioRun::NetRootCausesSeen(const FaultRun& run,
                                           std::set<std::string>* fault_nodes) {
  std::optional<nlohmann::json> view = NetFaultView();
  if (!view.has_value()) return "";
  const std::set<std::string> pods = SuperPodsOf(*run.spec);
  std::set<std::string> causes;
  for (const auto& pod : (*view)["superPods"]) {
    const std::string id = pod.value("superPodId", "");
    if (!pods.count(id) || !pod.contains("lastAlarms") || !pod["lastAlarms"].is_array()) continue;
    auto before = run.net_alarms_before.find(id);
    // Only a round after the injection counts: its alarms are the last ones.
    if (pod.value("alarmsTotal", int64_t{0}) <=
        (before == run.net_alarms_before.end() ? 0 : before->second)) {
      continue;
    }
    for (const auto& a : pod["lastAlarms"]) {
      causes.insert(RootCauseOf(a));
      // §7.5: the public fault's influence nodeName is the lower-case source id.
      if (a.value("srcType", 0) != 0 || a.value("dstType", 0) != 0) {
        fault_nodes->insert(absl::AsciiStrToLower(a.value("srcId", "")));
      }
    }
  }
  return absl::StrJoin(causes, ", ");
}

std::set<std::string> ScenarioRun::PublicFaultNodes(std::string_view code) {
  std::set<std::string> nodes;
  auto cm = store_->Get({std::string(store::kConfigMaps), std::string(cluster::kStatisticNamespace),
                         std::string(cluster::kStatisticName)});
  if (!cm.ok() || !cm->contains("data") || !(*cm)["data"].is_object()) return nodes;
  const std::string text = (*cm)["data"].value("PublicFaults", "");
  const nlohmann::json faults = nlohmann::json::parse(text, nullptr, false);
  if (!faults.is_object()) return nodes;
  for (const auto& [node, list] : faults.items()) {
    if (!list.is_array()) continue;
    for (const auto& f : list) {
      if (f.is_object() && f.value("faultCode", "") == code) nodes.insert(node);
    }
  }
  return nodes;
}

std::vector<std::string> ExpectationFailures(const std::vector<FaultRun>& runs) {
  std::vector<std::string> failures;
  for (const FaultRun& r : runs) {
    const std::string label = r.spec->label.empty() ? r.spec->kind : r.spec->label;
    if (IsSlowNetLink(*r.spec)) {
      // An A5 link's root causes are the point of its scenario: another outcome fails the run.
      if (!r.spec->expect.empty() && r.strategy != r.spec->expect) {
        failures.push_back(
            absl::StrCat("ROOT CAUSE: ", label, ": clusterd reported ",
                         r.strategy.empty() ? "no root cause" : "root cause(s) " + r.strategy,
                         ", expected ", r.spec->expect));
      } else if (!r.strategy.empty() && !r.resumed.has_value()) {
        // Named but not delivered: the alarms are worth nothing if the fault centre drops them.
        failures.push_back(absl::StrCat(
            "PUBLIC FAULT: ", label, ": clusterd reported ", r.strategy,
            " but its fault centre holds no public fault ", kNetFaultNonNpuCode, " on ",
            absl::StrJoin(r.net_fault_nodes, ", "), " (", std::string(cluster::kStatisticNamespace),
            "/", std::string(cluster::kStatisticName), ")"));
      }
    } else if (r.spec->kind == "slow_link" && !ExpectMet(r)) {
      const std::string seen = !r.injected.has_value() ? "the fault was never injected"
                               : r.strategy.empty()    ? "clusterd reported no slow link"
                                                       : "clusterd reported " + r.strategy;
      failures.push_back(absl::StrCat("SLOW LINK: ", label, " at ", r.spec->node, "/npu",
                                      r.spec->npu, ": ", seen, ", expected ", r.spec->expect));
    }
  }
  return failures;
}

bool ScenarioRun::SlowRankConfirmed(const FaultRun& run) {
  httplib::Client http("http://" + clusterd_->http_address());
  const JobSpec& spec = jobs_[run.job]->spec();
  auto res =
      http.Get(absl::StrCat("/api/clusterd/v1/slownode/", spec.name, "?namespace=", spec.ns));
  if (!res || res->status != 200) return false;
  auto view = nlohmann::json::parse(res->body, nullptr, false);
  if (!view.is_object() || view.value("state", "") != "degraded") return false;
  if (!view.contains("lastResult") || !view["lastResult"].is_object()) return false;
  const auto& ranks = view["lastResult"].value("slowCalculateRanks", nlohmann::json::array());
  for (const auto& r : ranks) {
    if (r.is_number_integer() && r.get<int>() == run.spec->rank) return true;
  }
  return false;
}

std::string ScenarioRun::JobAt(int node, int npu) const {
  for (const JobSpec& spec : scenario_.jobs) {
    for (const PodPlacement& p : scheduler_->Placements(spec.name)) {
      if (p.node_index != node) continue;
      if (npu < 0 || std::find(p.npus.begin(), p.npus.end(), npu) != p.npus.end()) {
        return spec.name;
      }
    }
  }
  return "";
}

ScenarioRun::Placed ScenarioRun::PlacedNow() const {
  Placed placed;
  for (const JobSpec& spec : scenario_.jobs) placed[spec.name] = scheduler_->Placements(spec.name);
  return placed;
}

std::set<std::string> ScenarioRun::JobsAt(const Placed& placed, int node, int npu) {
  std::set<std::string> jobs;
  for (const auto& [job, pods] : placed) {
    for (const PodPlacement& p : pods) {
      if (p.node_index != node) continue;
      if (npu < 0 || std::find(p.npus.begin(), p.npus.end(), npu) != p.npus.end()) {
        jobs.insert(job);
      }
    }
  }
  return jobs;
}

void ScenarioRun::TrackTouched(const Placed& placed) {
  const absl::Time now = absl::Now();
  for (FaultRun& r : runs_) {
    if (!r.injected.has_value() || r.npus.empty()) continue;
    std::set<std::string> holders;
    for (auto [node, npu] : r.npus) holders.merge(JobsAt(placed, node, npu));
    for (auto& [job, touch] : r.touched) {
      if (holders.count(job) == 0 && !touch.until.has_value()) touch.until = now;
      if (holders.count(job) > 0) touch.until.reset();  // back on them
    }
    if (r.cleared_at.has_value()) continue;  // a fault that is gone touches no newcomer
    for (const std::string& job : holders) r.touched.try_emplace(job, Touch{now, std::nullopt});
  }
}

std::vector<std::string> ScenarioRun::CheckAttribution() const {
  std::vector<AttributedFault> faults;
  for (const FaultRun& r : runs_) {
    if (!r.injected.has_value()) continue;
    AttributedFault f;
    f.label = r.spec->label.empty() ? r.spec->kind : r.spec->label;
    f.injected = *r.injected;
    f.touched = r.touched;
    f.cleared = r.cleared_at;
    // A fault that hit no job has no cycle of its own: a job placed on its NPUs later is
    // explained by it only while it is there.
    f.handled = r.job.empty() ? r.injected : r.resumed;
    f.must_signal = !r.spec->expect.empty() && r.spec->kind != "slow" &&
                    r.spec->kind != "slow_link" && !IsSlowNetLink(*r.spec) && r.error.empty();
    faults.push_back(std::move(f));
  }
  std::map<std::string, std::vector<ReceivedSignal>> signals;
  for (const auto& [name, job] : jobs_) {
    std::vector<ReceivedSignal>& out = signals[name];
    std::optional<absl::Time> previous;
    for (const SimTrainingJob::SignalRecord& s : job->signals()) {
      // A new cycle when the job trained since its previous signal.
      std::optional<absl::Time> trained;
      if (previous.has_value()) trained = job->ResumedAfter(*previous);
      const bool starts = !previous.has_value() || (trained.has_value() && *trained < s.at);
      out.push_back(ReceivedSignal{s.at, s.type, s.actions, starts});
      previous = s.at;
    }
  }
  return CheckSignalAttribution(faults, signals, t0_);
}

bool ScenarioRun::Detected(const FaultRun& run) {
  if (run.npus.empty()) return false;
  httplib::Client http("http://" + clusterd_->http_address());
  const int node = run.npus.front().first;
  auto res = http.Get(absl::StrCat("/api/clusterd/v1/faults?node=", SimNodeName(node)));
  if (!res || res->status != 200) return false;
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("items")) return false;
  const std::string code = absl::AsciiStrToLower(run.spec->code);
  for (const auto& item : body["items"]) {
    std::string seen = absl::AsciiStrToLower(item.value("code", ""));
    if (seen.find(code) != std::string::npos || code.find(seen) != std::string::npos) {
      if (!seen.empty()) return true;
    }
  }
  return false;
}

void ScenarioRun::Observe(FaultRun& run) {
  if (!run.injected.has_value() || run.resumed.has_value()) return;
  if (run.spec->kind == "slow_link") {
    // Handled once clusterd's pingmesh analysis reports the link (§7.5).
    int node = 0;
    (void)absl::SimpleAtoi(absl::string_view(run.spec->node).substr(5), &node);
    if (const std::string code =
            NetFaultSeen(SuperDeviceId(scenario_.cluster, node, run.spec->npu));
        !code.empty()) {
      run.detected = run.decided = run.resumed = absl::Now();
      run.strategy = absl::StrCat(code, " slow link");
      Event(absl::StrCat("clusterd reports ", run.where, "'s link (public fault ", code, ")"));
    }
    return;
  }
  if (IsSlowNetLink(*run.spec)) {
    // Decided at clusterd's first round with alarms since the injection; the root causes it
    // names are the outcome (not just the link: every one, NPUs included).
    if (run.strategy.empty()) {
      std::set<std::string> nodes;
      const std::string causes = NetRootCausesSeen(run, &nodes);
      if (causes.empty()) return;
      run.detected = run.decided = absl::Now();
      run.strategy = causes;
      run.net_fault_nodes = std::move(nodes);
      Event(absl::StrCat("clusterd reports root cause(s) ", causes, " for ", run.where));
    }
    // Handled once the fault centre holds the public fault of every non-NPU alarm: the
    // netfault view only says what was sent, and the centre may refuse it.
    if (!run.net_fault_nodes.empty()) {
      const std::set<std::string> held = PublicFaultNodes(kNetFaultNonNpuCode);
      if (!std::includes(held.begin(), held.end(), run.net_fault_nodes.begin(),
                         run.net_fault_nodes.end())) {
        return;
      }
      Event(absl::StrCat("the fault centre holds public fault ", kNetFaultNonNpuCode, " on ",
                         absl::StrJoin(run.net_fault_nodes, ", ")));
    }
    run.resumed = absl::Now();
    return;
  }
  if (run.spec->kind == "slow") {
    // Training never stops for a slow rank: it is handled once clusterd confirms it (public
    // fault 110001010 with the rank).
    if (SlowRankConfirmed(run)) {
      run.detected = run.decided = run.resumed = absl::Now();
      run.strategy = "110001010 slow rank";
      Event(absl::StrCat("clusterd confirms ", run.where, " slow (public fault 110001010)"));
    }
    return;
  }
  if (!run.detected.has_value() && Detected(run)) {
    run.detected = absl::Now();
    Event(absl::StrCat("clusterd sees ", run.spec->code, " at ", run.where));
  }
  if (run.job.empty()) return;
  SimTrainingJob& job = *jobs_[run.job];
  // Every decision of the cycle, in order: the strategy and what it fell back to.
  std::vector<std::string> chain;
  for (const SimTrainingJob::SignalRecord& s : job.signals()) {
    if (s.at < *run.injected) continue;
    if (!run.notified.has_value()) run.notified = s.at;
    const bool decision = !s.strategy.empty() || s.type == "killMaster" || s.type == "saveAndExit";
    if (!decision) continue;
    if (!run.decided.has_value()) run.decided = s.at;
    const std::string what = !s.strategy.empty() ? s.strategy : s.type;
    if (chain.empty() || chain.back() != what) chain.push_back(what);
  }
  if (scheduler_->job_reschedules() > run.job_reschedules_before) {
    if (!run.job_rescheduled) Event(absl::StrCat("job ", run.job, " rescheduled as a whole"));
    run.job_rescheduled = true;
    chain.push_back("job-reschedule");
    if (!run.decided.has_value()) run.decided = absl::Now();
  }
  if (!chain.empty()) run.strategy = absl::StrJoin(chain, ">");
  // A fault the job's client was told about was detected, even if the fault view shows it
  // later (or not at all, like a UCE fault the job retries).
  if (run.notified.has_value() && (!run.detected.has_value() || *run.notified < *run.detected)) {
    run.detected = run.notified;
  }
  // Training counts as resumed once a decision was made (a hot switch first prepares the
  // backup pod while the job still trains, then decides).
  if (run.decided.has_value()) {
    run.resumed = job.ResumedAfter(*run.decided);
    if (run.resumed.has_value()) {
      Event(absl::StrCat("job ", run.job, " trains again after ", run.spec->label, " (",
                         run.strategy, ")"));
      if (run.spec->kind == "storm") job.RestoreBehaviour();
    }
  }
}

bool ScenarioRun::AllTraining() const {
  for (const auto& [name, job] : jobs_) {
    if (!job->training()) return false;
  }
  return true;
}

void ScenarioRun::Progress() {
  std::string line = absl::StrFormat("[%5.1fs]", Elapsed());
  for (const auto& [name, job] : jobs_) {
    const bool training = job->training();
    absl::StrAppend(&line, " ", name, ": step ", job->step(), " ",
                    training ? "training" : job->phase());
    // Not training: say what clusterd waits for (a protocol timer) and how long is left.
    if (!training) {
      if (std::string wait = ClusterdWaitText(clusterd_->http_address(), job->uid());
          !wait.empty()) {
        absl::StrAppend(&line, " (clusterd ", wait, ")");
      }
    }
  }
  int handled = 0, injected = 0;
  for (const FaultRun& r : runs_) {
    if (r.injected.has_value()) ++injected;
    // A fault that hit no job is handled once detected; an A5 link only once its public
    // faults reached the fault centre.
    if (r.resumed.has_value() ||
        (r.injected.has_value() && r.job.empty() && r.detected && !IsSlowNetLink(*r.spec))) {
      ++handled;
    }
  }
  absl::StrAppend(&line, " | faults ", handled, "/", injected, " handled");
  absl::MutexLock lock(&print_mu_);
  if (options_.live) {
    std::printf("\r\033[K%s", line.c_str());
    line_drawn_ = true;
  } else {
    std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);
}

void ScenarioRun::PrintReport() {
  ClearLine();
  const char* kRow = "%-24s %-12s %-6s %8s %8s %8s %8s %8s %8s  %s\n";
  std::printf("\n");
  std::printf(kRow, "FAULT", "WHERE", "JOB", "INJECTED", "DETECTED", "NOTIFIED", "DECIDED",
              "RESUMED", "TOTAL", "STRATEGY");
  int unexpected = 0;
  for (const FaultRun& r : runs_) {
    const std::string label = r.spec->label.empty() ? r.spec->kind : r.spec->label;
    std::string strategy = r.strategy.empty() ? "-" : r.strategy;
    if (!ExpectMet(r)) {
      absl::StrAppend(&strategy, " (expected ", r.spec->expect, ")");
      ++unexpected;
    }
    std::printf(kRow, label.substr(0, 24).c_str(), r.where.substr(0, 12).c_str(),
                r.job.empty() ? "-" : r.job.c_str(), Millis(r.injected, t0_).c_str(),
                Delta(r.injected, r.detected).c_str(), Delta(r.injected, r.notified).c_str(),
                Delta(r.injected, r.decided).c_str(), Delta(r.decided, r.resumed).c_str(),
                Delta(r.injected, r.resumed).c_str(), strategy.c_str());
    if (!r.error.empty()) std::printf("    error: %s\n", r.error.c_str());
  }
  std::printf(
      "\nINJECTED: time into the run. DETECTED (in clusterd's fault view, or the first "
      "signal if earlier), NOTIFIED (first signal on the job's stream, which its TaskD "
      "manager relays to every rank) and DECIDED (first strategy signal) from injection; "
      "RESUMED: from the decision to training again; TOTAL: injection to training again. "
      "STRATEGY: the decisions in order, fallbacks included.\n");
  if (unexpected > 0) std::printf("%d fault(s) took another path than expected\n", unexpected);
  std::printf("pods rescheduled: %d, jobs rescheduled: %d\n", scheduler_->reschedules(),
              scheduler_->job_reschedules());
  for (const auto& [name, job] : jobs_) {
    std::printf("job %-8s step %-6lld %s, recovered %d time(s)\n", name.c_str(),
                static_cast<long long>(job->step()),
                job->training() ? "training" : job->phase().c_str(), job->resumed_count());
  }
}

}  // namespace clusterd::sim
