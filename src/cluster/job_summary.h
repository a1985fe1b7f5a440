#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "cluster/job_record.h"
#include "model/job_summary_signal.h"
#include "model/rank_table.h"
#include "store/object_store.h"

namespace clusterd::cluster {

// Job-summary ConfigMaps and signals (jobs-ranktable-diagnosis.md §3.2-§3.5): pure functions of
// a job record and `now`.

inline constexpr std::string_view kJobSummaryPrefix = "job-summary-";
inline constexpr std::string_view kLabelOutsideJobInfo = "outside-job-info";
inline constexpr std::string_view kLabelRingController = "ring-controller.atlas";
inline constexpr std::string_view kRingControllerAscend910 = "ascend-910";
inline constexpr std::string_view kInitHcclJson = R"({"status":"initializing"})";
inline constexpr std::string_view kFrameworkPytorch = "pytorch";

// Data keys of a job-summary ConfigMap.
inline constexpr std::string_view kKeyJobName = "job_name";
inline constexpr std::string_view kKeyJobId = "job_id";
inline constexpr std::string_view kKeyFramework = "framework";
inline constexpr std::string_view kKeyJobStatus = "job_status";
inline constexpr std::string_view kKeyCmIndex = "cm_index";
inline constexpr std::string_view kKeyTotal = "total";
inline constexpr std::string_view kKeyHcclJson = "hccl.json";
inline constexpr std::string_view kKeyOperator = "operator";
inline constexpr std::string_view kKeyTime = "time";
inline constexpr std::string_view kKeySid = "sid";
inline constexpr std::string_view kKeyDeleteTime = "deleteTime";
inline constexpr std::string_view kKeySharedTorIp = "sharedTorIp";
inline constexpr std::string_view kKeyMasterAddr = "masterAddr";

// A slice's serialised table stays at or under this many bytes (≈800 KiB, §3.5).
inline constexpr size_t kMaxSummarySliceBytes = 819200;
// Signals whose HcclJson holds more `rank_id`s than this carry "" instead (§3.3), and a job
// with more NPUs is sent alone in snapshots (§3.4).
inline constexpr size_t kMaxSignalRanks = 40000;

// `job-summary-<job>` for slice 0, `job-summary-<job>-<i>` after.
std::string JobSummaryConfigMapName(std::string_view job_name, int64_t index);

// Cuts the table's servers into consecutive runs whose serialised partial table (same top-level
// fields, that run of servers and the matching run of rank_list) is <= max_bytes, each run as
// long as possible; a single oversize server is a slice of its own. Every slice carries
// "total": <number of slices>. No servers -> no slices.
std::vector<std::string> SliceRankTable(const model::RankTable& table,
                                        size_t max_bytes = kMaxSummarySliceBytes);

enum class WriteMode { kCreateFirst, kUpdateFirst };
struct ConfigMapWrite {
  store::Object config_map;
  WriteMode mode;
};

// The init ConfigMap written when a record is created or re-initialised (create-first).
ConfigMapWrite InitSummaryWrite(const JobRecord& record);
// The ConfigMaps of a status change: one per slice of record.total_cm_num (update-first).
// `slices` from SliceRankTable of the record's table.
std::vector<ConfigMapWrite> UpdateSummaryWrites(const JobRecord& record,
                                                const std::vector<std::string>& slices,
                                                absl::Time now);
// The ConfigMaps of a pre-delete: indices 0..total_cm_num-1, operator delete (create-first).
std::vector<ConfigMapWrite> PreDeleteSummaryWrites(const JobRecord& record,
                                                   const std::vector<std::string>& slices);

// The signal of §3.3 (uuid left empty for the caller to stamp).
model::JobSummarySignal SummarySignal(const JobRecord& record, std::string_view op,
                                      std::string hccl_json, absl::Time now);
// `hccl_json`, or "" if it holds more than kMaxSignalRanks occurrences of "rank_id".
std::string LimitSignalHcclJson(std::string hccl_json);

// §3.4: every record as an `add` signal carrying its serialised rank table, grouped (in the
// given order) into batches of at most kMaxSignalRanks NPUs; a bigger job is sent alone with
// HcclJson "". No records -> no batch.
std::vector<std::vector<model::JobSummarySignal>> SnapshotBatches(
    const std::vector<JobRecord>& records, absl::Time now);

}  // namespace clusterd::cluster
