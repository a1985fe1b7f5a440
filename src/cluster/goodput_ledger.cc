#include "cluster/goodput_ledger.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/saved_time.h"
#include "common/time_format.h"
#include "model/fault_level.h"

namespace clusterd::cluster {
namespace {

constexpr std::string_view kUseNames[] = {"training",     "detection",
                                          "decision",     "process_restart",
                                          "rescheduling", "waiting_for_resources"};

std::optional<TimeUse> ParseUse(std::string_view name) {
  for (int i = 0; i < kTimeUseCount; ++i) {
    if (kUseNames[i] == name) return static_cast<TimeUse>(i);
  }
  if (name == "not_counted") return TimeUse::kNotCounted;
  return std::nullopt;
}

bool IsCounted(TimeUse use) { return use != TimeUse::kNotCounted; }

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

}  // namespace

std::string_view ToString(TimeUse use) {
  const int i = static_cast<int>(use);
  return i >= 0 && i < kTimeUseCount ? kUseNames[i] : "not_counted";
}

bool InterruptsTraining(std::string_view level) {
  // fault-pipeline.md §4: these levels leave the job running (NormalNPU/NormalNetwork are not
  // faults, SubHealthFault is handled only when the job allows it, PreSeparateNPU waits for the
  // next interruption).
  using model::FaultLevel;
  std::optional<FaultLevel> parsed = model::ParseFaultLevel(level);
  if (!parsed.has_value()) return !level.empty();
  return model::IsFault(*parsed) && *parsed != FaultLevel::kNotHandleFault &&
         *parsed != FaultLevel::kSubHealthFault && *parsed != FaultLevel::kPreSeparateNPU;
}

absl::Duration JobGoodput::Total(TimeUse u, absl::Time now) const {
  if (!IsCounted(u)) return absl::ZeroDuration();
  absl::Duration d = totals[static_cast<int>(u)];
  if (u == use && now > since) d += now - since;
  return d;
}

absl::Duration JobGoodput::Counted(absl::Time now) const {
  absl::Duration d;
  for (int i = 0; i < kTimeUseCount; ++i) d += Total(static_cast<TimeUse>(i), now);
  return d;
}

std::optional<double> JobGoodput::Ettr(absl::Time now) const {
  const absl::Duration counted = Counted(now);
  if (counted <= absl::ZeroDuration()) return std::nullopt;
  return Seconds(Total(TimeUse::kTraining, now)) / Seconds(counted);
}

JobGoodput::WindowShare JobGoodput::Window(absl::Time now, absl::Duration window) const {
  const absl::Time from = now - window;
  WindowShare share;
  auto add = [&](TimeUse u, absl::Time start, absl::Time end) {
    if (!IsCounted(u)) return;
    start = std::max(start, from);
    end = std::min(end, now);
    if (end <= start) return;
    share.counted += end - start;
    if (u == TimeUse::kTraining) share.training += end - start;
  };
  for (const TimeInterval& i : timeline) add(i.use, i.start, i.end);
  add(use, since, now);
  return share;
}

std::optional<double> JobGoodput::WindowEttr(absl::Time now, absl::Duration window) const {
  const WindowShare share = Window(now, window);
  if (share.counted <= absl::ZeroDuration()) return std::nullopt;
  return Seconds(share.training) / Seconds(share.counted);
}

JobGoodput& GoodputLedger::JobOf(const std::string& job_id, absl::Time now) {
  auto [it, added] = jobs_.try_emplace(job_id);
  if (added) {
    it->second.job_id = job_id;
    it->second.first_seen = now;
    it->second.since = now;
  }
  return it->second;
}

TimeUse GoodputLedger::Derive(const JobGoodput& job) {
  if (job.deleted || job.status == model::JobStatus::kComplete) return TimeUse::kNotCounted;
  if (job.cycle_running) {
    return job.cycle_strategy.empty() ? TimeUse::kDecision : TimeUse::kProcessRestart;
  }
  if (job.status == model::JobStatus::kRunning) {
    return job.fault_at != absl::InfinitePast() ? TimeUse::kDecision : TimeUse::kTraining;
  }
  if (!job.status.has_value()) return TimeUse::kNotCounted;  // seen by a fault or cycle only
  return job.ever_ran ? TimeUse::kRescheduling : TimeUse::kWaitingForResources;
}

void GoodputLedger::Advance(JobGoodput& job, absl::Time t) {
  job.unsaved = true;
  // A clock that stepped back closes nothing: no negative durations.
  if (t > job.since) {
    if (IsCounted(job.use)) {
      job.totals[static_cast<int>(job.use)] += t - job.since;
      TimeInterval interval{job.use, job.since, t, ""};
      if (job.use == TimeUse::kDecision || job.use == TimeUse::kProcessRestart) {
        interval.strategy = job.cycle_strategy;
      }
      // One interval per stretch of the same use (the strategy may be learnt later).
      if (!job.timeline.empty() && job.timeline.back().use == interval.use &&
          job.timeline.back().end == interval.start &&
          job.timeline.back().strategy == interval.strategy) {
        job.timeline.back().end = t;
      } else {
        job.timeline.push_back(std::move(interval));
      }
      while (job.timeline.size() > options_.max_intervals_per_job) job.timeline.pop_front();
    }
    job.since = t;
  }
  job.use = Derive(job);
}

void GoodputLedger::ObserveJob(const std::string& job_id, const std::string& name,
                               std::optional<model::JobStatus> status, bool deleted,
                               absl::Time now) {
  JobGoodput& job = JobOf(job_id, now);
  Advance(job, now);
  if (!name.empty()) job.name = name;
  if (status.has_value()) job.status = status;
  if (job.status == model::JobStatus::kRunning) job.ever_ran = true;
  if (deleted && !job.deleted) {
    job.deleted = true;
    job.deleted_at = now;
  } else if (!deleted && job.deleted) {
    job.deleted = false;  // the same job id came back (a record restored)
    job.deleted_at = absl::InfinitePast();
  }
  // A job that stopped running has no fault left to detect: rescheduling took over.
  if (job.status != model::JobStatus::kRunning) job.fault_at = absl::InfinitePast();
  job.use = Derive(job);
}

void GoodputLedger::ObserveFaults(const std::string& job_id,
                                  std::optional<absl::Time> earliest_fault, absl::Time now) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;  // not a job summary yet: nothing counted to charge it to
  JobGoodput& job = it->second;
  if (!earliest_fault.has_value()) {
    Advance(job, now);
    job.fault_at = absl::InfinitePast();
    job.use = Derive(job);
    return;
  }
  if (job.fault_at != absl::InfinitePast() || job.cycle_running) return;  // already answered
  if (job.status != model::JobStatus::kRunning) return;
  // The time since the fault was lost to its detection, not trained: close training there
  // (never before the interval began, never in the future).
  const absl::Time at = std::clamp(*earliest_fault, job.since, std::max(job.since, now));
  Advance(job, at);
  job.use = TimeUse::kDetection;  // from the fault until clusterd saw it
  Advance(job, now);
  job.fault_at = at;
  ++job.faults;
  job.use = Derive(job);  // then deciding what to do
}

