#pragma once

// A deterministic stand-in for the executor: applies events to the pure machine, keeps the
// clock, fires due timers, acknowledges signal and store writes (or fails them on request),
// keeps a simulated reset ConfigMap, and records everything that was emitted.

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "recovery/command.h"
#include "recovery/event.h"
#include "recovery/machine.h"
#include "recovery/reset_config.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
// Readable gtest output for states and phases.
inline void PrintTo(State state, std::ostream* os) { *os << StateName(state); }
inline void PrintTo(Phase phase, std::ostream* os) { *os << PhaseName(phase); }
}  // namespace clusterd::recovery

namespace clusterd::recovery::testing {

inline absl::Time T0() { return absl::FromUnixSeconds(1718000000); }

// A job view with `pods` pods of `d` NPUs: pod r is "pt-r" with UID "uid-p<r>", Running,
// AscendReal set; the PodGroup is Running.
inline JobView MakeView(int pods, int d, StringMap labels = {}, StringMap annotations = {}) {
  JobView view;
  view.exists = true;
  view.ns = "ns";
  view.pod_group_name = "demo-J";
  view.job_name = "demo";
  view.pod_group_running = true;
  view.npus_per_pod = d;
  view.pod_group_labels = std::move(labels);
  view.pod_group_annotations = std::move(annotations);
  for (int r = 0; r < pods; ++r) {
    PodView p;
    p.name = "pt-" + std::to_string(r);
    p.uid = "uid-p" + std::to_string(r);
    p.node = "node-" + std::to_string(r);
    p.running = true;
    p.ascend_real = true;
    p.created = T0() - absl::Hours(1);
    view.pods[r] = p;
  }
  return view;
}

inline JobConfig MakeConfig(const std::string& strategies, StringMap labels = {},
                            StringMap annotations = {}) {
  labels.emplace(std::string(kLabelProcessRecoverEnable), "on");
  annotations.emplace(std::string(kAnnotationRecoverStrategy), strategies);
  return BuildJobConfig(labels, annotations);
}

class Harness {
 public:
  Harness(JobConfig config, JobView view, std::string job_id = "J") {
    job_ = NewJobRecovery(std::move(job_id), std::move(config));
    Apply(JobViewChanged{std::move(view)});
    reset_json_ = "{\"status\":\"initializing\"}";
  }

  // Feed one event; then act as the executor on everything emitted, recursively.
  void Apply(Event event) {
    std::deque<Event> queue;
    queue.push_back(std::move(event));
    while (!queue.empty()) {
      Event e = std::move(queue.front());
      queue.pop_front();
      Step step = Advance(job_, e, now_);
      job_ = std::move(step.next);
      if (on_step) on_step(job_);
      for (Command& c : step.commands) {
        Execute(c, queue);
        log_.push_back(std::move(c));
      }
    }
  }

  // Moves time forward, firing every timer due on the way, in deadline order.
  void Elapse(absl::Duration d) {
    const absl::Time end = now_ + d;
    while (true) {
      std::optional<std::pair<TimerKind, absl::Time>> next;
      for (const auto& [kind, at] : job_.timers) {
        if (at <= end && (!next || at < next->second)) next = std::make_pair(kind, at);
      }
      if (!next) break;
      now_ = std::max(now_, next->second);
      Apply(TimerFired{next->first, next->second});
    }
    now_ = end;
  }

  void Subscribe() { Apply(Subscribed{++stream_}); }
  uint64_t Ticket() { return ++ticket_; }
  void StopComplete(std::optional<int32_t> code = 0) {
    Apply(StopCompleteReported{code, Ticket()});
  }
  void Strategies(std::vector<std::string> s) {
    Apply(RecoverStrategyReported{std::move(s), Ticket()});
  }
  void Status(std::optional<int32_t> code, std::string strategy,
              std::vector<int64_t> isolate = {}) {
    Apply(RecoverStatusReported{code, std::move(strategy), std::move(isolate), Ticket()});
  }
  void ProcessFault(std::vector<FaultRank> faults) {
    Apply(ProcessFaultReported{std::move(faults), Ticket()});
  }
  void View(JobView view) { Apply(JobViewChanged{std::move(view)}); }
  void Hardware(std::vector<HardwareFault> faults, std::string health = "UnHealthy") {
    Apply(HardwareFaultsPublished{std::move(faults), std::move(health)});
  }

