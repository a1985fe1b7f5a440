#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace clusterd::model {

// The five profiling (data-trace) switches of jobs-ranktable-diagnosis.md §5, kept verbatim
// ("on"/"off" by convention; values are not validated).
struct ProfilingSwitch {
  std::string communication_operator;
  std::string step;
  std::string save_checkpoint;
  std::string fp;
  std::string data_loader;
  bool operator==(const ProfilingSwitch&) const = default;
};

// `{"CommunicationOperator":..,"Step":..,"SaveCheckpoint":..,"FP":..,"DataLoader":..}`, Go
// encoding/json bytes.
std::string SerializeProfilingSwitch(const ProfilingSwitch& s);
// Go encoding/json decoding (missing fields empty; wrong types are errors).
absl::StatusOr<ProfilingSwitch> ParseProfilingSwitch(std::string_view text, std::string_view what);

}  // namespace clusterd::model
