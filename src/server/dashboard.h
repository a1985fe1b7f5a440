#pragma once

// The operator dashboard on clusterd's HTTP port:
//   GET /, /dashboard                the page (HTML, CSS and JavaScript embedded in the binary)
//   GET /api/clusterd/v1/events      the live fault feed, server-sent events (text/event-stream)
//   GET /api/clusterd/v1/events/recent   the feed's backlog (JSON), ?limit=N (default 100)
// The page (dashboard_page.cc) draws a heat map of nodes x NPUs coloured by fault level (healthy
// NPUs a job holds in the job's colour), the jobs with their recovery state, strategy and ETTR,
// a per-job timeline chart of where the time went (training, detection, decision, process
// restart by strategy, rescheduling), the fault episodes, goodput per job, the repeat offenders
// and the feed (its backlog first, then the stream from where the backlog ended: ?after=SEQ).
// It reads the JSON endpoints the HTTP server already serves; nothing is fetched from elsewhere.
// `/dashboard?feed=off` leaves the event stream closed (static snapshots, headless browsers
// whose virtual clock waits for open requests); the backlog is still loaded.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "server/http_transport.h"
#include "store/informer.h"
#include "store/object_store.h"

namespace clusterd::cluster {
class FaultCentre;
}

namespace clusterd::server {

// What changed in the fault view, in order. Driven by watches on the cluster-info ConfigMaps
// the fault centre publishes (so an event follows every published change, with no polling);
// one entry per appeared or cleared (node, NPU, code). Keeps the last `capacity` entries.
//
// Incremental: the feed remembers the per-node entries of every cluster-info ConfigMap it saw
// and each node's last fault state. A watch event re-reads and diffs only the nodes whose entry
// in that ConfigMap appeared, changed or went away, so one changing node among thousands costs
// that node (plus splitting the one ConfigMap that carried it), not the whole view.
class FaultFeed {
 public:
  struct Entry {
    uint64_t seq = 0;
    absl::Time at;
    std::string change;  // "occur" or "clear"
    std::string node, npu, code, level, source;
    std::vector<std::string> jobs;
    nlohmann::ordered_json ToJson() const;
  };

  // Fault state keyed node|npu|code (one node's, or any part of the view).
  using State = std::map<std::string, Entry>;
  struct Changes {
    State occur;  // appeared, or level changed: the new entry
    State clear;  // gone: the last known entry
  };
  // Adds to `out` what changed from `before` to `after` (pure; seq, at and change untouched).
  static void Diff(const State& before, const State& after, Changes* out);

  // `informers`: the process's shared informers (the cluster-info ConfigMaps are followed
  // through its ConfigMap informer); null: the feed keeps its own.
  FaultFeed(store::ObjectStore& store, const cluster::FaultCentre& faults, size_t capacity = 1000,
            store::InformerFactory* informers = nullptr);
  ~FaultFeed();
  absl::Status Start();
  void Stop();

  // Re-reads the whole fault view and appends what changed (tests; a fallback).
  void Refresh();
  // A cluster-info ConfigMap was written (`deleted`: removed): re-reads and diffs only the nodes
  // whose entry in it changed since the last version seen (the watch calls it; tests may too).
  void RefreshConfigMap(const store::Object& config_map, bool deleted);
  // Entries with seq > `after`, waiting up to `wait` for one when there are none yet. Returns
  // early (empty) once Stop() was called.
  std::vector<Entry> Since(uint64_t after, absl::Duration wait) const;
  uint64_t last_seq() const;
  bool stopped() const;

 private:
  std::unique_ptr<store::InformerFactory> own_informers_;  // when none was given
  store::InformerFactory* const informers_;
  const cluster::FaultCentre& faults_;
  const size_t capacity_;
  // Re-reads `nodes` (all nodes seen or now faulted when `all`) and appends what changed.
  void RefreshNodes(const std::set<std::string>& nodes, bool all)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_);

  // Serialises refreshes (watch thread, tests); taken before mu_.
  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Per node (that has or had faults): its last state.
  std::map<std::string, State> nodes_ ABSL_GUARDED_BY(refresh_mu_);
  // Per cluster-info ConfigMap: its last per-node entries (parsed), keyed by entry name.
  std::map<std::string, std::map<std::string, nlohmann::ordered_json>> shards_ ABSL_GUARDED_BY(refresh_mu_);
  mutable absl::Mutex mu_;
  std::deque<Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<store::InformerRegistration> registration_;
};

// The page's HTML (for tests).
const char* DashboardHtml();

// Registers the page and the event stream. `feed` may be null (the event stream answers 503).
void InstallDashboard(HttpTransport& server, FaultFeed* feed);

}  // namespace clusterd::server
