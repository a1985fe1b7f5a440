#pragma once

#include "absl/status/status.h"
#include "cluster/rank_table_global_feed.h"
#include "config.grpc.pb.h"
#include "server/gated_service.h"
#include "server/stream_hub.h"

namespace clusterd::server {

// /config.Config/*: global rank tables for MindIE deployments (jobs-ranktable-diagnosis.md §2).
//
// Register opens a fresh publisher (a mailbox of 1000 tables) for the job id, ending the stream
// of the previous one. SubscribeRankTable attaches a stream to it and asks the feed for a table
// (after ≈2 s); every table the feed generates is pushed to the job's publisher while a stream is
// attached (Push fails otherwise and the feed retries). When the stream ends its publisher is
// removed if it is still the current one: the client registers again.
class ConfigService final : public ::config::Config::CallbackService, private GatedService {
 public:
  using GatedService::SetAuthorizer;
  using GatedService::SetHandlerPool;
  static constexpr size_t kPublisherCapacity = 1000;

  ConfigService(UnaryGate& gate, cluster::GlobalRankTableFeed& feed);

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const ::config::ClientInfo* request,
                                     ::config::Status* response) override;
  grpc::ServerWriteReactor<::config::RankTableStream>* SubscribeRankTable(
      grpc::CallbackServerContext* ctx, const ::config::ClientInfo* request) override;

  // The feed's sink: queues `table` for `job_id`'s subscribed stream.
  absl::Status Push(const std::string& job_id, const std::string& table);
  void CloseStreams();

 private:
  cluster::GlobalRankTableFeed& feed_;
  StreamHub<::config::RankTableStream> hub_;
};

}  // namespace clusterd::server
