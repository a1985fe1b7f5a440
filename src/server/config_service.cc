#include "server/config_service.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "server/method_names.h"
#include "server/rpc_util.h"

namespace clusterd::server {

ConfigService::ConfigService(UnaryGate& gate, cluster::GlobalRankTableFeed& feed)
    : GatedService(gate), feed_(feed), hub_("rank_table", kPublisherCapacity) {
  feed_.SetSink(
      [this](const std::string& job_id, const std::string& table) { return Push(job_id, table); });
}

absl::Status ConfigService::Push(const std::string& job_id, const std::string& table) {
  auto publisher = hub_.Find(job_id);
  if (publisher == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("no rank-table publisher for job ", job_id));
  }
  if (!publisher->HasStream()) {
    return absl::FailedPreconditionError(absl::StrCat("job ", job_id, " is not subscribed"));
  }
  ::config::RankTableStream message;
  message.set_jobid(job_id);
  message.set_ranktable(table);
  if (!publisher->Push(std::move(message))) {
    return absl::ResourceExhaustedError(
        absl::StrCat("rank-table queue of job ", job_id, " is full or closed"));
  }
  return absl::OkStatus();
}

void ConfigService::CloseStreams() {
  hub_.CloseAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "clusterd is stopping"));
}

grpc::ServerUnaryReactor* ConfigService::Register(grpc::CallbackServerContext* ctx,
                                                  const ::config::ClientInfo* request,
                                                  ::config::Status* response) {
  return Unary(ctx, method::kConfigRegister, [&] {
    if (absl::Status s = CheckRequestBounds(method::kConfigRegister, *request); !s.ok()) {
      return ToGrpcStatus(s);
    }
    if (absl::Status s = ActForJob(*ctx, method::kConfigRegister, request->jobid()); !s.ok()) {
      return ToGrpcStatus(s);
    }
    // Job existence is not checked (§2.5). An empty id names no deployment: no publisher.
    if (!request->jobid().empty()) hub_.Open(request->jobid());
    response->set_code(0);
    response->set_info("register success");
    LogInfo("config-service", "publisher registered",
            {{"job", request->jobid()}, {"role", request->role()}});
    return grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<::config::RankTableStream>* ConfigService::SubscribeRankTable(
    grpc::CallbackServerContext* ctx, const ::config::ClientInfo* request) {
  if (absl::Status s = CheckRequestBounds(method::kConfigSubscribeRankTable, *request); !s.ok()) {
    return RefuseStream<::config::RankTableStream>(method::kConfigSubscribeRankTable,
                                                   ToGrpcStatus(s));
  }
  if (absl::Status s = ActForJob(*ctx, method::kConfigSubscribeRankTable, request->jobid());
      !s.ok()) {
    return RefuseStream<::config::RankTableStream>(method::kConfigSubscribeRankTable,
                                                   ToGrpcStatus(s));
  }
  const std::string job_id = request->jobid();
  auto publisher = job_id.empty() ? nullptr : hub_.Find(job_id);
  if (publisher == nullptr) {
    return RefuseStream<::config::RankTableStream>(
        method::kConfigSubscribeRankTable,
        GoError(absl::StrCat("jobId=", job_id, " not registered, role=", request->role()),
                method::kConfigSubscribeRankTable));
  }
  RecordRpc(method::kConfigSubscribeRankTable, grpc::StatusCode::OK);
  feed_.RequestAfterSubscribe(job_id);
  return hub_.Subscribe(publisher,
                        [this, job_id, raw = publisher.get()] { hub_.Remove(job_id, raw); });
}

}  // namespace clusterd::server
