#include "test_env.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "httplib.h"

namespace clusterd::testing {

void WriteStoreObjectFile(const std::string& state_dir, const std::string& resource,
                          const nlohmann::ordered_json& object) {
  const std::string ns = object["metadata"].value("namespace", "");
  const std::string name = object["metadata"]["name"];
  std::filesystem::path dir = std::filesystem::path(state_dir) / resource;
  if (!ns.empty()) dir /= ns;
  std::filesystem::create_directories(dir);
  std::filesystem::path tmp = dir / ("." + name + ".tmp");
  {
    std::ofstream out(tmp);
    out << object.dump(2);
  }
  std::filesystem::rename(tmp, dir / (name + ".json"));
}

CommandResult RunCommand(const std::string& command_line) {
  std::string full = command_line + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  int status = pclose(pipe);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, out};
}

double MetricSample(const std::string& base_url, const std::string& sample) {
  httplib::Client http(base_url);
  http.set_read_timeout(std::chrono::seconds(5));
  auto res = http.Get("/metrics");
  if (!res) return -1;
  for (absl::string_view line : absl::StrSplit(res->body, '\n')) {
    if (absl::StartsWith(line, sample + " ")) {
      double v = 0;
      if (absl::SimpleAtod(line.substr(sample.size() + 1), &v)) return v;
    }
  }
  return 0;
}

}  // namespace clusterd::testing
