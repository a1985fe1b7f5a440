#include "server/connection_limits.h"

namespace clusterd::server {

absl::string_view ConnectionLimits::ReasonOf(Verdict v) {
  switch (v) {
    case Verdict::kAdmitted:
      return "admitted";
    case Verdict::kTotal:
      return "total";
    case Verdict::kPerClient:
      return "per_client";
  }
  return "unknown";
}

ConnectionLimits::Verdict ConnectionLimits::TryAdmit(absl::string_view client) {
  absl::MutexLock lock(&mu_);
  if (total_ >= limits_.max_total) return Verdict::kTotal;
  auto it = per_client_.find(client);
  size_t current = it == per_client_.end() ? 0 : it->second;
  if (current >= limits_.max_per_client) return Verdict::kPerClient;
  if (it == per_client_.end()) {
    per_client_.emplace(std::string(client), 1);
  } else {
    ++it->second;
  }
  ++total_;
  return Verdict::kAdmitted;
}

void ConnectionLimits::Release(absl::string_view client) {
  absl::MutexLock lock(&mu_);
  auto it = per_client_.find(client);
  if (it == per_client_.end()) return;  // never admitted: nothing to give back
  if (--it->second == 0) per_client_.erase(it);
  if (total_ > 0) --total_;
}

size_t ConnectionLimits::total() {
  absl::MutexLock lock(&mu_);
  return total_;
}

size_t ConnectionLimits::of(absl::string_view client) {
  absl::MutexLock lock(&mu_);
  auto it = per_client_.find(client);
  return it == per_client_.end() ? 0 : it->second;
}

size_t ConnectionLimits::clients() {
  absl::MutexLock lock(&mu_);
  return per_client_.size();
}

}  // namespace clusterd::server
