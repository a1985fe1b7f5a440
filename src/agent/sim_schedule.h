#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <random>
#include <vector>

#include "agent/event_schedule.h"
#include "agent/fault_sources.h"
#include "faults/fault_policy.h"

namespace clusterd::agent {

// The `sim` source: random faults drawn from the loaded catalogue. Faults start as a Poisson
// process (mean `sim_faults_per_hour` on the node), each on a uniformly chosen NPU with a code
// drawn uniformly from the catalogue (one in ten a RoCE link-down), and recover after an
// exponentially distributed time (mean `sim_mean_duration_s`). Deterministic for a seed: the
// same seed and catalogue give the same events at the same offsets.
class SimSchedule final : public EventSchedule {
 public:
  SimSchedule(const faults::FaultPolicy& policy, const FaultSourceOptions& options);

  std::optional<int64_t> NextAtMs() override;
  ScheduledEvent Pop() override;

 private:
  void DrawNextFault();

  struct Pending {
    int64_t at_ms;
    uint64_t seq;
    faults::NpuFaultEvent event;
    bool operator>(const Pending& o) const {
      return at_ms != o.at_ms ? at_ms > o.at_ms : seq > o.seq;
    }
  };

  std::mt19937_64 rng_;
  std::vector<faults::FaultCode> codes_;  // sorted, for determinism
  int num_npus_;
  double faults_per_ms_;
  double mean_duration_ms_;
  int64_t next_fault_ms_ = 0;
  uint64_t seq_ = 0;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> recoveries_;
};

}  // namespace clusterd::agent
