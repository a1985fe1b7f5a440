#pragma once

#include <string_view>
#include <utility>

#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"
#include "server/request_limits.h"
#include "server/rpc_metrics.h"
#include "server/rpc_util.h"
#include "server/unary_gate.h"

namespace clusterd::server {

// Shared by every service: each unary call passes the QPS gate first, is counted per method
// and result, and then runs `handler`, which returns the grpc::Status of the call (the
// response message is filled in by the handler). Handlers bound the request's strings first
// (CheckRequestBounds), before anything reads, logs or echoes them.
class GatedService {
 public:
  explicit GatedService(UnaryGate& gate) : gate_(gate) {}

 protected:
  template <typename Handler>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* ctx, absl::string_view method,
                                  Handler&& handler) {
    if (absl::Status admitted = gate_.Admit(method, ctx->peer()); !admitted.ok()) {
      RecordRpc(method, grpc::StatusCode::UNKNOWN);
      return FinishUnary(ctx, ToGrpcStatus(admitted));
    }
    grpc::Status status = std::forward<Handler>(handler)();
    RecordRpc(method, status.error_code());
    return FinishUnary(ctx, std::move(status));
  }

  template <typename Message>
  grpc::ServerWriteReactor<Message>* RefuseStream(absl::string_view method, grpc::Status status) {
    RecordRpc(method, status.error_code());
    return FinishStream<Message>(std::move(status));
  }

 private:
  UnaryGate& gate_;
};

}  // namespace clusterd::server
