#pragma once

#include "auth/authorizer.h"
#include "grpcpp/grpcpp.h"

namespace clusterd::server {

// What the authorizer needs of a gRPC call: the peer address, the `authorization` metadata
// (a bearer token), and the common name of a client certificate the TLS layer verified.
auth::Caller CallerOf(const grpc::ServerContextBase& ctx);

}  // namespace clusterd::server
