#include "test_env.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

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

}  // namespace clusterd::testing