void GoodputLedger::CycleStarted(const std::string& job_id, absl::Time now) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  JobGoodput& job = it->second;
  if (job.cycle_running) return;  // a cycle resumed after a restart: the same one
  Advance(job, now);
  if (job.fault_at == absl::InfinitePast()) ++job.faults;  // a fault the snapshot did not show
  job.cycle_running = true;
  job.cycle_started = now;
  job.cycle_strategy.clear();
  job.fault_at = absl::InfinitePast();
  ++job.cycles;
  job.use = Derive(job);
}

void GoodputLedger::StrategyDecided(const std::string& job_id, const std::string& strategy,
                                    absl::Time now) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.cycle_running) return;
  JobGoodput& job = it->second;
  Advance(job, now);
  job.cycle_strategy = strategy.empty() ? "unknown" : strategy;
  job.use = Derive(job);
}

void GoodputLedger::CycleEnded(const std::string& job_id, absl::Time now) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.cycle_running) return;
  JobGoodput& job = it->second;
  Advance(job, now);
  job.cycle_running = false;
  job.cycle_started = absl::InfinitePast();
  job.cycle_strategy.clear();
  job.use = Derive(job);
}

size_t GoodputLedger::Prune(absl::Time now) {
  size_t dropped = 0;
  std::vector<std::pair<absl::Time, std::string>> deleted;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->second.deleted && now - it->second.deleted_at >= options_.retention) {
      removed_since_save_.push_back(it->first);
      it = jobs_.erase(it);
      ++dropped;
    } else {
      if (it->second.deleted) deleted.emplace_back(it->second.deleted_at, it->first);
      ++it;
    }
  }
  if (jobs_.size() > options_.max_jobs) {
    std::sort(deleted.begin(), deleted.end());
    for (const auto& [at, id] : deleted) {
      if (jobs_.size() <= options_.max_jobs) break;
      removed_since_save_.push_back(id);
      jobs_.erase(id);
      ++dropped;
    }
  }
  return dropped;
}

