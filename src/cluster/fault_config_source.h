#pragma once

// Where the fault centre's configuration comes from: the relation-fault rules and durations
// (relationFaultCustomization.json, faultDuration.json) and the public-fault configuration
// (publicCustomization.json, else the shipped publicFaultConfiguration.json). The centre asks
// the source; it reads no file itself. Production uses the files (fault_config_files.h); tests
// may give the configuration in memory.
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cluster/fault_job_centre.h"
#include "cluster/public_fault_request.h"

namespace clusterd::cluster {

// What the configuration says at one reading.
struct FaultConfigRead {
  // The relation-fault rules and durations; an error keeps the previous ones.
  absl::StatusOr<RelationConfig> relation = RelationConfig{};
  // The public-fault configuration in force: the user's when given and valid, otherwise the
  // shipped defaults. An error keeps the previous one (with none, public faults are refused).
  absl::StatusOr<PublicFaultConfig> public_faults = PublicFaultConfig{};
  std::string public_text = {};    // its text: an unchanged text is not applied again
  std::string public_source = {};  // where it came from (the configuration view shows it)
  // Why the user's optional configuration is not in use ("" = it is, or there is none).
  std::string note = {};
};

class FaultConfigSource {
 public:
  virtual ~FaultConfigSource() = default;
  // At start: the required configuration is there and valid (clusterd does not start without).
  virtual absl::Status CheckRequired() = 0;
  // Whether the configuration changed since it was last read (asked every config_poll_period).
  virtual bool Changed() = 0;
  virtual FaultConfigRead Read() = 0;
  // Where the configuration lives (the configuration view's data_dir).
  virtual std::string Location() const = 0;
};

}  // namespace clusterd::cluster
