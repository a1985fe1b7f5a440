#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "diagnosis/profiling_data.h"
#include "diagnosis/profiling_data_source.h"

namespace clusterd::diagnosis::testing {

// The ranks' profiling data of the slow-node tests, in memory: each rank holds the text of its
// steptime.csv, comm.csv and parallel_group.json as the node side would write them, so the
// controller runs the same parsers as on files. A Refresh re-parses the whole text and keeps the
// newest samples: for data that only grow (as the tests write them) that is what the
// incremental file reader returns.
class MemoryProfilingDataSource final : public ProfilingDataSource {
 public:
  struct RankFiles {
    std::optional<std::string> parallel_group;  // nullopt: not written yet
    std::optional<std::string> step_time;       // steptime.csv
    std::optional<std::string> comm;            // comm.csv
  };

  void SetRank(const std::string& job_id, int64_t rank, RankFiles files) {
    absl::MutexLock lock(&mu_);
    ranks_[job_id][rank] = std::move(files);
  }
  void SetParallelGroups(const std::string& job_id, int64_t rank, std::string text) {
    absl::MutexLock lock(&mu_);
    ranks_[job_id][rank].parallel_group = std::move(text);
  }
  // The rank's data vanish (its directory removed).
  void RemoveRank(const std::string& job_id, int64_t rank) {
    absl::MutexLock lock(&mu_);
    ranks_[job_id].erase(rank);
  }

  std::vector<int64_t> Ranks(const std::string& job_id) override {
    absl::MutexLock lock(&mu_);
    std::vector<int64_t> out;
    if (auto it = ranks_.find(job_id); it != ranks_.end()) {
      for (const auto& [rank, files] : it->second) out.push_back(rank);
    }
    return out;
  }
  bool HasParallelGroups(const std::string& job_id, int64_t rank) override {
    absl::MutexLock lock(&mu_);
    const RankFiles* files = Find(job_id, rank);
    return files != nullptr && files->parallel_group.has_value();
  }
  absl::StatusOr<ProfilingText> ParallelGroups(const std::string& job_id, int64_t rank) override {
    absl::MutexLock lock(&mu_);
    const std::string name = Name(job_id, rank, kParallelGroupFile);
    const RankFiles* files = Find(job_id, rank);
    if (files == nullptr || !files->parallel_group) {
      return absl::NotFoundError(absl::StrCat(name, ": missing"));
    }
    return ProfilingText{name, *files->parallel_group};
  }
  std::unique_ptr<RankProfileReader> OpenRank(const std::string& job_id, int64_t rank,
                                              size_t max_samples) override {
    return std::make_unique<Reader>(*this, job_id, rank, max_samples);
  }

 private:
  class Reader final : public RankProfileReader {
   public:
    Reader(MemoryProfilingDataSource& source, std::string job_id, int64_t rank, size_t max_samples)
        : source_(source), job_id_(std::move(job_id)), max_samples_(max_samples) {
      profile_.rank = rank;
    }
    const RankProfile& Refresh(std::vector<std::string>* problems) override {
      std::optional<RankFiles> files = source_.Copy(job_id_, profile_.rank);
      profile_.step_time.clear();
      profile_.comm.reset();
      if (!files) return profile_;
      if (files->step_time) {
        auto series = ParseStepTimeCsv(*files->step_time);
        if (series.ok()) {
          profile_.step_time = Newest(std::move(*series));
        } else if (problems) {
          problems->push_back(
              absl::StrCat("rank ", profile_.rank, ": ", series.status().message()));
        }
      }
      if (files->comm) {
        profile_.comm = CommSeries{};
        auto comm = ParseCommCsv(*files->comm);
        if (comm.ok()) {
          CommSeries& c = *profile_.comm;
          c.zp_device = Newest(std::move(comm->zp_device));
          c.zp_host = Newest(std::move(comm->zp_host));
          c.pp_device = Newest(std::move(comm->pp_device));
          c.pp_host = Newest(std::move(comm->pp_host));
          c.dataloader_host = Newest(std::move(comm->dataloader_host));
        } else if (problems) {
          problems->push_back(absl::StrCat("rank ", profile_.rank, ": ", comm.status().message()));
        }
      }
      return profile_;
    }

   private:
    Series Newest(Series s) const {
      const size_t keep = std::max<size_t>(max_samples_, 1);
      if (s.size() > keep) s.erase(s.begin(), s.end() - static_cast<long>(keep));
      return s;
    }

    MemoryProfilingDataSource& source_;
    const std::string job_id_;
    const size_t max_samples_;
    RankProfile profile_;
  };

  static std::string Name(const std::string& job_id, int64_t rank, std::string_view file) {
    return absl::StrCat("memory:", job_id, "/", rank, "/",
                        absl::string_view(file.data(), file.size()));
  }
  const RankFiles* Find(const std::string& job_id, int64_t rank) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto job = ranks_.find(job_id);
    if (job == ranks_.end()) return nullptr;
    auto it = job->second.find(rank);
    return it == job->second.end() ? nullptr : &it->second;
  }
  std::optional<RankFiles> Copy(const std::string& job_id, int64_t rank) {
    absl::MutexLock lock(&mu_);
    const RankFiles* files = Find(job_id, rank);
    if (files == nullptr) return std::nullopt;
    return *files;
  }

  absl::Mutex mu_;
  std::map<std::string, std::map<int64_t, RankFiles>> ranks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::diagnosis::testing
