#pragma once

// The fault centre's work items, typed: per-node and per-object keys that the store watches,
// the RPCs and the pipeline's timers queue, and the centre-wide periodic ones. In the queue
// (and in logs and metrics) a key keeps its text form: "dev/<node>", "job/<id>", "#index".
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "runtime/controller.h"

namespace clusterd::cluster {

struct FaultCentreKey {
  enum class Kind {
    kDeviceInfo,           // dev/<node>: its device-info ConfigMap and device/switch pipeline
    kNodeInfo,             // nod/<node>: its node-info ConfigMap (NodeD)
    kK8sNode,              // k8s/<node>: its Kubernetes Node object
    kPublicFaultCm,        // pf/<ns>/<name>: a public-fault ConfigMap
    kJob,                  // job/<id>: the job's fault snapshot
    kJobIndex,             // #index: re-read the job registry
    kPublicFaultExpiry,    // #pf-expire: public faults whose time ran out
    kManualTriage,         // #manual-triage: manual-separation occurrences due
    kManualSync,           // #manual-sync: clusterd-manual-info-cm
    kManualConfig,         // #manual-config: the 300 s read of clusterd-config-cm
    kManualConfigChanged,  // #manual-config-changed: clusterd-config-cm was written
    kStatistic,            // #statistic: statistic-fault-info
    kConfigPoll,           // #config-poll: the configuration files
  };
  Kind kind = Kind::kJobIndex;
  std::string name = {};  // the node, <ns>/<name> or job id; "" for the centre-wide kinds

  static FaultCentreKey Device(std::string node) { return {Kind::kDeviceInfo, std::move(node)}; }
  static FaultCentreKey NodeInfo(std::string node) { return {Kind::kNodeInfo, std::move(node)}; }
  static FaultCentreKey K8sNode(std::string node) { return {Kind::kK8sNode, std::move(node)}; }
  static FaultCentreKey PublicFaultCm(std::string ns_name) {
    return {Kind::kPublicFaultCm, std::move(ns_name)};
  }
  static FaultCentreKey Job(std::string id) { return {Kind::kJob, std::move(id)}; }
  static FaultCentreKey Of(Kind kind) { return {kind, ""}; }

  bool operator==(const FaultCentreKey& o) const {
    return std::tie(kind, name) == std::tie(o.kind, o.name);
  }
};

// The text form of every kind: a prefix followed by the name, or the whole key.
struct FaultCentreKeyCodec {
  static std::string Encode(const FaultCentreKey& key);
  static std::optional<FaultCentreKey> Decode(std::string_view text);
};

using FaultCentreController = runtime::TypedController<FaultCentreKey, FaultCentreKeyCodec>;

}  // namespace clusterd::cluster
