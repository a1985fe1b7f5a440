#include "sim/clusterd_process.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace clusterd::sim {

std::string FindSiblingBinary(const std::string& name) {
  std::filesystem::path dir = ExecutableDir();
  for (const auto& candidate :
       {dir / name, dir / ".." / name / name, dir / ".." / "apps" / name / name}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) {
      return std::filesystem::weakly_canonical(candidate, ec).string();
    }
  }
  return "";
}

absl::StatusOr<std::unique_ptr<ClusterdProcess>> ClusterdProcess::Start(const Options& options) {
  std::filesystem::create_directories(options.work_dir);
  std::string info_path = options.work_dir + "/listen.json";
  std::filesystem::remove(info_path);
  std::string log_path = options.work_dir + "/clusterd.log";

  Subprocess::Options spawn;
  spawn.argv = {options.binary, "--store",       options.store, "--grpc-listen",
                "127.0.0.1:0",  "--http-listen", "127.0.0.1:0", "--listen-info-file",
                info_path};
  if (options.store_mirror) spawn.argv.push_back("--http-store-mirror");
  for (const auto& a : options.extra_args) spawn.argv.push_back(a);
  spawn.stdout_path = log_path;
  spawn.stderr_path = log_path;
  absl::StatusOr<Subprocess> child = Subprocess::Start(spawn);
  if (!child.ok()) return child.status();

  std::unique_ptr<ClusterdProcess> proc(new ClusterdProcess(std::move(*child)));
  proc->log_path_ = log_path;
  absl::Time deadline = absl::Now() + options.start_timeout;
  // clusterd writes the file atomically once both listeners are up.
  while (!std::filesystem::exists(info_path)) {
    if (!proc->process_.Running()) {
      std::ifstream log(log_path);
      std::stringstream text;
      text << log.rdbuf();
      return absl::UnavailableError(absl::StrCat("clusterd exited during start-up:\n", text.str()));
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError("clusterd did not start within the timeout");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream in(info_path);
  nlohmann::json info = nlohmann::json::parse(in, nullptr, false);
  if (info.is_discarded() || !info.contains("grpc") || !info.contains("http")) {
    return absl::InternalError(absl::StrCat("malformed ", info_path));
  }
  proc->grpc_address_ = info["grpc"].get<std::string>();
  proc->http_address_ = info["http"].get<std::string>();
  return proc;
}

absl::StatusOr<int> ClusterdProcess::Stop(absl::Duration timeout) {
  process_.Signal(SIGTERM);
  return process_.Wait(timeout);
}

}  // namespace clusterd::sim
