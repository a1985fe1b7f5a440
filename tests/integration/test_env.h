#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace clusterd::testing {

// A fresh directory under the test temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "clusterd-it-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs a command line through the shell; returns {exit code, stdout+stderr}.
struct CommandResult {
  int exit_code;
  std::string output;
};
CommandResult RunCommand(const std::string& command_line);

// Writes `object` into the `dir` store at `state_dir` as another process would: a complete
// file (`<resource>/[<namespace>/]<name>.json`, docs/store-layout.md) renamed into place.
void WriteStoreObjectFile(const std::string& state_dir, const std::string& resource,
                          const nlohmann::ordered_json& object);

// The value of one sample (`name{labels}` as rendered) in GET <base_url>/metrics: 0 when the
// sample is absent, -1 when /metrics did not answer.
double MetricSample(const std::string& base_url, const std::string& sample);

}  // namespace clusterd::testing
