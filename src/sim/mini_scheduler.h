#pragma once

// A minimal Volcano-like scheduler for the simulated cluster. It creates the jobs' objects,
// binds every missing pod to healthy NPUs (read from the nodes' device-info ConfigMaps), and
// acts on what the recovery flow asks of a scheduler (recovery-protocol.md §9.10, §11.2, §11.3):
//   * a pod that went away (its agent exited) is recreated, on a node without faults if any;
//   * PodGroup label process-recover-enable=pause: the whole job is rescheduled;
//   * pod annotation needVolcanoOpe=delete: the pod is deleted (and recreated);
//   * needOperatorOpe=create on a pod: a hot-switch backup pod is created on a healthy node,
//     needOperatorOpe=delete on a backup pod: it is deleted.
// Event-driven: store watches feed one work-queue key; nothing polls. A pod or PodGroup update
// that changes nothing the scheduler reads (the recovery controller's labels and status
// annotations) queues nothing: a reconcile lists every pod, which at 1,000 jobs costs far more
// than the event.
// A reconcile reads the store first, decides under its mutex from that snapshot (a list of
// store writes and log lines), carries the writes out with the mutex released, then re-locks to
// record what succeeded; so accessors never wait for store I/O.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/work_queue.h"
#include "sim/scenario.h"
#include "sim/sim_objects.h"
#include "store/object_store.h"

namespace clusterd::sim {

class MiniScheduler {
 public:
  using EventLog = std::function<void(const std::string&)>;

  MiniScheduler(store::ObjectStore& store, Clock& clock, ClusterSpec cluster,
                std::vector<JobSpec> jobs, EventLog log);
  ~MiniScheduler();

  // Writes the Nodes, AscendJobs, PodGroups and reset-config ConfigMaps, binds the first pods,
  // then starts the watches and the thread.
  absl::Status Start();
  void Stop();

  std::string JobUid(const std::string& job) const;
  // The pods of `job` as bound now, by rank (backup pods excluded).
  std::vector<PodPlacement> Placements(const std::string& job) const;
  // The agent in the job's pod of `rank` exited: the pod terminates (deleted from the store).
  void PodExited(const std::string& job, int rank);
  int reschedules() const;
  int job_reschedules() const;

  // Runs one reconcile on the calling thread (tests).
  void SyncNow();

 private:
  struct JobState {
    JobSpec spec;
    std::string uid;
    bool paused = false;
  };
  struct Occupancy {
    std::map<int, std::set<int>> used;       // node -> NPUs bound to pods
    std::map<int, std::set<int>> unhealthy;  // node -> unhealthy NPUs (device-info)
  };

  // One thing a reconcile decided to do, in order: carried out after mu_ is released.
  struct Step {
    enum class Kind { kLog, kDelete, kPatch, kCreatePod };
    Kind kind = Kind::kLog;
    std::string text;  // kLog: the line
    // kDelete, kPatch: the object; kCreatePod of a backup pod: the pod to annotate with
    // backupNewPodName once the backup exists (empty name: none).
    store::ObjectKey key;
    store::Object object;  // kPatch: the merge patch; kCreatePod: the pod
    // kCreatePod:
    PodPlacement placement;
    bool reschedule = false;  // counts as a reschedule once created
    bool retry = false;       // a failed create queues another reconcile
  };

  void Loop();
  // Whether `event` may change a reconcile's outcome; remembers what it saw.
  bool Relevant(std::string_view resource, const store::WatchEvent& event);
  void Sync();
  Occupancy ReadOccupancy(const std::vector<store::Object>& pods);
  // Picks a node and NPUs for `count` NPUs; 0 when nothing fits. `avoid` is tried last.
  int PickNode(const Occupancy& occ, int count, int avoid, std::vector<int>* npus) const;
  // Decides a pod for `rank` (its NPUs are then taken in `occ`) and appends its creation to
  // `steps`; false when nothing fits.
  // `backup_of`: the source pod of a hot-switch backup ("" for an ordinary pod).
  bool PlanPod(JobState& job, int rank, const std::string& backup_of, int avoid_node,
               Occupancy& occ, std::vector<Step>* steps) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Carries out `steps` (without mu_); returns how many created pods count as reschedules.
  int Execute(const std::vector<Step>& steps);
  void Log(const std::string& text);

  store::ObjectStore& store_;
  Clock& clock_;
  const ClusterSpec cluster_;
  EventLog log_;
  WorkQueue queue_;

  // One reconcile at a time (Loop, SyncNow, Start); held across its store I/O, taken before mu_.
  absl::Mutex sync_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::map<std::string, JobState> jobs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> order_;  // the jobs in scenario order: scheduled in this order
  std::map<std::string, int> last_node_ ABSL_GUARDED_BY(mu_);        // pod name -> node it left
  std::map<std::string, absl::Time> starting_ ABSL_GUARDED_BY(mu_);  // backup pod -> Running at
  int reschedules_ ABSL_GUARDED_BY(mu_) = 0;
  int job_reschedules_ ABSL_GUARDED_BY(mu_) = 0;
  int pod_serial_ ABSL_GUARDED_BY(mu_) = 0;

  absl::Mutex seen_mu_;
  // "resource/ns/name" of a pod or PodGroup -> the fields a reconcile reads, as of its last
  // event.
  std::map<std::string, std::string> seen_ ABSL_GUARDED_BY(seen_mu_);
  std::vector<std::unique_ptr<store::WatchHandle>> watches_;
  std::thread thread_;
  bool started_ = false;
};

}  // namespace clusterd::sim
