#pragma once

// The original ClusterD's command line, read by clusterd. The original parses flags with Go's
// flag package (-name=value, -name value, --name=value; bool flags as -name or -name=false), and
// the manifests and scripts operators keep use its names:
//   -version                      print the version and exit          -> --version
//   -logLevel N                   -1 debug, 0 info, 1 warning, 2 error, 3 critical (default 0)
//                                                                       -> --log-level
//   -logFile PATH                 the run log                          -> --log-file
//   -maxAge DAYS                  backup age, [7, 700] (default 7)     -> --log-max-age
//   -maxBackups N                 backups, (0, 180] (default 30)       -> --log-max-backups
//   -useProxy                     gRPC on 127.0.0.1 instead of POD_IP  ->
//   --grpc-listen=127.0.0.1:8899
//   --enable-healthz              the health endpoint, GET /           -> GET / open to probes
//   --healthz-address PORT        its port, 1025-65535                 ->
//   --http-listen=0.0.0.0:PORT
//   --tls-cert-file, --tls-private-key-file   HTTPS for it             -> --http-tls-cert/-key
// Each is translated into clusterd's flag with the original's meaning and range; a value the
// original refuses is refused with a message that names the clusterd flag. Every other argument
// passes through untouched (docs/migration.md).
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace clusterd::server {

struct OriginalFlagTranslation {
  std::vector<std::string> args;   // argv[0] first, for the flag parser
  std::vector<std::string> notes;  // "-logLevel=0 read as --log-level=info", one per flag
};

absl::StatusOr<OriginalFlagTranslation> TranslateOriginalFlags(
    const std::vector<std::string>& argv);

}  // namespace clusterd::server
