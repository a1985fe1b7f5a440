#pragma once

// A real npu-agent process for the integration tests (built only when NPU_AGENT_BIN is
// defined), and the waits on what it writes into its dir store.
#ifdef NPU_AGENT_BIN
#include <signal.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_env.h"

namespace clusterd::testing {

using nlohmann::ordered_json;

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A running npu-agent on `dir`/state, stopped (SIGTERM) at the end of the test.
class AgentProcess {
 public:
  AgentProcess(const TempDir& dir, std::vector<std::string> extra_args) : dir_(dir) {
    std::vector<std::string> argv = {NPU_AGENT_BIN,
                                     "--node",
                                     "node-1",
                                     "--store",
                                     "dir:" + dir.path() + "/state",
                                     "--npus",
                                     "8",
                                     "--listen-info-file",
                                     dir.path() + "/info.json"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    auto proc = Subprocess::Start({argv, dir.path() + "/agent.out", dir.path() + "/agent.err"});
    EXPECT_TRUE(proc.ok()) << proc.status();
    if (proc.ok()) proc_.emplace(*std::move(proc));
  }
  ~AgentProcess() { Stop(); }

  int Stop() {
    if (!proc_.has_value()) return -1;
    proc_->Signal(SIGTERM);
    auto rc = proc_->Wait(absl::Seconds(10));
    proc_.reset();
    return rc.ok() ? *rc : -1;
  }
  std::string Log() const { return ReadFile(dir_.path() + "/agent.err"); }
  // The listen-info file, once the agent is running.
  ordered_json Info() const {
    for (int i = 0; i < 200; ++i) {
      const std::string text = ReadFile(dir_.path() + "/info.json");
      if (!text.empty()) return ordered_json::parse(text);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return nullptr;
  }

 private:
  const TempDir& dir_;
  std::optional<Subprocess> proc_;
};

// Waits (real time: this is a real process) until the device-info CM satisfies `pred`.
inline ordered_json WaitForDeviceInfo(const TempDir& dir,
                                      const std::function<bool(const ordered_json&)>& pred,
                                      absl::Duration timeout = absl::Seconds(15)) {
  const std::string path =
      dir.path() + "/state/configmaps/kube-system/mindx-dl-deviceinfo-node-1.json";
  const absl::Time deadline = absl::Now() + timeout;
  ordered_json last;
  while (absl::Now() < deadline) {
    const std::string text = ReadFile(path);
    if (!text.empty()) {
      ordered_json cm = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!cm.is_discarded()) {
        last = cm;
        if (pred(cm["data"])) return cm["data"];
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "device-info ConfigMap never matched; last: " << last.dump();
  return last.is_null() ? ordered_json() : last["data"];
}

inline std::string WriteScript(const TempDir& dir, const std::string& text) {
  const std::string path = dir.path() + "/faults.jsonl";
  std::ofstream(path) << text;
  return path;
}

}  // namespace clusterd::testing

#endif  // NPU_AGENT_BIN
