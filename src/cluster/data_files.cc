#include "cluster/data_files.h"

#include "absl/strings/str_cat.h"
#include "cluster/public_fault_request.h"
#include "common/file_change.h"
#include "common/json_util.h"

namespace clusterd::cluster {
namespace {

// The largest shipped file is a few KiB; a data file of megabytes is not one of ours.
constexpr size_t kMaxDataFileBytes = 8 << 20;

absl::Status Problem(const std::string& dir, std::string_view name, absl::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat("data file ", dir, "/", std::string(name), ": ",
                                                    what, " (--data-dir chooses the directory)"));
}

}  // namespace

absl::StatusOr<std::string> ReadDataFile(const std::string& dir, std::string_view name) {
  absl::StatusOr<std::string> text =
      ReadWholeFile(absl::StrCat(dir, "/", std::string(name)), kMaxDataFileBytes);
  if (!text.ok()) return Problem(dir, name, text.status().message());
  if (name == kPublicFaultDefaultsFile) {
    if (absl::StatusOr<PublicFaultConfig> config = ParsePublicFaultConfig(*text); !config.ok()) {
      return Problem(dir, name, config.status().message());
    }
    return text;
  }
  absl::StatusOr<nlohmann::ordered_json> json = ParseJson(*text, name);
  if (!json.ok()) return Problem(dir, name, json.status().message());
  if (!json->is_array()) return Problem(dir, name, "not a JSON array");
  return text;
}

absl::Status CheckRequiredDataFiles(const std::string& dir) {
  for (std::string_view name : kRequiredDataFiles) {
    if (absl::StatusOr<std::string> text = ReadDataFile(dir, name); !text.ok()) return text.status();
  }
  return absl::OkStatus();
}

}  // namespace clusterd::cluster
