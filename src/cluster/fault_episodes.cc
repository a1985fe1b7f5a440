#include "cluster/fault_episodes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/saved_time.h"
#include "common/time_format.h"

namespace clusterd::cluster {
namespace {

constexpr int kSaveVersion = 1;

bool Known(absl::Time t) { return t != absl::InfinitePast(); }

nlohmann::ordered_json TimeJson(absl::Time t) {
  return Known(t) ? nlohmann::ordered_json(Rfc3339Millis(t)) : nlohmann::ordered_json(nullptr);
}
// Seconds from `from` to `to`, never negative (a clock step backwards, a node's clock ahead);
// null when either is unknown.
nlohmann::ordered_json Span(absl::Time from, absl::Time to) {
  if (!Known(from) || !Known(to)) return nullptr;
  const double s = std::max(0.0, absl::ToDoubleSeconds(to - from));
  return std::round(s * 1000.0) / 1000.0;
}

std::string NameOnly(const std::string& name) {
  const size_t slash = name.find('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

}  // namespace

std::string FaultEpisode::Where() const {
  if (faults.empty()) return "-";
  if (fault_count == 1) {
    const EpisodeFault& f = faults.front();
    if (f.npu.empty() || f.npu == "-1" || f.npu == "-") return f.node;
    return absl::StrCat(f.node, "/npu", f.npu);
  }
  std::set<std::string> nodes;
  std::set<std::string> npus;
  for (const EpisodeFault& f : faults) {
    nodes.insert(f.node);
    npus.insert(f.node + "/" + f.npu);
  }
  if (nodes.size() == 1 && npus.size() == 1) {
    return absl::StrCat(faults.front().node, " (", fault_count, " faults)");
  }
  const int64_t shown = static_cast<int64_t>(npus.size());
  return absl::StrCat(shown < fault_count ? absl::StrCat(shown, "+") : absl::StrCat(shown),
                      " NPUs on ", nodes.size(), nodes.size() == 1 ? " node" : " nodes");
}

FaultEpisode* FaultEpisodes::OpenOf(const std::string& job_id) {
  for (auto it = episodes_.rbegin(); it != episodes_.rend(); ++it) {
    if (it->job_id == job_id) return it->closed() ? nullptr : &*it;
  }
  return nullptr;
}

FaultEpisode& FaultEpisodes::Open(const std::string& job_id, const std::string& name,
                                  absl::Time now) {
  FaultEpisode e;
  e.id = next_id_++;
  e.job_id = job_id;
  e.job_name = name;
  e.detected = now;
  episodes_.push_back(std::move(e));
  while (episodes_.size() > capacity_) episodes_.pop_front();
  return episodes_.back();
}

void FaultEpisodes::FaultsHit(const std::string& job_id, const std::string& name,
                              const std::vector<EpisodeFault>& faults, absl::Time now) {
  if (faults.empty()) return;
  FaultEpisode* e = OpenOf(job_id);
  if (e == nullptr) e = &Open(job_id, name, now);
  if (e->job_name.empty()) e->job_name = name;
  for (const EpisodeFault& f : faults) {
    ++e->fault_count;
    if (e->faults.size() < kMaxFaultsPerEpisode) e->faults.push_back(f);
    if (Known(f.at) && (!Known(e->occurred) || f.at < e->occurred)) e->occurred = f.at;
  }
}

void FaultEpisodes::FaultsCleared(const std::string& job_id, absl::Time now) {
  FaultEpisode* e = OpenOf(job_id);
  if (e != nullptr && !Known(e->notified)) e->cleared = std::max(now, e->detected);
}

void FaultEpisodes::CycleStarted(const std::string& job_id, const std::string& name,
                                 absl::Time now) {
  FaultEpisode* e = OpenOf(job_id);
  if (e == nullptr || Known(e->notified)) {
    // No fault seen first (a fault the job reported itself, a manual strategy change), or a new
    // cycle over one whose end was not seen: an episode of its own.
    if (e != nullptr) e->cleared = now;
    e = &Open(job_id, name, now);
  }
  e->notified = std::max(now, e->detected);
}

void FaultEpisodes::StrategyDecided(const std::string& job_id, const std::string& strategy,
                                    absl::Time now) {
  FaultEpisode* e = OpenOf(job_id);
  if (e == nullptr || !Known(e->notified) || strategy.empty()) return;
  if (!Known(e->decided)) e->decided = std::max(now, e->notified);
  if (e->strategies.empty() || e->strategies.back() != strategy) {
    if (e->strategies.size() < 16) e->strategies.push_back(strategy);
  }
}

void FaultEpisodes::CycleEnded(const std::string& job_id, const std::string& outcome,
                               absl::Time now) {
  FaultEpisode* e = OpenOf(job_id);
  if (e == nullptr || !Known(e->notified)) return;
  e->resumed = std::max(now, Known(e->decided) ? e->decided : e->notified);
  e->outcome = outcome.empty() ? "done" : outcome;
}

void FaultEpisodes::NameJob(const std::string& job_id, const std::string& name) {
  if (name.empty() || name == "/") return;
  for (auto it = episodes_.rbegin(); it != episodes_.rend(); ++it) {
    if (it->job_id == job_id && it->job_name.empty()) it->job_name = name;
  }
}

nlohmann::ordered_json FaultEpisodes::EpisodeJson(const FaultEpisode& e, absl::Time now) {
  // Durations as the demo's table gives them: detected, notified and decided from the fault's
  // own time (clusterd's first sight when the fault carried no time, or one after it), resumed
  // from the decision, total from the fault to training again.
  const absl::Time origin = Known(e.occurred) && e.occurred <= e.detected ? e.occurred : e.detected;
  const absl::Time resume_from = Known(e.decided) ? e.decided : e.notified;
  std::string state = "waiting";  // for a cycle
  if (Known(e.resumed)) {
    state = "resumed";
  } else if (Known(e.cleared)) {
    state = "cleared";
  } else if (Known(e.notified)) {
    state = "recovering";
  }
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  for (const EpisodeFault& f : e.faults) {
    faults.push_back({{"node", f.node},
                      {"npu", f.npu},
                      {"code", f.code},
                      {"level", f.level},
                      {"at", TimeJson(f.at)}});
  }
  const size_t slash = e.job_name.find('/');
  return {
      {"id", e.id},
      {"jobId", e.job_id},
      {"namespace", slash == std::string::npos ? "" : e.job_name.substr(0, slash)},
      {"name", NameOnly(e.job_name)},
      {"state", state},
      {"where", e.Where()},
      {"code", e.faults.empty() ? "" : e.faults.front().code},
      {"level", e.faults.empty() ? "" : e.faults.front().level},
      {"faultCount", e.fault_count},
      {"faults", std::move(faults)},
      {"occurred", TimeJson(e.occurred)},
      {"detected", TimeJson(e.detected)},
      {"notified", TimeJson(e.notified)},
      {"decided", TimeJson(e.decided)},
      {"resumed", TimeJson(e.resumed)},
      {"cleared", TimeJson(e.cleared)},
      {"strategies", e.strategies},
      {"outcome", e.outcome},
      {"seconds",
       {{"detected", Span(origin, e.detected)},
        {"notified", Span(origin, e.notified)},
        {"decided", Span(origin, e.decided)},
        {"resumed", Span(resume_from, e.resumed)},
        {"total", Span(origin, e.resumed)},
        {"open", e.closed() ? nlohmann::ordered_json(nullptr) : Span(origin, now)}}},
  };
}

nlohmann::ordered_json FaultEpisodes::ToJson(const std::string& job, absl::Time now) const {
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (auto it = episodes_.rbegin(); it != episodes_.rend(); ++it) {
    if (!job.empty() && it->job_id != job && it->job_name != job && NameOnly(it->job_name) != job) {
      continue;
    }
    items.push_back(EpisodeJson(*it, now));
  }
  return {{"kind", "FaultEpisodeList"}, {"items", std::move(items)}};
}

nlohmann::json FaultEpisodes::Save() const {
  nlohmann::json out = nlohmann::json::array();
  for (const FaultEpisode& e : episodes_) {
    nlohmann::json faults = nlohmann::json::array();
    for (const EpisodeFault& f : e.faults) {
      faults.push_back({f.node, f.npu, f.code, f.level, SavedMillis(f.at)});
    }
    out.push_back({{"id", e.id},
                   {"job", e.job_id},
                   {"name", e.job_name},
                   {"faults", std::move(faults)},
                   {"count", e.fault_count},
                   {"times",
                    {SavedMillis(e.occurred), SavedMillis(e.detected), SavedMillis(e.notified),
                     SavedMillis(e.decided), SavedMillis(e.resumed), SavedMillis(e.cleared)}},
                   {"strategies", e.strategies},
                   {"outcome", e.outcome}});
  }
  return {{"version", kSaveVersion}, {"nextId", next_id_}, {"episodes", std::move(out)}};
}

absl::Status FaultEpisodes::Restore(const nlohmann::json& saved) {
  if (!saved.is_object() || saved.value("version", 0) != kSaveVersion) {
    return absl::InvalidArgumentError("fault episodes: not a version 1 object");
  }
  const nlohmann::json& list = saved.contains("episodes") ? saved["episodes"] : nlohmann::json();
  if (!list.is_array()) return absl::InvalidArgumentError("fault episodes: no episodes array");
  std::deque<FaultEpisode> restored;
  uint64_t next_id = 1;
  try {
    for (const nlohmann::json& j : list) {
      FaultEpisode e;
      e.id = j.at("id").get<uint64_t>();
      e.job_id = j.at("job").get<std::string>();
      e.job_name = j.at("name").get<std::string>();
      for (const nlohmann::json& f : j.at("faults")) {
        if (e.faults.size() >= kMaxFaultsPerEpisode) break;
        e.faults.push_back({f.at(0).get<std::string>(), f.at(1).get<std::string>(),
                            f.at(2).get<std::string>(), f.at(3).get<std::string>(),
                            FromSavedMillis(f.at(4).get<int64_t>())});
      }
      e.fault_count =
          std::max<int64_t>(j.at("count").get<int64_t>(), static_cast<int64_t>(e.faults.size()));
      const nlohmann::json& t = j.at("times");
      absl::Time* fields[] = {&e.occurred, &e.detected, &e.notified,
                              &e.decided,  &e.resumed,  &e.cleared};
      for (size_t i = 0; i < std::size(fields); ++i) {
        *fields[i] = FromSavedMillis(t.at(i).get<int64_t>());
      }
      for (const nlohmann::json& s : j.at("strategies")) {
        if (e.strategies.size() < 16) e.strategies.push_back(s.get<std::string>());
      }
      e.outcome = j.at("outcome").get<std::string>();
      next_id = std::max(next_id, e.id + 1);
      restored.push_back(std::move(e));
      if (restored.size() > capacity_) restored.pop_front();
    }
    next_id = std::max(next_id, saved.value("nextId", uint64_t{1}));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("fault episodes: ", e.what()));
  }
  episodes_ = std::move(restored);
  next_id_ = next_id;
  return absl::OkStatus();
}

}  // namespace clusterd::cluster
