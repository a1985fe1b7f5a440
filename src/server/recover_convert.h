#pragma once

// Pure translations between the Recover wire messages (recover.proto), the recovery room's
// types and the fault centre's per-job snapshots. No I/O: unit-tested in
// tests/unit/server/recover_convert_test.cc.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/fault_job_faults.h"
#include "cluster/job_record.h"
#include "nlohmann/json.hpp"
#include "recover.pb.h"
#include "recovery/event.h"
#include "recovery/executor.h"
#include "recovery/job_recovery.h"
#include "recovery/om_request.h"
#include "recovery/signal.h"

namespace clusterd::server {

// recovery::Signal -> ProcessManageSignal, field by field (§2.2, §5.6).
::ProcessManageSignal SignalToProto(const recovery::Signal& signal);

// faultRanks of a report. Every rankId and faultType must be a decimal integer (§2.2: clients
// parse them with an integer parser); the first bad entry is the error.
absl::StatusOr<std::vector<recovery::FaultRank>> ParseFaultRanks(
    const google::protobuf::RepeatedPtrField<::FaultRank>& ranks);

// isolateRankIds of ReportRecoverStatus: non-integers are dropped (counted in `dropped`).
std::vector<int64_t> ParseIsolateRanks(const google::protobuf::RepeatedPtrField<std::string>& ids,
                                       int* dropped);

// §12 nicOps as the request check wants them.
std::map<std::string, recovery::NicOps> NicOpsOf(const ::SwitchNics& request);
// §13 stressParam (node -> ops).
std::map<std::string, std::vector<int64_t>> StressParamOf(const ::StressTestParam& request);
// ReplyStressTestResult: global rank -> op -> result. A rank key that is not a decimal integer
// is an error (the machine keys results by rank).
absl::StatusOr<recovery::StressResults> ParseStressResults(const ::StressTestResult& request);

// SwitchRankList / StressTestRankParams pushed to the OM notify streams.
::SwitchRankList SwitchRankListToProto(const std::string& job_id,
                                       const recovery::NicSwitchParams& params);
::StressTestRankParams StressParamsToProto(const std::string& job_id,
                                           const std::map<int64_t, std::vector<int64_t>>& params);

// What the §12/§13 request checks know of the job: its record in the job registry (nullopt:
// unknown) and whether it has a controller. Every node of the rank table counts as known to
// the fault centre (the centre has no per-node query yet).
recovery::JobTopology TopologyOf(const std::optional<cluster::JobRecord>& record, bool registered);

// §8.1: the levels the recovery plane subscribes without.
bool RecoveryIgnoresLevel(std::string_view level);
// The fault centre's snapshot as the controller takes it (§8.1, step 1 in part): ranks of
// levels NotHandleFault / PreSeparateNPU (and PreSeparate) are dropped, as are "node not
// ready" pseudo-ranks (no fault code and no device).
recovery::HardwareFaultsPublished HardwareFaultsOf(const cluster::JobFaultRanks& faults);

// The operator's view of one job's controller (GET /api/clusterd/v1/recovery[/<job>],
// `clusterctl get recovery`): state, phase, strategy, fault ranks, uuid, the history of the
// current cycle with RFC 3339 timestamps.
nlohmann::ordered_json RecoveryJson(const recovery::JobIdentity& id,
                                    const recovery::JobRecovery& job, bool stream_open);

}  // namespace clusterd::server
