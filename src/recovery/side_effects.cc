#include "recovery/side_effects.h"

#include "nlohmann/json.hpp"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

void SetAnnotation(store::Object& patch, std::string_view key, std::string_view value) {
  patch["metadata"]["annotations"][std::string(key)] = std::string(value);
}

void RemoveAnnotation(store::Object& patch, std::string_view key) {
  patch["metadata"]["annotations"][std::string(key)] = nullptr;
}

}  // namespace

store::Object LabelPatch(std::string_view key, std::string_view value) {
  store::Object patch;
  patch["metadata"]["labels"][std::string(key)] = std::string(value);
  return patch;
}

store::Object AnnotationPatch(std::string_view key, std::string_view value) {
  store::Object patch;
  SetAnnotation(patch, key, value);
  return patch;
}

store::Object ProcessRecoverEnablePatch(std::string_view value) {
  return LabelPatch(kLabelProcessRecoverEnable, value);
}

store::Object RecoverStatusPatch(std::string_view status) {
  return AnnotationPatch(kAnnotationProcessRecoverStatus, status);
}

store::Object ConfirmFaultPatch(const std::vector<FaultRank>& faults) {
  return AnnotationPatch(kAnnotationProcessConfirmFault, FormatRankTypeList(faults));
}

store::Object FaultTypePatch(bool all_retry_class) {
  return LabelPatch(kLabelFaultType, all_retry_class ? kFaultTypeRetryFault : kFaultTypeSoftware);
}

store::Object HotSwitchPreparePatch() {
  store::Object patch = AnnotationPatch(kAnnotationInHotSwitchFlow, "true");
  SetAnnotation(patch, kAnnotationNeedOperatorOpe, kOpeCreate);
  return patch;
}

store::Object DeleteForSubHealthPatch() {
  store::Object patch = AnnotationPatch(kAnnotationNeedVolcanoOpe, kOpeDelete);
  patch["metadata"]["labels"][std::string(kLabelFaultType)] = std::string(kFaultTypeSubHealth);
  return patch;
}

store::Object HotSwitchFailureCleanupPatch() {
  store::Object patch;
  RemoveAnnotation(patch, kAnnotationInHotSwitchFlow);
  RemoveAnnotation(patch, kAnnotationBackupNewPodName);
  RemoveAnnotation(patch, kAnnotationNeedOperatorOpe);
  return patch;
}

store::Object BackupDeletePatch() {
  return AnnotationPatch(kAnnotationNeedOperatorOpe, kOpeDelete);
}

store::Object HotSwitchSuccessCleanupPatch() {
  store::Object patch;
  RemoveAnnotation(patch, kAnnotationInHotSwitchFlow);
  return patch;
}

store::Object NodeUnhealthyPatch() {
  return AnnotationPatch(kAnnotationNodeHealthyStatus, kNodeUnHealthy);
}

std::string FaultJobInfoValue(const std::map<std::string, std::string>& super_pod_of_node,
                              const std::set<std::string>& faulty) {
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> pods;
  for (const auto& [node, super_pod] : super_pod_of_node) {
    if (super_pod.empty()) continue;
    auto& [bad, good] = pods[super_pod];
    (faulty.count(node) > 0 ? bad : good).push_back(node);  // map order: sorted
  }
  nlohmann::ordered_json value = nlohmann::ordered_json::object();
  for (const auto& [id, nodes] : pods) {
    value[id] = {{"faultNodes", nodes.first}, {"healthyNodes", nodes.second}};
  }
  return value.dump();
}

store::Object FaultJobInfoConfigMap(std::string_view job_id, const std::string& value) {
  store::Object cm = {{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", std::string(kFaultJobInfoName)},
                        {"namespace", std::string(kFaultJobInfoNamespace)}}},
                      {"data", store::Object::object()}};
  cm["data"][std::string(job_id)] = value;
  return cm;
}

store::Object FaultJobInfoRemovalPatch(std::string_view job_id) {
  store::Object patch;
  patch["data"][std::string(job_id)] = nullptr;
  return patch;
}

}  // namespace clusterd::recovery
