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

// The most global ranks a job may have (well above the largest jobs of today): the most entries
// one ReportProcessFault may name, the bound of every reported rank while the job's world size
// is not known yet, and the cap of a world size computed from a corrupt view.
inline constexpr int64_t kMaxWorldSize = 131072;

// The job's world size: the global ranks its pods hold, pods x D (§0), with pods =
// max(replicas, highest pod rank + 1) (the job registry refuses a pod rank at or above the
// replicas; the max keeps a view that disagrees from refusing its own ranks), capped at
// kMaxWorldSize. nullopt while it cannot be known: no pod in the controller's view (D unknown)
// or the replicas unknown (<= 0).
std::optional<int64_t> WorldSizeOf(const recovery::JobView& view, int64_t replicas);

// faultRanks of a ReportProcessFault, checked before the controller sees them (issue 16):
// * at most kMaxWorldSize entries, else ResourceExhausted ("200000 entries, over the limit of
//   131072");
// * every rankId and faultType a decimal integer (§2.2: clients parse them with an integer
//   parser), else InvalidArgument;
// * every rank below `world_size` (kMaxWorldSize while unknown), else OutOfRange ("rankId 16
//   is outside the job's world size 16").
// The first bad entry is the error. Duplicates are kept: the controller's §8.4 de-duplication
// collapses them, and the entry cap bounds their cost.
absl::StatusOr<std::vector<recovery::FaultRank>> ParseFaultRanks(
    const google::protobuf::RepeatedPtrField<::FaultRank>& ranks,
    std::optional<int64_t> world_size = std::nullopt);

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
// `world_size` is WorldSizeOf the job (null in the JSON when unknown). "waiting" lists what the
// controller's armed timers wait for, until when and (given `now`) how long is left; timers due
// at or before `now` are left out.
nlohmann::ordered_json RecoveryJson(const recovery::JobIdentity& id,
                                    const recovery::JobRecovery& job, bool stream_open,
                                    std::optional<int64_t> world_size = std::nullopt,
                                    absl::Time now = absl::InfinitePast());

}  // namespace clusterd::server
