#include "server/job_service.h"

#include <deque>

#include "absl/strings/str_cat.h"
#include "auth/permissions.h"
#include "common/log.h"
#include "server/method_names.h"
#include "server/rpc_util.h"

namespace clusterd::server {
JobService::JobService(UnaryGate& gate, Clock& clock, cluster::JobRegistry& registry,
                       cluster::JobSummaryClients::Limits limits)
    : GatedService(gate),
      clock_(clock),
      registry_(registry),
      clients_(clock, limits),
      hub_("job_summary", kMailboxCapacity) {
  registry_.AddSignalListener([this](const model::JobSummarySignal& s) { Publish(s); });
}

::job::JobSummarySignal JobService::ToProto(const model::JobSummarySignal& s) {
  ::job::JobSummarySignal p;
  p.set_uuid(s.uuid);
  p.set_jobid(s.job_id);
  p.set_jobname(s.job_name);
  p.set_namespace_(s.ns);
  p.set_framework(s.framework);
  p.set_jobstatus(s.job_status);
  p.set_time(s.time);
  p.set_cmindex(s.cm_index);
  p.set_total(s.total);
  p.set_hccljson(s.hccl_json);
  p.set_deletetime(s.delete_time);
  p.set_sharedtorip(s.shared_tor_ip);
  p.set_masteraddr(s.master_addr);
  p.set_operator_(s.op);
  p.set_sid(s.sid);
  return p;
}

void JobService::Publish(const model::JobSummarySignal& signal) { hub_.Broadcast(ToProto(signal)); }

void JobService::CloseStreams() {
  hub_.CloseAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "clusterd is stopping"));
}

grpc::ServerUnaryReactor* JobService::Register(grpc::CallbackServerContext* ctx,
                                               const ::job::ClientInfo* request,
                                               ::job::Status* response) {
  return Unary(ctx, method::kJobRegister, [&] {
    if (absl::Status s = CheckRequestBounds(method::kJobRegister, *request); !s.ok()) {
      return ToGrpcStatus(s);
    }
    // Job summaries carry every job's rank table: a `read` credential.
    if (absl::Status s = Permit(*ctx, method::kJobRegister, auth::kPermRead, ""); !s.ok()) {
      return ToGrpcStatus(s);
    }
    cluster::JobSummaryClients::Registration r = clients_.Register(request->role());
    response->set_code(r.code);
    response->set_info(r.info);
    response->set_clientid(r.client_id);
    if (r.rpc_error) return GoError(r.info, method::kJobRegister);
    if (!r.client_id.empty()) hub_.Open(r.client_id);
    LogInfo("job-service", "client registered",
            {{"role", request->role()}, {"code", r.code}, {"client", r.client_id}});
    return grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<::job::JobSummarySignal>* JobService::SubscribeJobSummarySignal(
    grpc::CallbackServerContext* ctx, const ::job::ClientInfo* request) {
  if (absl::Status s = CheckRequestBounds(method::kJobSubscribeJobSummarySignal, *request);
      !s.ok()) {
    return RefuseStream<::job::JobSummarySignal>(method::kJobSubscribeJobSummarySignal,
                                                 ToGrpcStatus(s));
  }
  if (absl::Status s = Permit(*ctx, method::kJobSubscribeJobSummarySignal, auth::kPermRead, "");
      !s.ok()) {
    return RefuseStream<::job::JobSummarySignal>(method::kJobSubscribeJobSummarySignal,
                                                 ToGrpcStatus(s));
  }
  const std::string client_id = request->clientid();
  absl::StatusOr<uint64_t> stream = clients_.BeginStream(client_id, request->role());
  if (!stream.ok()) {
    return RefuseStream<::job::JobSummarySignal>(
        method::kJobSubscribeJobSummarySignal,
        GoError(stream.status().message(), method::kJobSubscribeJobSummarySignal));
  }
  auto mailbox = hub_.Find(client_id);
  if (mailbox == nullptr) mailbox = hub_.Open(client_id);
  RecordRpc(method::kJobSubscribeJobSummarySignal, grpc::StatusCode::OK);
  const uint64_t stream_id = *stream;
  return hub_.Subscribe(mailbox, [this, client_id, stream_id, raw = mailbox.get()] {
    if (clients_.EndStream(client_id, stream_id)) hub_.Remove(client_id, raw);
  });
}

grpc::ServerWriteReactor<::job::JobSummarySignalList>* JobService::SubscribeJobSummarySignalList(
    grpc::CallbackServerContext* ctx, const ::job::ClientInfo* request) {
  if (absl::Status s = CheckRequestBounds(method::kJobSubscribeJobSummarySignalList, *request);
      !s.ok()) {
    return RefuseStream<::job::JobSummarySignalList>(method::kJobSubscribeJobSummarySignalList,
                                                     ToGrpcStatus(s));
  }
  if (absl::Status s = Permit(*ctx, method::kJobSubscribeJobSummarySignalList, auth::kPermRead, "");
      !s.ok()) {
    return RefuseStream<::job::JobSummarySignalList>(method::kJobSubscribeJobSummarySignalList,
                                                     ToGrpcStatus(s));
  }
  const std::string client_id = request->clientid();
  absl::StatusOr<uint64_t> stream = clients_.BeginStream(client_id, request->role());
  if (!stream.ok()) {
    return RefuseStream<::job::JobSummarySignalList>(
        method::kJobSubscribeJobSummarySignalList,
        GoError(stream.status().message(), method::kJobSubscribeJobSummarySignalList));
  }
  auto mailbox = hub_.Find(client_id);
  if (mailbox == nullptr) mailbox = hub_.Open(client_id);
  RecordRpc(method::kJobSubscribeJobSummarySignalList, grpc::StatusCode::OK);

  // §3.4: the snapshot first, in batches sharing one ReportTime.
  std::deque<::job::JobSummarySignalList> preamble;
  const std::string report_time = std::to_string(absl::ToUnixMillis(clock_.Now()));
  auto batches = registry_.SnapshotSignals();
  int32_t total = 0;
  for (const auto& b : batches) total += static_cast<int32_t>(b.size());
  for (const auto& batch : batches) {
    ::job::JobSummarySignalList list;
    for (const auto& s : batch) *list.add_jobsummarysignals() = ToProto(s);
    list.set_reporttime(report_time);
    list.set_jobtotalnum(total);
    preamble.push_back(std::move(list));
  }
  const uint64_t stream_id = *stream;
  return hub_.Subscribe<::job::JobSummarySignalList>(
      mailbox, std::move(preamble),
      [this](::job::JobSummarySignal&& s) {
        ::job::JobSummarySignalList list;
        *list.add_jobsummarysignals() = std::move(s);
        list.set_reporttime(std::to_string(absl::ToUnixMillis(clock_.Now())));
        list.set_jobtotalnum(1);
        return list;
      },
      [this, client_id, stream_id, raw = mailbox.get()] {
        if (clients_.EndStream(client_id, stream_id)) hub_.Remove(client_id, raw);
      });
}

}  // namespace clusterd::server
