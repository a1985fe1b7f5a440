#pragma once

#include <memory>

#include "cluster/job_registry.h"
#include "cluster/job_summary_clients.h"
#include "common/clock.h"
#include "job.grpc.pb.h"
#include "model/job_summary_signal.h"
#include "server/gated_service.h"
#include "server/stream_hub.h"

namespace clusterd::server {

// /job.Job/*: job summaries for platform agents (jobs-ranktable-diagnosis.md §3).
//
// Register admits a client (role whitelist, 100 000 clients) and opens its mailbox of 10
// signals; every signal of the registry is broadcast to every registered client's mailbox,
// subscribed or not. SubscribeJobSummarySignal streams the mailbox; SubscribeJobSummarySignalList
// first streams the snapshot of every job (§3.4), then each signal as a one-element list. A new
// subscription of the same client replaces its stream; when the client's current stream ends the
// client is deregistered. A full mailbox drops the new signal (counted in
// clusterd_stream_messages_dropped_total{stream="job_summary"}); the registry never waits.
class JobService final : public ::job::Job::CallbackService, private GatedService {
 public:
  using GatedService::SetAuthorizer;
  using GatedService::SetHandlerPool;
  static constexpr size_t kMailboxCapacity = 10;

  JobService(UnaryGate& gate, Clock& clock, cluster::JobRegistry& registry,
             cluster::JobSummaryClients::Limits limits = {});

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const ::job::ClientInfo* request,
                                     ::job::Status* response) override;
  grpc::ServerWriteReactor<::job::JobSummarySignal>* SubscribeJobSummarySignal(
      grpc::CallbackServerContext* ctx, const ::job::ClientInfo* request) override;
  grpc::ServerWriteReactor<::job::JobSummarySignalList>* SubscribeJobSummarySignalList(
      grpc::CallbackServerContext* ctx, const ::job::ClientInfo* request) override;

  // Queues `signal` for every registered client (the registry's listener).
  void Publish(const model::JobSummarySignal& signal);
  // Ends every stream (server shutdown).
  void CloseStreams();

  static ::job::JobSummarySignal ToProto(const model::JobSummarySignal& s);

 private:
  Clock& clock_;
  cluster::JobRegistry& registry_;
  cluster::JobSummaryClients clients_;
  StreamHub<::job::JobSummarySignal> hub_;
};

}  // namespace clusterd::server
