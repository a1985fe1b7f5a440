#pragma once

#include "absl/strings/string_view.h"
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"

namespace clusterd::server {

// The single place where absl::Status becomes grpc::Status.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Unary reactor that finishes at once with `status`.
grpc::ServerUnaryReactor* FinishUnary(grpc::CallbackServerContext* ctx, grpc::Status status);

// What the original answers with a plain Go error: code UNKNOWN, the error's text, then
// ", method=" and the full method.
grpc::Status GoError(absl::string_view text, absl::string_view method);

// What a method that is not built yet answers: UNIMPLEMENTED naming the full method.
grpc::Status NotImplementedYet(absl::string_view full_method);

// A server-streaming reactor that finishes at once (used to refuse a subscription).
template <typename Message>
class FinishedWriter final : public grpc::ServerWriteReactor<Message> {
 public:
  explicit FinishedWriter(grpc::Status status) { this->Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

template <typename Message>
grpc::ServerWriteReactor<Message>* FinishStream(grpc::Status status) {
  return new FinishedWriter<Message>(std::move(status));
}

// Peer address for logs ("ipv4:127.0.0.1:5000").
std::string PeerOf(const grpc::CallbackServerContext* ctx);

}  // namespace clusterd::server
