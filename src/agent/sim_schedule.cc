#include "agent/sim_schedule.h"

#include <algorithm>
#include <cmath>

namespace clusterd::agent {
namespace {

// Inverse-CDF exponential draw: the standard distributions' algorithms are not specified, this
// keeps a seed's events identical across library versions.
double Exponential(std::mt19937_64& rng, double mean) {
  const double u = (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
  return -std::log(u) * mean;
}

}  // namespace

SimSchedule::SimSchedule(const faults::FaultPolicy& policy, const FaultSourceOptions& options)
    : rng_(options.sim_seed),
      num_npus_(std::max(1, options.num_npus)),
      faults_per_ms_(std::max(options.sim_faults_per_hour, 0.0) / 3.6e6),
      mean_duration_ms_(std::max(options.sim_mean_duration_s, 0.001) * 1000) {
  for (const auto& [code, level] : policy.codes.chip_levels()) {
    if (code != faults::kResetFinished) codes_.push_back(code);
  }
  std::sort(codes_.begin(), codes_.end());
  if (codes_.empty()) codes_.push_back(faults::kCardDrop);
  if (faults_per_ms_ > 0) {
    next_fault_ms_ = static_cast<int64_t>(Exponential(rng_, 1 / faults_per_ms_));
  }
}

std::optional<int64_t> SimSchedule::NextAtMs() {
  std::optional<int64_t> next;
  if (faults_per_ms_ > 0) next = next_fault_ms_;
  if (!recoveries_.empty() && (!next.has_value() || recoveries_.top().at_ms <= *next)) {
    next = recoveries_.top().at_ms;
  }
  return next;
}

ScheduledEvent SimSchedule::Pop() {
  if (!recoveries_.empty() && (faults_per_ms_ <= 0 || recoveries_.top().at_ms <= next_fault_ms_)) {
    Pending p = recoveries_.top();
    recoveries_.pop();
    return ScheduledEvent{p.at_ms, p.event};
  }
  const int64_t at = next_fault_ms_;
  faults::NpuFaultEvent e;
  e.npu = static_cast<int>(rng_() % static_cast<uint64_t>(num_npus_));
  e.code = rng_() % 10 == 0 ? faults::kRoceLinkDown : codes_[rng_() % codes_.size()];
  e.assertion = faults::Assertion::kOccur;
  e.severity = static_cast<uint32_t>(rng_() % 4);
  faults::NpuFaultEvent recover = e;
  recover.assertion = faults::Assertion::kRecover;
  recoveries_.push(Pending{at + 1 + static_cast<int64_t>(Exponential(rng_, mean_duration_ms_)),
                           seq_++, recover});
  next_fault_ms_ = at + 1 + static_cast<int64_t>(Exponential(rng_, 1 / faults_per_ms_));
  return ScheduledEvent{at, e};
}

}  // namespace clusterd::agent
