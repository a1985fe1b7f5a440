#pragma once

// The desired changes to Kubernetes objects (§11.2-§11.5), as JSON merge patches. Pure; the
// executor applies them with ObjectStore::Patch.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "recovery/fault_rank.h"
#include "store/object_store.h"

namespace clusterd::recovery {

// Generic builders: {"metadata":{"labels":{key:value}}} / {"metadata":{"annotations":{...}}}.
store::Object LabelPatch(std::string_view key, std::string_view value);
store::Object AnnotationPatch(std::string_view key, std::string_view value);

// §11.2 PodGroup.
// Label process-recover-enable = on (Register, end of A_FAULT_RETRY) or pause (A_FAULT_RETRY).
store::Object ProcessRecoverEnablePatch(std::string_view value);
// Annotation ProcessRecoverStatus (A_CHECK): retry-success, recover-failed, ...
store::Object RecoverStatusPatch(std::string_view status);
// Annotation ProcessConfirmFault = "rank:type,..." (§9.6).
store::Object ConfirmFaultPatch(const std::vector<FaultRank>& faults);

// §11.3 pods.
// Label fault-type = software | retry-fault (ReportProcessFault).
store::Object FaultTypePatch(bool all_retry_class);
// Hot switch prepare: inHotSwitchFlow=true, needOperatorOpe=create on the faulty pod.
store::Object HotSwitchPreparePatch();
// Hot switch migrate / stop-job: needVolcanoOpe=delete and label fault-type=SubHealth.
store::Object DeleteForSubHealthPatch();
// Hot switch failure clean-up of the faulty pod: remove inHotSwitchFlow, backupNewPodName,
// needOperatorOpe.
store::Object HotSwitchFailureCleanupPatch();
// Hot switch failure clean-up of the backup pod: needOperatorOpe=delete.
store::Object BackupDeletePatch();
// Hot switch success clean-up of the backup pod: remove inHotSwitchFlow.
store::Object HotSwitchSuccessCleanupPatch();

// §11.4 nodes: NodeHealthyStatus=UnHealthy (stress-test isolation).
store::Object NodeUnhealthyPatch();

// §11.5 cluster-system/fault-job-info: drop the job's key.
store::Object FaultJobInfoRemovalPatch(std::string_view job_id);
// §11.5: the value of the job's key in `cluster-system/fault-job-info`, a map from super-pod id
// to the job's faulty and healthy nodes in it (compact JSON, nodes sorted):
// {"<superPodID>":{"faultNodes":[...],"healthyNodes":[...]}}. `super_pod_of_node` holds every
// node of the job (nodes without a super pod are left out); `faulty` the nodes of the faulty
// pods. The spec names the content, not its keys: the key names are documented in
// docs/compatibility.md.
std::string FaultJobInfoValue(const std::map<std::string, std::string>& super_pod_of_node,
                              const std::set<std::string>& faulty);
// The ConfigMap with the job's entry, for when it does not exist yet.
store::Object FaultJobInfoConfigMap(std::string_view job_id, const std::string& value);

}  // namespace clusterd::recovery
