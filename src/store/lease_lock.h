#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "store/object_store.h"

// Leader election over a coordination.k8s.io/v1 Lease in any ObjectStore (kube, dir, memory),
// with the algorithm of client-go's leaderelection package: the holder renews the lease every
// retry period; another candidate takes it over once it has not seen it change for the lease
// duration (measured on its own clock, so clock skew between machines does not matter); a
// leader that cannot renew within the renew deadline stops leading.
namespace clusterd::store {

// spec of a Lease.
struct LeaseRecord {
  std::string holder;      // spec.holderIdentity; empty: released
  int64_t duration_s = 0;  // spec.leaseDurationSeconds
  absl::Time acquire_time = absl::InfinitePast();
  absl::Time renew_time = absl::InfinitePast();
  int64_t transitions = 0;  // spec.leaseTransitions

  bool operator==(const LeaseRecord&) const = default;
};

// Reads the spec of a Lease object; missing fields are zero.
LeaseRecord LeaseRecordOf(const Object& lease);
// Writes `record` into the spec of `lease` (MicroTime timestamps, as Kubernetes writes them).
void SetLeaseRecord(Object& lease, const LeaseRecord& record);
// "2024-06-10T06:13:20.123456Z".
std::string FormatMicroTime(absl::Time t);

// --- the decision, a pure function ---------------------------------------------------------

enum class LeaseAction { kNone, kCreate, kUpdate };

struct LeaseDecision {
  LeaseAction action = LeaseAction::kNone;
  LeaseRecord next;  // what to write for kCreate/kUpdate
};

// What candidate `identity` does at `now`, given the lease as last read (`current`; nullopt:
// no Lease object) and when it last saw that record change (`observed_at`).
LeaseDecision DecideLease(const std::optional<LeaseRecord>& current, absl::Time observed_at,
                          std::string_view identity, absl::Time now, absl::Duration lease_duration);

// --- the elector ---------------------------------------------------------------------------

class LeaderElector {
 public:
  struct Options {
    ObjectStore* store = nullptr;
    std::string ns = "mindx-dl";
    std::string name = "clusterd";
    std::string identity;  // unique per candidate: the pod name
    absl::Duration lease_duration = absl::Seconds(15);
    absl::Duration renew_deadline = absl::Seconds(10);
    absl::Duration retry_period = absl::Seconds(2);
    // Give the lease up (holder cleared) on Stop(), so that a follower takes over at once.
    bool release_on_stop = true;
    const Clock* clock = &Clock::Real();
    // Called on the elector's thread. on_stopped_leading: the lease was lost (not renewed in
    // time, or taken); not called by Stop().
    std::function<void()> on_started_leading;
    std::function<void()> on_stopped_leading;
  };

  explicit LeaderElector(Options options);
  ~LeaderElector();  // Stop()
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Runs the election on a thread: TryAcquireOrRenew every retry period.
  void Start();
  // Stops the thread; releases the lease if leading and release_on_stop.
  void Stop();
  // Stops the thread without releasing, as a crashed process would (tests).
  void Abandon();

  // One round: reads the lease, decides, writes. True while this candidate leads. Public for
  // tests that drive rounds with a ManualClock.
  bool TryAcquireOrRenew();

  bool IsLeader() const;
  // Waits until this candidate leads; false after `timeout` or Stop().
  bool WaitForLeadership(absl::Duration timeout);
  const std::string& identity() const { return options_.identity; }

 private:
  void Run();
  void SetLeading(bool leading);
  absl::Status Release();
  ObjectKey Key() const;

  const Options options_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;

  // Owned by whoever calls TryAcquireOrRenew (the thread, or a test).
  std::optional<LeaseRecord> observed_;
  absl::Time observed_at_ = absl::InfinitePast();
  absl::Time last_renew_ = absl::InfinitePast();
};

}  // namespace clusterd::store
