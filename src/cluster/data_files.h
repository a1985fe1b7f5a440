#pragma once

// The data files the fault centre reads from --data-dir (shipped in share/clusterd/, data/ in
// the source tree). They are part of the installation: clusterd does not start without them.
#include <array>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace clusterd::cluster {

inline constexpr std::string_view kRelationRulesFile = "relationFaultCustomization.json";
inline constexpr std::string_view kFaultDurationFile = "faultDuration.json";
inline constexpr std::string_view kPublicFaultDefaultsFile = "publicFaultConfiguration.json";
inline constexpr std::array<std::string_view, 3> kRequiredDataFiles = {
    kRelationRulesFile, kFaultDurationFile, kPublicFaultDefaultsFile};

// Reads and parses every required file of `dir` once. The error names the file and what is
// wrong with it (missing, unreadable, not a regular file, not JSON, not the expected shape),
// and says that --data-dir chooses the directory.
absl::Status CheckRequiredDataFiles(const std::string& dir);

// One required data file's text, read and checked as CheckRequiredDataFiles does, or an error
// naming it ("data file PATH: cannot read ...", "...: not a JSON array").
absl::StatusOr<std::string> ReadDataFile(const std::string& dir, std::string_view name);

}  // namespace clusterd::cluster
