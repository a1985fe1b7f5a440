#pragma once

// Flag parsing with the exit codes of a Unix tool: 0 after --help or --version, 2 for a usage
// error (an unknown flag, a missing value, a check that failed), whatever code CLI11 would give
// it (106, 109, ...). Every binary parses through this, so scripts see one convention.
#include <optional>

#include "CLI/CLI.hpp"

namespace clusterd {

inline constexpr int kExitUsageError = 2;

// nullopt: the flags parsed, go on. Otherwise the process's exit code (the message is printed).
inline std::optional<int> ParseFlags(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version or the error
    return code == 0 ? 0 : kExitUsageError;
  }
  return std::nullopt;
}

}  // namespace clusterd
