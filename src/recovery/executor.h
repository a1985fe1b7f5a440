#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "model/device_naming.h"
#include "recovery/command.h"
#include "recovery/cycle_log.h"
#include "recovery/event.h"
#include "recovery/job_recovery.h"
#include "runtime/controller.h"
#include "store/object_store.h"

namespace clusterd::recovery {

// Where signals, OM pushes and RPC answers go. The gRPC stream adapter implements it; calls come
// from the job's strand (one at a time per job, possibly different threads for different jobs).
class SignalSink {
 public:
  virtual ~SignalSink() = default;
  // Writes `signal` to the job's ProcessManageSignal stream (with the stream's own write
  // retries). False when there is no stream or the write failed.
  virtual bool WriteSignal(const std::string& job_id, const Signal& signal) = 0;
  // §12 SubscribeNotifySwitch and §13 SubscribeNotifyExecStressTest pushes.
  virtual bool PushSwitchRankList(const std::string& job_id, const NicSwitchParams& params) = 0;
  virtual bool PushStressTestParams(const std::string& job_id,
                                    const std::map<int64_t, std::vector<int64_t>>& params) = 0;
  // §12/§13 OM messages for the one-shot operator streams.
  virtual void QueueOmMessage(const std::string& job_id, OmKind kind, const std::string& text) = 0;
  // Ends the job's subscription streams older than `keep_stream_id` (0: all of them), and drops
  // the job's queued OM messages (§6.6). Streams opened after `keep_stream_id` stay: their own
  // Subscribed event, still on its way to the controller, ends the older ones in turn.
  virtual void EndStreams(const std::string& job_id, uint64_t keep_stream_id) = 0;
  // Answers the RPC that carried `ticket`.
  virtual void Reply(uint64_t ticket, int32_t code, const std::string& info) = 0;
};

// The fault centre's side of §8.2 step 5, §9.8 and §13 (the fault centre, issue 5, implements
// it). Optional: without one these commands are only logged.
class FaultCentrePort {
 public:
  virtual ~FaultCentrePort() = default;
  virtual void ReportRetryFaults(const std::string& job_id, const std::vector<FaultRank>& faults,
                                 absl::Time at) = 0;
  virtual void ReportNotRetryable(const std::string& job_id,
                                  const std::vector<int64_t>& pod_ranks) = 0;
  virtual void IgnoreStressTestFaults(const std::string& job_id,
                                      const std::vector<std::string>& nodes, bool ignore) = 0;
};

// Where the job's objects live.
struct JobIdentity {
  std::string job_id;
  std::string ns;
  std::string pod_group_name;
  std::string job_name;  // reset-config-<job_name>
};

// The pods whose annotation scheduling.k8s.io/group-name names the PodGroup. The default lists
// the namespace's pods; the daemon passes PodsOfGroup (pod_group_index.h), which reads only the
// group's.
using PodLister = std::function<absl::StatusOr<std::vector<store::Object>>(
    const std::string& ns, const std::string& pod_group)>;

// Runs the recovery controllers of all registered jobs: feeds events to the pure machine, writes
// the durable record, then carries out the commands (store writes through the ObjectStore,
// signals through the SignalSink, timers through the Clock) and feeds their outcomes back.
//
// Each job is a strand: its events are processed one at a time, in order, by the reconcile of
// the job's key on controller() (runtime/controller.h). A reconcile fires the job's due timers,
// drains its inbox and asks to be woken (RequeueAfter) at the job's next timer, record retry or
// delayed clean-up. Tests drive it on their own thread with controller().RunUntilIdleForTest()
// (with a ManualClock nothing happens by itself); production calls Start(n), n workers.
class RecoveryExecutor {
 public:
  RecoveryExecutor(store::ObjectStore& store, Clock& clock, SignalSink& sink,
                   FaultCentrePort* fault_centre = nullptr, PodLister pod_lister = nullptr);
  ~RecoveryExecutor();
  RecoveryExecutor(const RecoveryExecutor&) = delete;
  RecoveryExecutor& operator=(const RecoveryExecutor&) = delete;

  // Register (§2.3): creates the job's controller. A durable record of a cycle in flight is
  // resumed instead (its configuration snapshot wins). A job that already has a controller is
  // left alone. Reads the job's view once.
  absl::Status AddJob(const JobIdentity& id, const JobConfig& config);
  // Start-up: resumes every recorded cycle in flight, so that its timers run even before the
  // client registers again. Returns how many were resumed.
  absl::StatusOr<int> RestoreAll();
  bool HasJob(const std::string& job_id) const;
  std::vector<std::string> Jobs() const;

  // Queues `event` for the job. NotFound when the job has no controller.
  absl::Status Post(const std::string& job_id, Event event);
  // Re-reads the job's objects and queues JobViewChanged (call it from pod / PodGroup watches).
  absl::Status RefreshView(const std::string& job_id);

  // The jobs' reconciles run here (tests pump it; Start runs its workers).
  runtime::Controller& controller() { return controller_; }

  // Told of every cycle's start, strategy and end (goodput); set before Start or RestoreAll.
  void SetCycleObserver(CycleObserver* observer) { cycle_observer_ = observer; }
  // deviceNameCustomization.json: the renamed NPU resource and allocation annotation of the
  // jobs' pods (BuildJobView). Set before Start or RestoreAll.
  void SetDeviceNaming(model::DeviceNaming naming) { naming_ = std::move(naming); }

