#pragma once

// The fault centre's configuration from files (fault_config_source.h): the shipped data files of
// --data-dir (data_files.h) and the optional --public-fault-config file. The files are looked
// at when the centre polls (a ConfigMap volume or an operator replaces them by rename; an edit
// in place changes size or mtime) and read again when one changed; removing the user file brings
// the shipped defaults back, so its removal is a change too.
#include <memory>
#include <string>
#include <vector>

#include "cluster/fault_config_source.h"
#include "common/clock.h"
#include "common/file_change.h"

namespace clusterd::cluster {

class FaultConfigFiles final : public FaultConfigSource {
 public:
  struct Options {
    // Where relationFaultCustomization.json, faultDuration.json and
    // publicFaultConfiguration.json are; "" = none (an empty configuration).
    std::string data_dir = {};
    // A user public-fault configuration (publicCustomization.json): optional; "" = none.
    std::string public_fault_config_path = {};
  };

  FaultConfigFiles(Options options, const Clock& clock);

  absl::Status CheckRequired() override;
  bool Changed() override;
  FaultConfigRead Read() override;
  std::string Location() const override { return options_.data_dir; }

 private:
  const Options options_;
  std::vector<std::unique_ptr<FileChange>> changes_;
};

}  // namespace clusterd::cluster