const JobGoodput* GoodputLedger::Find(const std::string& job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : &it->second;
}

nlohmann::ordered_json GoodputLedger::JobJson(const JobGoodput& job, absl::Time now) const {
  auto ratio = [](std::optional<double> v) -> nlohmann::ordered_json {
    if (!v.has_value()) return nullptr;
    return std::round(*v * 10000.0) / 10000.0;
  };
  nlohmann::ordered_json lost = nlohmann::ordered_json::object();
  for (int i = 1; i < kTimeUseCount; ++i) {
    lost[std::string(kUseNames[i])] = Seconds(job.Total(static_cast<TimeUse>(i), now));
  }
  nlohmann::ordered_json timeline = nlohmann::ordered_json::array();
  for (const TimeInterval& i : job.timeline) {
    nlohmann::ordered_json e = {{"use", ToString(i.use)},
                                {"start", Rfc3339Millis(i.start)},
                                {"end", Rfc3339Millis(i.end)},
                                {"seconds", Seconds(i.end - i.start)}};
    if (!i.strategy.empty()) e["strategy"] = i.strategy;
    timeline.push_back(std::move(e));
  }
  if (IsCounted(job.use)) {
    nlohmann::ordered_json e = {
        {"use", ToString(job.use)},
        {"start", Rfc3339Millis(job.since)},
        {"end", nullptr},
        {"seconds", Seconds(std::max(absl::ZeroDuration(), now - job.since))}};
    if (!job.cycle_strategy.empty()) e["strategy"] = job.cycle_strategy;
    timeline.push_back(std::move(e));
  }
  const size_t slash = job.name.find('/');
  return {
      {"jobId", job.job_id},
      {"namespace", slash == std::string::npos ? "" : job.name.substr(0, slash)},
      {"name", slash == std::string::npos ? job.name : job.name.substr(slash + 1)},
      {"status", job.deleted ? "deleted"
                             : (job.status.has_value() ? std::string(ToString(*job.status)) : "")},
      {"now", ToString(job.use)},
      {"firstSeen", Rfc3339Millis(job.first_seen)},
      {"countedSeconds", Seconds(job.Counted(now))},
      {"trainingSeconds", Seconds(job.Total(TimeUse::kTraining, now))},
      {"lostSeconds", std::move(lost)},
      {"ettr", ratio(job.Ettr(now))},
      {"windowSeconds", Seconds(options_.window)},
      {"windowEttr", ratio(job.WindowEttr(now, options_.window))},
      {"faults", job.faults},
      {"recoveryCycles", job.cycles},
      {"timeline", std::move(timeline)},
  };
}

nlohmann::json GoodputLedger::Record(const JobGoodput& job, absl::Time now) const {
  nlohmann::json totals = nlohmann::json::object();
  for (int i = 0; i < kTimeUseCount; ++i) {
    totals[std::string(kUseNames[i])] = absl::ToInt64Milliseconds(job.totals[i]);
  }
  nlohmann::json timeline = nlohmann::json::array();
  for (const TimeInterval& i : job.timeline) {
    if (i.end < now - options_.window) continue;  // only the window's share is persisted
    timeline.push_back(
        {std::string(ToString(i.use)), SavedMillis(i.start), SavedMillis(i.end), i.strategy});
  }
  return {{"id", job.job_id},
          {"name", job.name},
          {"firstSeen", SavedMillis(job.first_seen)},
          {"status", job.status.has_value() ? std::string(ToString(*job.status)) : ""},
          {"deletedAt", job.deleted ? SavedMillis(job.deleted_at) : 0},
          {"everRan", job.ever_ran},
          {"cycleRunning", job.cycle_running},
          {"cycleStrategy", job.cycle_strategy},
          {"cycleStarted", SavedMillis(job.cycle_started)},
          {"faultAt", SavedMillis(job.fault_at)},
          {"since", SavedMillis(job.since)},
          {"cycles", job.cycles},
          {"faults", job.faults},
          {"totalsMs", std::move(totals)},
          {"timeline", std::move(timeline)}};
}

