// clustersim: a simulated cluster driving a real clusterd. `--demo` runs the built-in demo.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "CLI/CLI.hpp"
#include "sim/clusterd_process.h"
#include "sim/smoke_demo.h"

int main(int argc, char** argv) {
  CLI::App app{"clustersim: runs a simulated cluster against a real clusterd."};
  app.set_version_flag("--version", std::string("clustersim ") + CLUSTERD_VERSION);
  bool demo = false;
  std::string clusterd_binary = clusterd::sim::FindSiblingBinary("clusterd");
  std::string state_dir;
  app.add_flag("--demo", demo, "Run the built-in demo");
  app.add_option("--clusterd", clusterd_binary, "Path to the clusterd binary")->capture_default_str();
  app.add_option("--state-dir", state_dir,
                 "Directory for the store and logs (default: a fresh temporary directory)");
  CLI11_PARSE(app, argc, argv);

  if (!demo) {
    std::fprintf(stderr, "clustersim: nothing to do; try --demo\n");
    return 2;
  }
  if (clusterd_binary.empty()) {
    std::fprintf(stderr, "clustersim: cannot find the clusterd binary; pass --clusterd PATH\n");
    return 2;
  }
  if (state_dir.empty()) {
    char tmpl[] = "/tmp/clustersim-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      std::perror("clustersim: mkdtemp");
      return 1;
    }
    state_dir = tmpl;
  }
  absl::Status status = clusterd::sim::RunSmokeDemo(clusterd_binary, state_dir);
  if (!status.ok()) {
    std::fprintf(stderr, "clustersim: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  std::printf("state and logs kept in %s\n", state_dir.c_str());
  return 0;
}
