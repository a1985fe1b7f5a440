#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "diagnosis/pingmesh_result_source.h"

namespace clusterd::diagnosis::testing {

// A super pod's ping results and cathelper.conf in memory, as NodeD and the operator would
// leave them: a net-diagnosis test can feed a round (and its read errors) without files.
class MemoryPingmeshResultSource final : public PingmeshResultSource {
 public:
  void SetCathelper(const std::string& super_pod_id, std::optional<std::string> text) {
    absl::MutexLock lock(&mu_);
    pods_[super_pod_id].cathelper = std::move(text);
  }
  void SetTopology(const std::string& super_pod_id, bool present) {
    absl::MutexLock lock(&mu_);
    pods_[super_pod_id].topology = present;
  }
  void SetResults(const std::string& super_pod_id, std::vector<PingResultFile> files) {
    absl::MutexLock lock(&mu_);
    pods_[super_pod_id].results = std::move(files);
  }

  absl::StatusOr<std::string> Cathelper(const std::string& super_pod_id) override {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(super_pod_id);
    if (it == pods_.end() || !it->second.cathelper) {
      return absl::NotFoundError(
          absl::StrCat("memory:super-pod-", super_pod_id, "/cathelper.conf: missing"));
    }
    return *it->second.cathelper;
  }
  bool HasTopology(const std::string& super_pod_id) override {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(super_pod_id);
    return it != pods_.end() && it->second.topology;
  }
  absl::StatusOr<std::vector<PingResultFile>> PingResults(
      const std::string& super_pod_id) override {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(super_pod_id);
    if (it == pods_.end()) return std::vector<PingResultFile>{};
    return it->second.results;
  }

 private:
  struct Pod {
    std::optional<std::string> cathelper;
    bool topology = false;
    std::vector<PingResultFile> results;
  };
  absl::Mutex mu_;
  std::map<std::string, Pod> pods_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::diagnosis::testing
