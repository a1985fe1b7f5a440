#pragma once

#include <memory>
#include <string_view>

#include "grpcpp/grpcpp.h"

namespace clusterd::client {

// An insecure channel configured like the real TaskD/MindIO clients (recovery-protocol.md §1.3):
// keepalive every 3 s, 1 s ack timeout, pings permitted without calls.
std::shared_ptr<grpc::Channel> MakeChannel(absl::string_view address);
// The same channel over `credentials` (TLS: grpc::SslCredentials).
std::shared_ptr<grpc::Channel> MakeChannel(absl::string_view address,
                                           std::shared_ptr<grpc::ChannelCredentials> credentials);

}  // namespace clusterd::client
