#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace clusterd::recovery {

// The contents of the client's reports as the machine uses them (§2.3: only these fields).
struct StopReport {
  int32_t code = 0;
  bool operator==(const StopReport&) const = default;
};
struct StrategyReport {
  std::vector<std::string> strategies;
  bool operator==(const StrategyReport&) const = default;
};
struct StatusReport {
  int32_t code = 0;
  std::string strategy;
  std::vector<int64_t> isolate_rank_ids;
  bool operator==(const StatusReport&) const = default;
};
struct NicReport {
  bool result = false;
  bool operator==(const NicReport&) const = default;
};
struct StressOpResult {
  std::string code;
  std::string result;
  bool operator==(const StressOpResult&) const = default;
};
// global rank -> op name -> result (§2.2 StressTestResult).
using StressResults = std::map<int64_t, std::map<std::string, StressOpResult>>;
struct StressReport {
  StressResults results;
  bool operator==(const StressReport&) const = default;
};

// A capacity-1 report mailbox (§6.5). A report that finds the slot full waits in `blocked`
// (its RPC has not been answered yet) until the slot frees, or gets 599 at the next reset.
template <typename T>
struct Mailbox {
  std::optional<T> slot;
  std::deque<std::pair<uint64_t, T>> blocked;  // (ticket, report)
  bool operator==(const Mailbox&) const = default;
};

struct Mailboxes {
  Mailbox<StopReport> stop_complete;
  Mailbox<StrategyReport> recover_strategy;
  Mailbox<StatusReport> recover_status;
  Mailbox<NicReport> nic_result;
  Mailbox<StressReport> stress_result;
  std::optional<bool> schedule_result;  // internal: the schedule watcher's verdict
  bool operator==(const Mailboxes&) const = default;
};

// At most this many RPCs wait on one full mailbox; more get 599 at once.
inline constexpr size_t kMaxBlockedReports = 8;

}  // namespace clusterd::recovery