  State state() const { return job_.state; }
  const JobRecovery& job() const { return job_; }
  JobRecovery& mutable_job() { return job_; }
  absl::Time now() const { return now_; }
  const std::string& reset_json() const { return reset_json_; }
  const std::vector<Command>& log() const { return log_; }

  // Every ProcessManageSignal emitted so far (awaited or not), in order.
  std::vector<Signal> Signals() const {
    std::vector<Signal> out;
    for (const Command& c : log_) {
      if (const auto* s = std::get_if<SendSignal>(&c)) out.push_back(s->signal);
    }
    return out;
  }
  std::vector<std::string> SignalSummary() const {
    std::vector<std::string> out;
    for (const Signal& s : Signals()) {
      std::string line = s.signal_type;
      if (!s.change_strategy.empty()) line += ":" + s.change_strategy;
      out.push_back(line);
    }
    return out;
  }
  template <typename T>
  std::vector<T> All() const {
    std::vector<T> out;
    for (const Command& c : log_) {
      if (const auto* x = std::get_if<T>(&c)) out.push_back(*x);
    }
    return out;
  }
  std::vector<ReplyReport> Replies() const { return All<ReplyReport>(); }
  std::vector<std::string> ResetOps() const {
    std::vector<std::string> out;
    for (const auto& w : All<WriteResetConfig>()) out.emplace_back(ResetOperationName(w.op));
    return out;
  }
  std::vector<std::string> ResetJsons() const { return reset_history_; }
  std::vector<std::string> Notes(std::string_view kind) const {
    std::vector<std::string> out;
    for (const auto& n : All<Note>()) {
      if (n.kind == kind) out.push_back(n.message);
    }
    return out;
  }
  void ClearLog() { log_.clear(); }

  // Called after every step (the record tests check a round trip there).
  std::function<void(const JobRecovery&)> on_step;

  // Executor behaviour knobs.
  bool ack_signals = true;
  bool signals_ok = true;
  bool ack_writes = true;
  bool writes_ok = true;
  bool pod_group_patches_ok = true;

 private:
  void Execute(const Command& c, std::deque<Event>& queue) {
    if (const auto* s = std::get_if<SendSignal>(&c)) {
      if (ack_signals) queue.push_back(SignalWritten{s->id, signals_ok});
    } else if (const auto* p = std::get_if<PushSwitchRankList>(&c)) {
      if (ack_signals) queue.push_back(SignalWritten{p->id, signals_ok});
    } else if (const auto* p = std::get_if<PushStressTestParams>(&c)) {
      if (ack_signals) queue.push_back(SignalWritten{p->id, signals_ok});
    } else if (const auto* w = std::get_if<WriteResetConfig>(&c)) {
      bool ok = writes_ok;
      if (ok) {
        auto info =
            ApplyResetOperation(reset_json_, w->op, w->ranks, w->restart_fault_process, now_);
        ok = info.ok();
        if (ok) {
          reset_json_ = RenderResetJson(*info);
          reset_history_.push_back(reset_json_);
        }
      }
      if (w->id != 0 && ack_writes) queue.push_back(WriteDone{w->id, ok});
    } else if (const auto* p = std::get_if<PatchPodGroup>(&c)) {
      if (p->id != 0 && ack_writes) queue.push_back(WriteDone{p->id, pod_group_patches_ok});
    }
  }

  JobRecovery job_;
  absl::Time now_ = T0();
  std::vector<Command> log_;
  std::string reset_json_;
  std::vector<std::string> reset_history_;
  uint64_t stream_ = 0;
  uint64_t ticket_ = 0;
};

inline HardwareFault Hw(int64_t rank, int64_t pod_rank, std::string code = "81078603",
                        bool step_retry = false, std::string level = "RestartNPU") {
  HardwareFault f;
  f.rank = rank;
  f.pod_rank = pod_rank;
  f.pod_uid = "uid-p" + std::to_string(pod_rank);
  f.fault_code = std::move(code);
  f.fault_level = std::move(level);
  f.do_step_retry = step_retry;
  return f;
}

inline std::vector<FaultRank> Ranks(int64_t first, int64_t last, int type = 1) {
  std::vector<FaultRank> out;
  for (int64_t r = first; r <= last; ++r) out.push_back({r, type});
  return out;
}

}  // namespace clusterd::recovery::testing
