#pragma once

#include "absl/status/status.h"
#include "cluster/data_trace.h"
#include "profiling.grpc.pb.h"
#include "server/gated_service.h"
#include "server/stream_hub.h"

namespace clusterd::server {

// /TrainingDataTrace/*: profiling switches per job (jobs-ranktable-diagnosis.md §5). The
// decisions and the data-trace ConfigMap are cluster::DataTraceSwitches; this adapter maps its
// results to the wire (body, or a gRPC error where the original fails the call) and keeps the
// per-job publishers: SubscribeDataTraceSwitch opens a fresh publisher (a mailbox of
// kPublisherCapacity messages) replacing the previous one, and a switch change is queued on it.
class DataTraceService final : public ::TrainingDataTrace::CallbackService, private GatedService {
 public:
  using GatedService::SetAuthorizer;
  using GatedService::SetHandlerPool;
  static constexpr size_t kPublisherCapacity = 100;
  static constexpr size_t kMaxPublishers = 10000;

  DataTraceService(UnaryGate& gate, cluster::DataTraceSwitches& switches);

  grpc::ServerUnaryReactor* ModifyTrainingDataTraceSwitch(grpc::CallbackServerContext* ctx,
                                                          const ::DataTypeReq* request,
                                                          ::DataTypeRes* response) override;
  grpc::ServerUnaryReactor* GetTrainingDataTraceSwitch(grpc::CallbackServerContext* ctx,
                                                       const ::DataStatusReq* request,
                                                       ::DataStatusRes* response) override;
  grpc::ServerWriteReactor<::DataStatusRes>* SubscribeDataTraceSwitch(
      grpc::CallbackServerContext* ctx, const ::ProfilingClientInfo* request) override;

  // The switches' notifier: queues the change for `job_id`'s publisher.
  absl::Status Notify(const std::string& job_id, const model::ProfilingSwitch& value);
  void CloseStreams();

 private:
  cluster::DataTraceSwitches& switches_;
  StreamHub<::DataStatusRes> hub_;
};

}  // namespace clusterd::server
