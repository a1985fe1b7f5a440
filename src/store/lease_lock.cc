#include "store/lease_lock.h"

#include "absl/strings/str_format.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_name.h"
#include "store/strings.h"

namespace clusterd::store {
namespace {

absl::Time ParseTime(const Object& spec, std::string_view field) {
  std::string text = StringOr(spec, field, "");
  absl::Time t;
  std::string error;
  if (!text.empty() && absl::ParseTime(absl::RFC3339_full, text, &t, &error)) return t;
  return absl::InfinitePast();
}

Gauge& LeaderGauge(const std::string& lease) {
  return MetricsRegistry::Default().GetGauge(
      "clusterd_leader", "1 while this process holds the leader-election lease, else 0.",
      {{"lease", lease}});
}

}  // namespace

LeaseRecord LeaseRecordOf(const Object& lease) {
  LeaseRecord r;
  if (!lease.is_object()) return r;
  auto spec_it = lease.find("spec");
  if (spec_it == lease.end() || !spec_it->is_object()) return r;
  const Object& spec = *spec_it;
  r.holder = StringOr(spec, "holderIdentity", "");
  if (auto it = spec.find("leaseDurationSeconds"); it != spec.end() && it->is_number_integer()) {
    r.duration_s = it->get<int64_t>();
  }
  if (auto it = spec.find("leaseTransitions"); it != spec.end() && it->is_number_integer()) {
    r.transitions = it->get<int64_t>();
  }
  r.acquire_time = ParseTime(spec, "acquireTime");
  r.renew_time = ParseTime(spec, "renewTime");
  return r;
}

std::string FormatMicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

void SetLeaseRecord(Object& lease, const LeaseRecord& r) {
  Object& spec = lease["spec"];
  if (!spec.is_object()) spec = Object::object();
  spec["holderIdentity"] = r.holder;
  spec["leaseDurationSeconds"] = r.duration_s;
  spec["acquireTime"] = FormatMicroTime(r.acquire_time);
  spec["renewTime"] = FormatMicroTime(r.renew_time);
  spec["leaseTransitions"] = r.transitions;
}

LeaseDecision DecideLease(const std::optional<LeaseRecord>& current, absl::Time observed_at,
                          std::string_view identity, absl::Time now,
                          absl::Duration lease_duration) {
  LeaseDecision d;
  int64_t duration_s = std::max<int64_t>(1, absl::ToInt64Seconds(lease_duration));
  if (!current) {
    d.action = LeaseAction::kCreate;
    d.next = LeaseRecord{std::string(identity), duration_s, now, now, 0};
    return d;
  }
  if (current->holder == identity) {
    d.action = LeaseAction::kUpdate;
    d.next = *current;
    d.next.renew_time = now;
    d.next.duration_s = duration_s;
    return d;
  }
  // Held by another, and not seen unchanged for its whole duration: keep off.
  if (!current->holder.empty() &&
      observed_at + absl::Seconds(std::max<int64_t>(current->duration_s, 1)) > now) {
    return d;
  }
  d.action = LeaseAction::kUpdate;
  d.next = LeaseRecord{std::string(identity), duration_s, now, now, current->transitions + 1};
  return d;
}

LeaderElector::LeaderElector(Options options) : options_(std::move(options)) {}

LeaderElector::~LeaderElector() { Stop(); }

ObjectKey LeaderElector::Key() const {
  return ObjectKey{std::string(kLeases), options_.ns, options_.name};
}

bool LeaderElector::IsLeader() const {
  absl::MutexLock lock(&mu_);
  return leading_;
}

void LeaderElector::SetLeading(bool leading) {
  {
    absl::MutexLock lock(&mu_);
    if (leading_ == leading) return;
    leading_ = leading;
  }
  LeaderGauge(Cat(options_.ns, "/", options_.name)).Set(leading ? 1 : 0);
  if (leading) {
    LogInfo("leader", "became the leader",
            {{"lease", Key().ToString()}, {"identity", options_.identity}});
    if (options_.on_started_leading) options_.on_started_leading();
  } else {
    LogWarn("leader", "stopped leading",
            {{"lease", Key().ToString()}, {"identity", options_.identity}});
    if (options_.on_stopped_leading) options_.on_stopped_leading();
  }
}

bool LeaderElector::TryAcquireOrRenew() {
  absl::Time now = options_.clock->Now();
  ObjectKey key = Key();
  absl::StatusOr<Object> got = options_.store->Get(key);
  std::optional<LeaseRecord> current;
  Object lease;
  if (got.ok()) {
    lease = *std::move(got);
    current = LeaseRecordOf(lease);
    if (!observed_ || *observed_ != *current) {
      observed_ = current;
      observed_at_ = now;
    }
  } else if (got.status().code() != absl::StatusCode::kNotFound) {
    LogWarn("leader", "cannot read the lease",
            {{"lease", key.ToString()}, {"error", got.status()}});
    if (IsLeader() && now - last_renew_ > options_.renew_deadline) SetLeading(false);
    return IsLeader();
  }
  LeaseDecision decision =
      DecideLease(current, observed_at_, options_.identity, now, options_.lease_duration);
  absl::Status written = absl::OkStatus();
  switch (decision.action) {
    case LeaseAction::kNone:
      SetLeading(false);
      return false;
    case LeaseAction::kCreate: {
      lease = Object{{"apiVersion", "coordination.k8s.io/v1"},
                     {"kind", "Lease"},
                     {"metadata", {{"name", options_.name}, {"namespace", options_.ns}}}};
      SetLeaseRecord(lease, decision.next);
      written = options_.store->Create(kLeases, lease).status();
      break;
    }
    case LeaseAction::kUpdate:
      SetLeaseRecord(lease, decision.next);  // keeps metadata.resourceVersion: conditional
      written = options_.store->Update(kLeases, lease).status();
      break;
  }
  if (!written.ok()) {
    LogDebug("leader", "lease write failed", {{"lease", key.ToString()}, {"error", written}});
    if (IsLeader() && now - last_renew_ > options_.renew_deadline) SetLeading(false);
    return IsLeader();
  }
  observed_ = decision.next;
  observed_at_ = now;
  last_renew_ = now;
  SetLeading(true);
  return true;
}

bool LeaderElector::WaitForLeadership(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || leading_; };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  return leading_;
}

