#include "cluster/fault_config_files.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "cluster/data_files.h"
#include "common/log.h"
#include "common/sv.h"

namespace clusterd::cluster {
namespace {

constexpr char kFaultConfigFilesLog[] = "fault-centre";

}  // namespace

FaultConfigFiles::FaultConfigFiles(Options options, const Clock& clock)
    : options_(std::move(options)) {
  std::vector<std::string> watched;
  if (!options_.data_dir.empty()) {
    for (std::string_view name : kRequiredDataFiles) {
      watched.push_back(absl::StrCat(options_.data_dir, "/", Sv(name)));
    }
  }
  if (!options_.public_fault_config_path.empty()) {
    watched.push_back(options_.public_fault_config_path);
  }
  for (std::string& path : watched) {
    const bool user = path == options_.public_fault_config_path;
    changes_.push_back(
        std::make_unique<FileChange>(std::move(path), clock, absl::ZeroDuration(), user));
    changes_.back()->Changed();  // the first look: the first Read follows
  }
}

absl::Status FaultConfigFiles::CheckRequired() {
  if (options_.data_dir.empty()) return absl::OkStatus();
  return CheckRequiredDataFiles(options_.data_dir);
}

bool FaultConfigFiles::Changed() {
  bool changed = false;
  for (const auto& file : changes_) changed |= file->Changed();  // look at each
  return changed;
}

FaultConfigRead FaultConfigFiles::Read() {
  const std::string dir = options_.data_dir.empty() ? "." : options_.data_dir;
  // A shipped file that cannot be read or parsed now (it was at start) keeps what it gave.
  auto shipped = [&](std::string_view name) -> absl::StatusOr<std::string> {
    if (options_.data_dir.empty()) return std::string();  // no data directory
    return ReadDataFile(dir, name);
  };
  FaultConfigRead out;
  absl::StatusOr<std::string> rules = shipped(kRelationRulesFile);
  absl::StatusOr<std::string> durations = shipped(kFaultDurationFile);
  if (rules.ok() && durations.ok()) {
    std::vector<std::string> problems;
    out.relation = ParseRelationConfig(*rules, *durations, &problems);
    for (const auto& p : problems) {
      LogWarn(kFaultConfigFilesLog, "relation fault configuration", {{"problem", p}});
    }
  } else {
    out.relation = rules.ok() ? durations.status() : rules.status();
  }
  // The user's public-fault configuration is optional: without it (or when it is wrong) the
  // shipped defaults apply, and the note says why.
  std::string text;
  if (const std::string& user = options_.public_fault_config_path; !user.empty()) {
    absl::StatusOr<std::string> read = ReadWholeFile(user, 8 << 20);
    if (read.ok()) {
      text = *std::move(read);
    } else {
      out.note = absl::StrCat("optional file ", user, " not used (shipped public-fault defaults ",
                              "apply): ", read.status().message());
    }
  }
  absl::StatusOr<PublicFaultConfig> config = absl::NotFoundError("no user configuration");
  if (!text.empty()) {
    config = ParsePublicFaultConfig(text);
    if (config.ok()) {
      out.public_source = options_.public_fault_config_path;
    } else {
      out.note = absl::StrCat(
          "optional file ", options_.public_fault_config_path,
          " rejected (shipped public-fault defaults apply): ", config.status().message());
    }
  }
  if (!config.ok()) {
    absl::StatusOr<std::string> defaults = shipped(kPublicFaultDefaultsFile);
    text = defaults.ok() ? *std::move(defaults) : std::string();
    config = defaults.ok() ? ParsePublicFaultConfig(text) : defaults.status();
    out.public_source = absl::StrCat(dir, "/", Sv(kPublicFaultDefaultsFile));
  }
  out.public_faults = std::move(config);
  out.public_text = std::move(text);
  return out;
}

}  // namespace clusterd::cluster
