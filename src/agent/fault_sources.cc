#include "agent/fault_sources.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_metrics.h"
#include "agent/fault_script.h"
#include "agent/grpc_source.h"
#include "agent/script_schedule.h"
#include "agent/sim_schedule.h"
#include "common/log.h"
#include "common/sv.h"
#include "faults/hex_code.h"

namespace clusterd::agent {
namespace {

class DescribedHandle final : public FaultSourceHandle {
 public:
  explicit DescribedHandle(std::string text) : text_(std::move(text)) {}
  std::string Describe() const override { return text_; }

 private:
  std::string text_;
};

absl::StatusOr<std::unique_ptr<FaultSourceHandle>> AttachScript(std::string_view path,
                                                                const FaultSourceOptions& options,
                                                                AgentCore& core) {
  std::ifstream in{std::string(path)};
  if (!in) return absl::NotFoundError(absl::StrCat("fault script ", Sv(path), " cannot be read"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  FaultScript script = ParseFaultScript(buffer.str(), options.num_npus);
  for (const ScriptError& error : script.errors) {
    LogWarn("npu-agent", "fault script line skipped",
            {{"file", path}, {"line", error.line}, {"error", error.message}});
    AgentMetrics::ScriptErrors().Increment();
  }
  const size_t count = script.events.size();
  core.AddSchedule(std::make_unique<ScriptSchedule>(std::move(script.events)));
  return std::make_unique<DescribedHandle>(
      absl::StrCat("script:", Sv(path), " (", count, " events)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<FaultSourceHandle>> AttachFaultSource(
    std::string_view spec, const FaultSourceOptions& options, AgentCore& core,
    AgentRunner& runner) {
  const absl::string_view s = Sv(spec);
  if (absl::StartsWith(s, "script:") && s.size() > 7) {
    return AttachScript(spec.substr(7), options, core);
  }
  if (absl::StartsWith(s, "grpc:") && s.size() > 5) {
    return StartGrpcSource(std::string(spec.substr(5)), options.num_npus, runner,
                           options.inject_token_file);
  }
  if (s == "sim") {
    core.AddSchedule(std::make_unique<SimSchedule>(core.engine().policy(), options));
    return std::make_unique<DescribedHandle>(absl::StrCat(
        "sim(seed=", options.sim_seed, ", faults/h=", options.sim_faults_per_hour, ")"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--fault-source \"", s, "\": want script:FILE, grpc:HOST:PORT or sim"));
}

}  // namespace clusterd::agent