  // Production: `workers` threads process the jobs; timers wake their job by themselves.
  void Start(int workers);
  void Stop();

  // A copy of the job's controller state (for `clusterctl get recovery`, tests).
  std::optional<JobRecovery> Snapshot(const std::string& job_id) const;
  // The job's current uuid, for keep-alives ("" when unknown). While the record is not durable,
  // the uuid of the record in the store: a keep-alive must not announce a cycle the store does
  // not know either.
  std::string CurrentUuid(const std::string& job_id) const;

  // Whether the job's record holds its current state. While it cannot be written (disk full,
  // read-only volume, an I/O error, a name the store refuses), everything a client can act on
  // (signals, O&M pushes, stream ends, RPC answers) is held and the job's further events wait;
  // the write is retried with back-off on the clock, and what was held leaves, in order, the
  // moment it succeeds.
  struct Durability {
    bool durable = true;
    int failures = 0;       // consecutive failed writes of the record
    std::string error;      // the last one's
    absl::Time since;       // the first failure of the streak
    absl::Time next_retry;  // when the write is tried again
  };
  std::optional<Durability> RecordDurability(const std::string& job_id) const;
  // Events posted to the job and not yet taken up (held while its record cannot be written).
  size_t QueuedEvents(const std::string& job_id) const;

  // Back-off of the record write retries: doubling from the first to the last, then steady.
  static constexpr absl::Duration kRecordRetryFirst = absl::Milliseconds(250);
  static constexpr absl::Duration kRecordRetryMax = absl::Seconds(8);

 private:
  struct Job {
    JobIdentity id;
    absl::Mutex mu;  // the strand: held while the job's events are processed
    JobRecovery state ABSL_GUARDED_BY(mu);
    std::string last_record ABSL_GUARDED_BY(mu);    // what is in the store
    std::string recorded_uuid ABSL_GUARDED_BY(mu);  // the uuid in last_record
    std::deque<Event> inbox ABSL_GUARDED_BY(mu);
    // Commands waiting for the record (see CommandTiming in executor.cc): answers for the next
    // record write, pod / node labels for the end of the batch, and `held`, the rest of a step
    // stopped because the record it needed could not be written. While `durability.durable` is
    // false the inbox is not taken up: nothing the machine does after a state the store does not
    // hold can leave before that state.
    std::vector<Command> replies ABSL_GUARDED_BY(mu);
    std::vector<Command> at_end ABSL_GUARDED_BY(mu);
    std::vector<Command> held ABSL_GUARDED_BY(mu);
    Durability durability ABSL_GUARDED_BY(mu);
    // When the oldest event still in the inbox was posted (for the latency metrics).
    absl::Time posted_at ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
    // The running cycle, for its log lines and metrics (cycle_log.h).
    CycleTracking cycle ABSL_GUARDED_BY(mu);
  };
  struct DelayedRemoval {
    absl::Time at;
    std::string job_id;
  };

  std::shared_ptr<Job> Find(const std::string& job_id) const;
  size_t Drain(const std::shared_ptr<Job>& job);
  void QueueDueTimers(Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job.mu);
  // Writes the record if the state changed since the last write; false when the write failed
  // (the job is then not durable and a retry is armed).
  bool Persist(Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job.mu);
  void RecordFailed(Job& job, const absl::Status& error) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job.mu);
  void RecordDurable(Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job.mu);
  // Carries out `command` by its timing; false (and nothing done) when it needs the record and
  // the record could not be written. `signalled` and `posted_at` feed the first-signal metric.
  bool CarryOut(Job& job, Command& command, absl::Time posted_at, bool* signalled)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(job.mu);
  void Answer(Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job.mu);
  void Execute(Job& job, const Command& command) ABSL_EXCLUSIVE_LOCKS_REQUIRED(job.mu);
  bool WriteReset(const Job& job, const WriteResetConfig& write);
  bool Patch(const store::ObjectKey& key, const store::Object& patch, int attempts);
  void RemoveFaultJobInfo(const std::string& job_id);
  void WriteFaultJobInfo(const Job& job, const std::vector<int64_t>& pod_ranks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(job.mu);
  runtime::Result Reconcile(const std::string& job_id);
  // The earliest time the job's key must be reconciled again (InfiniteFuture: none). `job` is
  // the job's controller as the reconcile found it (null: none).
  absl::Time NextWake(const std::string& job_id, Job* job) const;
  absl::StatusOr<JobView> ReadView(const JobIdentity& id) const;
  absl::StatusOr<std::vector<store::Object>> ListPodsOf(const std::string& ns,
                                                        const std::string& pod_group) const;

  store::ObjectStore& store_;
  Clock& clock_;
  SignalSink& sink_;
  FaultCentrePort* fault_centre_;
  PodLister pod_lister_;
  CycleObserver* cycle_observer_ = nullptr;  // set before the workers start
  model::DeviceNaming naming_;               // set before the workers start

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  std::vector<DelayedRemoval> removals_ ABSL_GUARDED_BY(mu_);

  // Last: its workers call Reconcile, which uses everything above.
  runtime::Controller controller_;
};

}  // namespace clusterd::recovery
