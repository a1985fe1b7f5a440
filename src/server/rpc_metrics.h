#pragma once

#include "absl/strings/string_view.h"
#include <string_view>

#include "grpcpp/support/status_code_enum.h"

namespace clusterd::server {

// Counts one finished (or refused) RPC in clusterd_grpc_requests_total{method, code}.
void RecordRpc(absl::string_view method, grpc::StatusCode code);

// Name of a gRPC status code as in the gRPC docs ("OK", "UNIMPLEMENTED", ...).
absl::string_view StatusCodeName(grpc::StatusCode code);

}  // namespace clusterd::server
