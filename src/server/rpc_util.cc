#include "absl/strings/string_view.h"
#include "server/rpc_util.h"

#include "absl/strings/str_cat.h"

namespace clusterd::server {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

grpc::ServerUnaryReactor* FinishUnary(grpc::CallbackServerContext* ctx, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

grpc::Status GoError(absl::string_view text, absl::string_view method) {
  return grpc::Status(grpc::StatusCode::UNKNOWN, absl::StrCat(text, ", method=", method));
}

grpc::Status NotImplementedYet(absl::string_view full_method) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      absl::StrCat("method ", full_method, " is not implemented yet"));
}

std::string PeerOf(const grpc::CallbackServerContext* ctx) { return ctx->peer(); }

}  // namespace clusterd::server
