#pragma once

#include <cstddef>
#include <deque>
#include <set>
#include <string>
#include <tuple>

#include "recover.pb.h"

namespace clusterd::client {

// Suppresses signals a TaskD manager has already acted on (recovery-protocol.md §5.6: its plugins
// key on uuid plus changeStrategy, so a new strategy in the same cycle needs a new changeStrategy
// and a new cycle a new uuid). The key here is (uuid, signalType, changeStrategy).
//
// Keep-alives are never suppressed (clients ignore them anyway), and neither are signals with an
// empty uuid: hot-switch steps and keep-alives outside a cycle all carry "", and several of them
// (different actions) are distinct steps. Only the keys of the last `max_cycles` uuids are kept.
// Not thread-safe: the client's reader owns it.
class SignalDeduplicator {
 public:
  explicit SignalDeduplicator(size_t max_cycles = 16) : max_cycles_(max_cycles) {}

  // True when `signal` is new (and remembers it); false when it repeats a key already seen.
  bool Admit(const ::ProcessManageSignal& signal);
  void Clear();
  size_t suppressed() const { return suppressed_; }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  size_t max_cycles_;
  std::set<Key> seen_;
  std::deque<std::string> uuids_;  // oldest first, to bound seen_
  size_t suppressed_ = 0;
};

}  // namespace clusterd::client