void LeaderElector::Start() {
  // A waiting replica exports 0 from the start, so a dashboard sees every replica.
  LeaderGauge(Cat(options_.ns, "/", options_.name)).Set(0);
  thread_ = std::thread([this] {
    SetCurrentThreadName("leader-elect");
    Run();
  });
}

void LeaderElector::Run() {
  for (;;) {
    TryAcquireOrRenew();
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.retry_period)) return;
  }
}

absl::Status LeaderElector::Release() {
  auto got = options_.store->Get(Key());
  if (!got.ok()) return got.status();
  LeaseRecord r = LeaseRecordOf(*got);
  if (r.holder != options_.identity) return absl::OkStatus();
  absl::Time now = options_.clock->Now();
  r.holder.clear();
  r.duration_s = 1;
  r.acquire_time = now;
  r.renew_time = now;
  Object lease = *got;
  SetLeaseRecord(lease, r);
  return options_.store->Update(kLeases, lease).status();
}

void LeaderElector::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  if (IsLeader() && options_.release_on_stop) {
    if (absl::Status s = Release(); !s.ok()) {
      LogWarn("leader", "could not release the lease", {{"error", s}});
    }
  }
  // Stepping down on purpose is not losing the lease: no on_stopped_leading.
  absl::MutexLock lock(&mu_);
  if (leading_) LeaderGauge(Cat(options_.ns, "/", options_.name)).Set(0);
  leading_ = false;
}

void LeaderElector::Abandon() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  leading_ = false;
}

}  // namespace clusterd::store
