#include "client/signal_dedup.h"

#include <algorithm>

#include "recovery/vocabulary.h"

namespace clusterd::client {

bool SignalDeduplicator::Admit(const ::ProcessManageSignal& signal) {
  if (signal.uuid().empty() || signal.signaltype() == recovery::kSignalKeepAlive) return true;
  Key key{signal.uuid(), signal.signaltype(), signal.changestrategy()};
  if (seen_.count(key) > 0) {
    ++suppressed_;
    return false;
  }
  if (std::find(uuids_.begin(), uuids_.end(), signal.uuid()) == uuids_.end()) {
    uuids_.push_back(signal.uuid());
    while (uuids_.size() > max_cycles_) {
      const std::string oldest = uuids_.front();
      uuids_.pop_front();
      for (auto it = seen_.begin(); it != seen_.end();) {
        it = std::get<0>(*it) == oldest ? seen_.erase(it) : std::next(it);
      }
    }
  }
  seen_.insert(std::move(key));
  return true;
}

void SignalDeduplicator::Clear() {
  seen_.clear();
  uuids_.clear();
}

}  // namespace clusterd::client
