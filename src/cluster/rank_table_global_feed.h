#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cluster/job_registry.h"
#include "cluster/rank_table_global_builder.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "model/rank_table_global.h"
#include "runtime/controller.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::cluster {

// Generation and delivery of MindIE global rank tables (jobs-ranktable-diagnosis.md §2.4-§2.5),
// keyed by the MindIE job id.
//
// A generation request is queued when a client subscribes (after `first_delay`, ≈2 s), when a
// `rings-config-*` ConfigMap with label jobID changes (watched here), and when a controller or
// coordinator pod of the deployment changes (reported by the JobRegistry). Requests for one job
// coalesce. Each generation reads the current instance ConfigMaps and pods, builds the table
// (BuildGlobalRankTable) and hands it to the sink (the Config service's publisher), which fails
// when nobody is subscribed. Any failure is retried with back-off 2 s, 4 s, 8 s, 16 s; a request
// already re-queued `max_requeues` times is dropped. Failures and drops are logged and counted in
// clusterd_global_rank_table_generations_total{result}.
class GlobalRankTableFeed {
 public:
  struct Options {
    absl::Duration first_delay = absl::Seconds(2);
    absl::Duration base_retry_delay = absl::Seconds(2);
    absl::Duration max_retry_delay = absl::Seconds(16);
    int max_requeues = 3;
  };
  using Sink = std::function<absl::Status(const std::string& job_id, const std::string& table)>;

  // `informers` hands out the process's shared informers; null: the feed keeps its own.
  GlobalRankTableFeed(store::ObjectStore& store, JobRegistry& registry, Clock& clock,
                      Options options, store::InformerFactory* informers);
  GlobalRankTableFeed(store::ObjectStore& store, JobRegistry& registry, Clock& clock,
                      Options options)
      : GlobalRankTableFeed(store, registry, clock, options, nullptr) {}
  GlobalRankTableFeed(store::ObjectStore& store, JobRegistry& registry, Clock& clock)
      : GlobalRankTableFeed(store, registry, clock, Options{}) {}
  ~GlobalRankTableFeed();

  // Where generated tables go. Set before Start.
  void SetSink(Sink sink);

  // Reads the rings-config ConfigMaps from the shared ConfigMap informer (starting it if not yet
  // started) and registers on it, and subscribes to the registry's pod changes.
  // The generations run on controller() (its Start() runs the worker; tests pump it).
  absl::Status Start();
  void Stop();
  runtime::Controller& controller() { return controller_; }

  // Queues a generation for `job_id` after `delay`.
  void Request(const std::string& job_id, absl::Duration delay);
  // A client subscribed: a generation after Options::first_delay.
  void RequestAfterSubscribe(const std::string& job_id) { Request(job_id, options_.first_delay); }
  void OnConfigMapEvent(const store::WatchEvent& event);

  // The table as it would be generated now (also serves operators).
  absl::StatusOr<model::GlobalRankTable> Generate(const std::string& job_id) const;

 private:
  runtime::Result Reconcile(const std::string& job_id, int retries);
  // Records the instance ConfigMap of `event`; its MindIE job id, if it is one.
  std::optional<std::string> Record(const store::WatchEvent& event);

  std::unique_ptr<store::InformerFactory> own_informers_;  // when none was given
  store::InformerFactory* const informers_;
  JobRegistry& registry_;
  const Options options_;
  Sink sink_;
  std::unique_ptr<store::InformerRegistration> registration_;

  mutable absl::Mutex mu_;
  // rings-config-* ConfigMaps with label jobID, by namespace/name.
  absl::flat_hash_map<std::string, InstanceConfigMap> instances_ ABSL_GUARDED_BY(mu_);

  Counter& pushed_;
  Counter& failed_;
  Counter& dropped_;
  // Last: its worker calls Reconcile, which uses everything above.
  runtime::Controller controller_;
};

}  // namespace clusterd::cluster
