#include "cluster/job_summary_clients.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "cluster/job_uuid.h"
#include "common/sv.h"

namespace clusterd::cluster {
namespace {

constexpr std::array<std::string_view, 4> kRoleWhitelist = {"CCAgent", "DefaultUser1",
                                                            "DefaultUser2", "FdAgent"};

}  // namespace

JobSummaryClients::JobSummaryClients(Clock& clock, Limits limits)
    : limits_(limits), subscribe_bucket_(limits.subscribe_rate, limits.subscribe_burst, clock) {}

bool JobSummaryClients::RoleAllowed(std::string_view role) {
  for (std::string_view r : kRoleWhitelist) {
    if (r == role) return true;
  }
  return false;
}

JobSummaryClients::Registration JobSummaryClients::Register(std::string_view role) {
  Registration r;
  if (!RoleAllowed(role)) {
    r.code = kCodeBadRole;
    // Go renders the whitelist slice as [a b c].
    r.info = absl::StrCat("role:", Sv(role),
                          " is not in whitelist:[CCAgent DefaultUser1 DefaultUser2 FdAgent]");
    r.rpc_error = true;
    return r;
  }
  absl::MutexLock lock(&mu_);
  if (clients_.size() >= limits_.max_clients) {
    r.code = kCodeTooManyClients;
    r.info = absl::StrCat("client num limit, max client num is ", limits_.max_clients);
    return r;
  }
  r.client_id = NewJobUuid();
  clients_[r.client_id] = Client{std::string(role), 0};
  r.info = "registration successful";
  return r;
}

absl::StatusOr<uint64_t> JobSummaryClients::BeginStream(std::string_view client_id,
                                                        std::string_view role) {
  if (!subscribe_bucket_.TryAcquire()) {
    return absl::ResourceExhaustedError(
        "rate limited, there is too many requests, please retry later");
  }
  absl::MutexLock lock(&mu_);
  auto it = clients_.find(std::string(client_id));
  if (it == clients_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("invalid clientId: ", Sv(client_id), ", please register first"));
  }
  Client& c = it->second;
  if (c.role != role) {
    return absl::FailedPreconditionError(
        absl::StrCat("invalid role: ", Sv(role), ", please check role first"));
  }
  if (c.current_stream == 0) {
    size_t& n = subscribed_per_role_[c.role];
    if (n >= limits_.max_subscribed_per_role) {
      return absl::ResourceExhaustedError(absl::StrCat("role:", c.role,
                                                       " has reached the max subscription num ",
                                                       limits_.max_subscribed_per_role));
    }
    ++n;
  }
  c.current_stream = next_stream_++;
  return c.current_stream;
}

bool JobSummaryClients::EndStream(std::string_view client_id, uint64_t stream_id) {
  absl::MutexLock lock(&mu_);
  auto it = clients_.find(std::string(client_id));
  if (it == clients_.end() || it->second.current_stream != stream_id) return false;
  if (auto n = subscribed_per_role_.find(it->second.role);
      n != subscribed_per_role_.end() && n->second > 0) {
    --n->second;
  }
  clients_.erase(it);
  return true;
}

size_t JobSummaryClients::size() const {
  absl::MutexLock lock(&mu_);
  return clients_.size();
}

bool JobSummaryClients::Registered(std::string_view client_id) const {
  absl::MutexLock lock(&mu_);
  return clients_.contains(std::string(client_id));
}

}  // namespace clusterd::cluster