nlohmann::json GoodputLedger::Save(absl::Time now) const {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& [id, job] : jobs_) jobs.push_back(Record(job, now));
  return {{"version", 1}, {"jobs", std::move(jobs)}};
}

GoodputLedger::SaveDelta GoodputLedger::TakeSaveDelta(absl::Time now) {
  SaveDelta delta;
  const absl::Time cut = now - options_.window;
  for (auto& [id, job] : jobs_) {
    if (!job.unsaved && job.saved_oldest_end >= cut) continue;
    delta.records.emplace_back(id, Record(job, now));
    job.unsaved = false;
    job.saved_oldest_end = absl::InfiniteFuture();
    for (const TimeInterval& i : job.timeline) {
      if (i.end >= cut) job.saved_oldest_end = std::min(job.saved_oldest_end, i.end);
    }
  }
  delta.removed = std::move(removed_since_save_);
  removed_since_save_.clear();
  return delta;
}

absl::Status GoodputLedger::Restore(const nlohmann::json& saved) {
  if (!saved.is_object() || !saved.contains("version") || saved["version"] != 1 ||
      !saved.contains("jobs") || !saved["jobs"].is_array()) {
    return absl::InvalidArgumentError("goodput state: not a version 1 object with a jobs array");
  }
  std::map<std::string, JobGoodput> restored;
  try {
    for (const nlohmann::json& j : saved["jobs"]) {
      JobGoodput job;
      job.job_id = j.at("id").get<std::string>();
      if (job.job_id.empty()) return absl::InvalidArgumentError("goodput state: a job without id");
      job.name = j.value("name", "");
      job.first_seen = FromSavedMillis(j.value("firstSeen", int64_t{0}));
      job.status = model::ParseJobStatus(j.value("status", ""));
      const int64_t deleted_at = j.value("deletedAt", int64_t{0});
      job.deleted = deleted_at != 0;
      job.deleted_at = job.deleted ? FromSavedMillis(deleted_at) : absl::InfinitePast();
      job.ever_ran = j.value("everRan", false);
      job.cycle_running = j.value("cycleRunning", false);
      job.cycle_strategy = j.value("cycleStrategy", "");
      job.cycle_started = FromSavedMillis(j.value("cycleStarted", int64_t{0}));
      job.fault_at = FromSavedMillis(j.value("faultAt", int64_t{0}));
      job.since = FromSavedMillis(j.value("since", int64_t{0}));
      if (job.since == absl::InfinitePast()) job.since = job.first_seen;
      job.cycles = j.value("cycles", int64_t{0});
      job.faults = j.value("faults", int64_t{0});
      if (auto t = j.find("totalsMs"); t != j.end() && t->is_object()) {
        for (int i = 0; i < kTimeUseCount; ++i) {
          job.totals[i] =
              absl::Milliseconds(std::max<int64_t>(0, t->value(std::string(kUseNames[i]), 0)));
        }
      }
      if (auto t = j.find("timeline"); t != j.end() && t->is_array()) {
        for (const nlohmann::json& e : *t) {
          if (!e.is_array() || e.size() != 4) continue;
          std::optional<TimeUse> use = ParseUse(e[0].get<std::string>());
          if (!use.has_value()) continue;
          job.timeline.push_back({*use, FromSavedMillis(e[1].get<int64_t>()),
                                  FromSavedMillis(e[2].get<int64_t>()), e[3].get<std::string>()});
        }
      }
      job.use = Derive(job);
      restored[job.job_id] = std::move(job);
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("goodput state: ", e.what()));
  }
  for (const auto& [id, job] : jobs_) {
    if (!restored.contains(id)) removed_since_save_.push_back(id);
  }
  jobs_ = std::move(restored);
  return absl::OkStatus();
}

}  // namespace clusterd::cluster
