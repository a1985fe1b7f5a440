#pragma once

#include <string_view>
#include <utility>

#include "absl/strings/string_view.h"
#include "auth/audit.h"
#include "auth/authorizer.h"
#include "grpcpp/grpcpp.h"
#include "server/grpc_caller.h"
#include "server/handler_pool.h"
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

  // Who may call (auth::Authorizer): a handler that acts for a job calls ActForJob with the
  // request's job id, an operator/platform call Permit with its permission, right after the
  // bounds check; a refusal is the call's gRPC status (UNAUTHENTICATED / PERMISSION_DENIED), is
  // audited, and leaves every state untouched. Without an authorizer (unit tests of a service)
  // every caller is allowed, as before. Set once, before the server starts (ServiceSet).
  void SetAuthorizer(auth::Authorizer* authz) { authz_ = authz; }

  // Where BlockingUnary handlers run (handler_pool.h says why). Without a pool (unit tests of a
  // service) they run on gRPC's thread, as Unary ones do. Set once, before the server starts.
  void SetHandlerPool(HandlerPool* pool) { pool_ = pool; }

 protected:
  template <typename Handler>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* ctx, absl::string_view method,
                                  Handler&& handler) {
    if (grpc::ServerUnaryReactor* refused = RefusedByGate(ctx, method)) return refused;
    grpc::Status status = std::forward<Handler>(handler)();
    RecordRpc(method, status.error_code());
    return FinishUnary(ctx, std::move(status));
  }

  // Unary for a handler that may block (a store write or read that waits on I/O or a lock):
  // it runs on the HandlerPool, so gRPC's own threads keep reading the sockets and answering
  // keepalive pings meanwhile. The handler outlives this call: it must capture the call's
  // pointers (ctx, request, response) by value, never a local by reference.
  template <typename Handler>
  grpc::ServerUnaryReactor* BlockingUnary(grpc::CallbackServerContext* ctx,
                                          absl::string_view method, Handler handler) {
    if (pool_ == nullptr) return Unary(ctx, method, std::move(handler));
    if (grpc::ServerUnaryReactor* refused = RefusedByGate(ctx, method)) return refused;
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    absl::Status queued = pool_->Run([reactor, method, handler = std::move(handler)]() mutable {
      grpc::Status status = handler();
      RecordRpc(method, status.error_code());
      reactor->Finish(std::move(status));
    });
    if (!queued.ok()) {
      grpc::Status refused = ToGrpcStatus(queued);
      RecordRpc(method, refused.error_code());
      reactor->Finish(std::move(refused));
    }
    return reactor;
  }

  template <typename Message>
  grpc::ServerWriteReactor<Message>* RefuseStream(absl::string_view method, grpc::Status status) {
    RecordRpc(method, status.error_code());
    return FinishStream<Message>(std::move(status));
  }

  absl::Status ActForJob(const grpc::ServerContextBase& ctx, absl::string_view method,
                         absl::string_view job_id, auth::Principal* who = nullptr) {
    return Check(ctx, method, job_id, who, [&](const auth::Caller& caller, auth::Principal* p) {
      return authz_->ActForJob(method, caller, job_id, p);
    });
  }
  absl::Status Permit(const grpc::ServerContextBase& ctx, absl::string_view method,
                      absl::string_view permission, absl::string_view resource,
                      auth::Principal* who = nullptr) {
    return Check(ctx, method, resource, who, [&](const auth::Caller& caller, auth::Principal* p) {
      return authz_->Permit(method, caller, permission, resource, p);
    });
  }
  // The audit line of a mutating call that was allowed (`result` "ok" or "refused").
  static void AuditCall(const grpc::ServerContextBase& ctx, absl::string_view method,
                        const auth::Principal& who, absl::string_view target,
                        absl::string_view result, absl::string_view detail = "") {
    auth::Audit(method, who, ctx.peer(), target, result, detail);
  }

 private:
  // Null when the QPS gate admits a call of `method`; else the call, finished with the gate's
  // refusal (and counted).
  grpc::ServerUnaryReactor* RefusedByGate(grpc::CallbackServerContext* ctx,
                                          absl::string_view method) {
    absl::Status admitted = gate_.Admit(method, ctx->peer());
    if (admitted.ok()) return nullptr;
    RecordRpc(method, grpc::StatusCode::UNKNOWN);
    return FinishUnary(ctx, ToGrpcStatus(admitted));
  }

  template <typename Decide>
  absl::Status Check(const grpc::ServerContextBase& ctx, absl::string_view method,
                     absl::string_view target, auth::Principal* who, Decide decide) {
    if (authz_ == nullptr) {
      if (who != nullptr) *who = auth::AnonymousPrincipal(true);
      return absl::OkStatus();
    }
    const auth::Caller caller = CallerOf(ctx);
    auth::Principal principal;
    absl::Status s = decide(caller, &principal);
    if (!s.ok()) {
      if (principal.name.empty()) principal.name = "(unauthenticated)";
      auth::Audit(method, principal, caller.peer, target, "denied", s.message());
    }
    if (who != nullptr) *who = std::move(principal);
    return s;
  }

  UnaryGate& gate_;
  auth::Authorizer* authz_ = nullptr;
  HandlerPool* pool_ = nullptr;
};

}  // namespace clusterd::server
