// clustersim: a simulated cluster driving a real clusterd.
//   clustersim --demo              the built-in scenario (4 nodes x 8 NPUs, 2 jobs, 4 faults and
//                                  a slow rank)
//   clustersim --scenario FILE     a scenario file (docs/clustersim.md)
//   clustersim --check FILE        validate a scenario file and exit
//   clustersim --smoke             the foundation's smoke demo (services and HTTP endpoints)
//   --repeat N                     run the demo or scenario N times in a row (fresh state each)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/cli_parse.h"
#include "common/data_dir.h"
#include "common/lock_order_checks.h"
#include "faults/fault_code_catalog.h"
#include "faults/policy_issue.h"
#include "sim/clusterd_process.h"
#include "sim/scenario.h"
#include "sim/scenario_runner.h"
#include "sim/smoke_demo.h"
#include "sim/trace_replay.h"

namespace {

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "clustersim: %s\n", message.c_str());
  return code;
}

std::optional<clusterd::faults::FaultCodeCatalog> LoadCatalog(const std::string& data_dir) {
  std::ifstream in(data_dir + "/faultCode.json");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  clusterd::faults::PolicyIssues issues;
  auto catalog = clusterd::faults::FaultCodeCatalog::Parse(text.str(), &issues);
  if (!catalog.ok()) return std::nullopt;
  return *std::move(catalog);
}

