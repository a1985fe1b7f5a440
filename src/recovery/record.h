#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "recovery/job_recovery.h"
#include "store/object_store.h"

namespace clusterd::recovery {

// The durable form of a job's recovery controller (beyond the original, which keeps it in
// memory only). The executor writes it before it emits the signals of a step, so that a
// clusterd restarted at any point resumes the cycle instead of losing it.
//
// Everything in JobRecovery is kept except the job view (re-read from the store) and the RPCs
// blocked on a full mailbox (their callers are gone; the reports already accepted are kept).
inline constexpr int kRecordVersion = 1;

nlohmann::ordered_json RecordToJson(const JobRecovery& job);
// The restored controller has `resumed` set: the client's next Subscribe continues the cycle
// rather than resetting it (see ResumeCommands and docs/compatibility-recovery.md).
absl::StatusOr<JobRecovery> RecordFromJson(const nlohmann::ordered_json& record);

// The ConfigMap that holds the record: `clusterd-recovery-<jobId>` (lower-cased) in the job's
// namespace,
// key record.json (canonical JSON), labelled for listing at start-up.
std::string RecordConfigMapName(std::string_view job_id);
// OK when RecordConfigMapName(job_id) is a name the store accepts (a DNS-1123 subdomain: at most
// 253 characters of lower-case alphanumerics, '-' and '.', each dot-separated part starting and
// ending alphanumeric). Otherwise InvalidArgument naming the job id and the rule: such a job
// could never have a durable record, so Init and Register refuse it.
absl::Status CheckRecordName(std::string_view job_id);
inline constexpr std::string_view kRecordLabel = "clusterd.io/recovery-record";
store::Object RecordConfigMap(const JobRecovery& job, std::string_view ns);
// The same from the record's canonical text (RecordToJson through CanonicalJson).
store::Object RecordConfigMap(std::string_view job_id, std::string_view ns,
                              std::string record_text);
absl::StatusOr<JobRecovery> RecordFromConfigMap(const store::Object& config_map);

}  // namespace clusterd::recovery
