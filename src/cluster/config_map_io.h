#pragma once

// Whole ConfigMaps as the fault centre reads and writes them: the string data of one it reads
// (device-info, public-fault, clusterd-config-cm), and the whole of one it owns (cluster-info
// shards, statistic-fault-info, clusterd-manual-info-cm), updated or created.
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "store/object_store.h"

namespace clusterd::cluster {

// The string values of the ConfigMap's data (other values are skipped).
std::map<std::string, std::string> ConfigMapStringData(const store::Object& cm);

// Replaces the data (and sets the labels) of ConfigMap `ns`/`name`, creating it when missing;
// a create that loses a race with another writer becomes an update.
absl::Status WriteWholeConfigMap(store::ObjectStore& store, std::string_view ns,
                                 const std::string& name,
                                 const std::map<std::string, std::string>& data,
                                 const std::map<std::string, std::string>& labels);

}  // namespace clusterd::cluster