void PrintReplayPlan(const clusterd::sim::Scenario& scenario,
                     const clusterd::sim::ReplayPlan& plan) {
  std::printf("replay: %d of %d trace episodes (days %.1f-%.1f) as faults at %.2f days/s",
              plan.played, plan.episodes, plan.first_day, plan.last_day,
              scenario.replay->days_per_second);
  int skipped = 0;
  for (const auto& [why, n] : plan.skipped) skipped += n;
  if (skipped > 0) {
    std::printf("; skipped %d with no NPU counterpart or before from_day:", skipped);
    for (const auto& [why, n] : plan.skipped) std::printf(" %s x%d;", why.c_str(), n);
  }
  std::printf("\n");
  if (!plan.faults.empty() && plan.faults.back().at_s > scenario.duration_s) {
    std::printf(
        "replay: the last fault is at %.0f s, after duration_s %.0f: later ones are not "
        "played\n",
        plan.faults.back().at_s, scenario.duration_s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  clusterd::SkipRuntimeLockOrderChecks();
  CLI::App app{"clustersim: runs a simulated cluster against a real clusterd."};
  app.set_version_flag("--version", std::string("clustersim ") + CLUSTERD_VERSION);
  bool demo = false, smoke = false, verbose = false, quiet_live = false;
  std::string scenario_file, check_file;
  std::string clusterd_binary = clusterd::sim::FindSiblingBinary("clusterd");
  std::string state_dir;
  std::string data_dir = clusterd::DefaultDataDir();
  int repeat = 1;
  std::vector<std::string> clusterd_args;
  app.add_flag("--demo", demo, "Run the built-in demo scenario");
  app.add_option("--scenario", scenario_file,
                 "Run the scenario in FILE (docs/clustersim.md; e.g. scenarios/trace-replay.yaml, "
                 "scenarios/slow-link.yaml, scenarios/churn.yaml)");
  app.add_option("--check", check_file, "Validate the scenario in FILE and exit");
  app.add_flag("--smoke", smoke, "Run the smoke demo of the services and HTTP endpoints");
  app.add_option("--clusterd", clusterd_binary, "Path to the clusterd binary")
      ->capture_default_str();
  app.add_option("--state-dir", state_dir,
                 "Directory for the store and logs (default: a fresh temporary directory)");
  app.add_option("--data-dir", data_dir, "Directory with faultCode.json and the other policy files")
      ->capture_default_str();
  app.add_option("--repeat", repeat,
                 "Run the demo or scenario N times in a row, each from an empty state "
                 "(STATE_DIR/run-<i>); exit 1 if any run fails")
      ->check(CLI::Range(1, 1000));
  app.add_option("--clusterd-arg", clusterd_args,
                 "An extra flag for clusterd, e.g. --clusterd-arg=--job-reconcile-rate=5 "
                 "(repeatable)");
  app.add_flag("-v,--verbose", verbose, "Print every simulator event");
  app.add_flag("--no-live", quiet_live, "Print progress as lines instead of redrawing one line");
  if (std::optional<int> rc = clusterd::ParseFlags(app, argc, argv)) return *rc;

  const auto catalog = LoadCatalog(data_dir);
  if (!catalog.has_value()) return Fail("cannot load " + data_dir + "/faultCode.json", 2);
  if (!check_file.empty()) {
    auto s = clusterd::sim::LoadScenario(check_file, &*catalog);
    if (!s.ok()) return Fail(std::string(s.status().message()), 2);
    auto plan = clusterd::sim::ExpandReplay(&*s, data_dir);
    if (!plan.ok()) return Fail(std::string(plan.status().message()), 2);
    std::printf("%s: valid (%zu jobs, %zu faults)\n", check_file.c_str(), s->jobs.size(),
                s->faults.size());
    return 0;
  }
  if (!demo && !smoke && scenario_file.empty()) {
    return Fail("nothing to do; try --demo, --scenario FILE or --help", 2);
  }
  absl::StatusOr<clusterd::sim::Scenario> scenario;
  if (!scenario_file.empty()) {
    scenario = clusterd::sim::LoadScenario(scenario_file, &*catalog);
  } else if (demo) {
    scenario =
        clusterd::sim::ParseScenario(clusterd::sim::DefaultDemoScenario(), "<demo>", &*catalog);
  }
  if (!smoke && !scenario.ok()) return Fail(std::string(scenario.status().message()), 2);
  if (!smoke) {
    auto plan = clusterd::sim::ExpandReplay(&*scenario, data_dir);
    if (!plan.ok()) return Fail(std::string(plan.status().message()), 2);
    if (scenario->replay.has_value()) PrintReplayPlan(*scenario, *plan);
  }
  if (clusterd_binary.empty())
    return Fail("cannot find the clusterd binary; pass --clusterd PATH", 2);
  if (state_dir.empty()) {
    char tmpl[] = "/tmp/clustersim-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Fail("cannot create a temporary directory", 1);
    state_dir = tmpl;
  }
  const char* what = demo ? "demo" : smoke ? "smoke demo" : "scenario";
  if (smoke) {
    absl::Status status = clusterd::sim::RunSmokeDemo(clusterd_binary, state_dir);
    std::printf("state and logs kept in %s\n", state_dir.c_str());
    if (!status.ok()) {
      std::printf("%s failed: %s\n", what, std::string(status.message()).c_str());
      return 1;
    }
    std::printf("%s passed\n", what);
    return 0;
  }
  clusterd::sim::RunOptions options;
  options.clusterd_binary = clusterd_binary;
  options.data_dir = data_dir;
  options.verbose = verbose;
  options.live = !quiet_live && isatty(STDOUT_FILENO) != 0;
  options.clusterd_args = clusterd_args;
  std::vector<std::string> failures;
  for (int i = 1; i <= repeat; ++i) {
    options.state_dir = repeat == 1 ? state_dir : absl::StrCat(state_dir, "/run-", i);
    if (repeat > 1) std::printf("== run %d of %d\n", i, repeat);
    absl::Status status = clusterd::sim::RunScenario(*scenario, options);
    std::printf("state and logs kept in %s\n", options.state_dir.c_str());
    if (!status.ok()) {
      std::printf("%s failed: %s\n", what, std::string(status.message()).c_str());
      failures.push_back(absl::StrCat("run ", i, ": ", status.message()));
    } else {
      std::printf("%s passed: every job is training again\n", what);
    }
  }
  if (repeat > 1) {
    std::printf("%d of %d runs passed\n", repeat - static_cast<int>(failures.size()), repeat);
    for (const std::string& f : failures) std::printf("  %s\n", f.c_str());
  }
  return failures.empty() ? 0 : 1;
}
