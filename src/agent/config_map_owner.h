#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/config_map_io.h"
#include "store/object_store.h"

namespace clusterd::agent {

// npu-agent marks every ConfigMap it writes with this annotation. On a real cluster the Ascend
// Device Plugin writes kube-system/mindx-dl-deviceinfo-<node> and NodeD writes
// mindx-dl/mindx-dl-nodeinfo-<node>; an agent that rewrote them would replace the real fault
// state with its own (simulated) view, so it only ever touches ConfigMaps carrying its mark.
inline constexpr std::string_view kWriterAnnotation = "clusterd.io/written-by";
inline constexpr std::string_view kAgentWriter = "npu-agent";

// Who a stored ConfigMap names as its writer: the annotation's value, "" when unmarked.
std::string WriterOf(const store::Object& config_map);

struct GuardedWrite {
  bool done = false;     // false: refused, the ConfigMap belongs to another writer
  std::string writer;    // the stored ConfigMap's writer ("" unmarked) when it existed
  bool existed = false;  // the ConfigMap existed before this call
};

// Writes `spec` (full replace, marked as the agent's) unless the ConfigMap exists without the
// agent's mark; `take_over` writes anyway and marks it. Check and write are one optimistic step:
// the update carries the resourceVersion that was checked, so a writer slipping in between
// makes it fail with Aborted (the caller retries) instead of being overwritten.
absl::StatusOr<GuardedWrite> WriteOwnedConfigMap(store::ObjectStore& store,
                                                 const ConfigMapSpec& spec, bool take_over);

// Deletes the ConfigMap if it is the agent's (or `take_over`); absent counts as done.
absl::StatusOr<GuardedWrite> DeleteOwnedConfigMap(store::ObjectStore& store, std::string_view ns,
                                                  std::string_view name, bool take_over);

}  // namespace clusterd::agent
