#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cluster/fault_centre.h"
#include "cluster/fault_job_faults.h"
#include "cluster/fault_subscriptions.h"
#include "common/clock.h"
#include "common/rate_limiter.h"
#include "fault.grpc.pb.h"
#include "server/gated_service.h"
#include "server/stream_hub.h"

namespace clusterd::server {

// /fault.Fault/*: per-job and cluster-wide fault signals (jobs-ranktable-diagnosis.md §4).
//
// A JobFaultSink of the fault centre: every job snapshot that changed goes through
// cluster::FaultSubscriptions, which says which publisher (job id, role) gets which message; the
// messages are queued in the publisher's mailbox (StreamHub, bounded; a full mailbox drops the
// new message and counts it) and streamed to its SubscribeFaultMsgSignal call. Register opens a
// fresh mailbox (ending the previous publisher's stream) and queues the job's current message
// when it has faults. GetFaultMsgSignal asks the centre: for a job id, whether the job exists and
// its last snapshot, unfiltered (cluster::AnswerJobFaultQuery); with no job id, the cluster view
// (cached 3 s).
class FaultService final : public ::fault::Fault::CallbackService,
                           public cluster::JobFaultSink,
                           private GatedService {
 public:
  using GatedService::SetAuthorizer;
  using GatedService::SetHandlerPool;
  static constexpr size_t kMailboxCapacity = 1024;
  static constexpr absl::Duration kClusterViewTtl = absl::Seconds(3);

  // `centre` may be null (no fault centre): every job is unknown, the cluster view empty.
  FaultService(UnaryGate& gate, Clock& clock, cluster::FaultCentre* centre);

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const ::fault::ClientInfo* request,
                                     ::fault::Status* response) override;
  grpc::ServerWriteReactor<::fault::FaultMsgSignal>* SubscribeFaultMsgSignal(
      grpc::CallbackServerContext* ctx, const ::fault::ClientInfo* request) override;
  grpc::ServerUnaryReactor* GetFaultMsgSignal(grpc::CallbackServerContext* ctx,
                                              const ::fault::ClientInfo* request,
                                              ::fault::FaultQueryResult* response) override;

  // cluster::JobFaultSink (called on the fault centre's worker).
  void OnJobFaults(const cluster::JobFaultRanks& faults) override;
  void OnJobGone(const std::string& job_id) override;

  // Whether a MindIE instance id is subscribed (the centre's implicit custom filter).
  bool Serves(const std::string& job_id) const { return subscriptions_.Serves(job_id); }
  void CloseStreams();

  static ::fault::FaultMsgSignal ToProto(const cluster::FaultMsgSignal& s);

 private:
  absl::Status MayFollow(const grpc::ServerContextBase& ctx, absl::string_view method,
                         const std::string& job_id);
  void Deliver(const std::vector<cluster::FaultSubscriptions::Delivery>& deliveries);

  Clock& clock_;
  cluster::FaultCentre* centre_;
  cluster::FaultSubscriptions subscriptions_;
  StreamHub<::fault::FaultMsgSignal> hub_;
  TokenBucket query_bucket_;
  absl::Mutex mu_;
  std::map<std::string, std::string> instance_of_ ABSL_GUARDED_BY(mu_);  // job -> MindIE id
  std::optional<::fault::FaultMsgSignal> cluster_view_ ABSL_GUARDED_BY(mu_);
  absl::Time cluster_view_time_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace clusterd::server
