#pragma once

#include "config.grpc.pb.h"
#include "server/gated_service.h"

namespace clusterd::server {

// /config.Config/*: global rank tables for MindIE deployments (jobs-ranktable-diagnosis.md §2).
class ConfigService final : public ::config::Config::CallbackService, private GatedService {
 public:
  explicit ConfigService(UnaryGate& gate) : GatedService(gate) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const ::config::ClientInfo* request,
                                     ::config::Status* response) override;
  grpc::ServerWriteReactor<::config::RankTableStream>* SubscribeRankTable(
      grpc::CallbackServerContext* ctx, const ::config::ClientInfo* request) override;
};

}  // namespace clusterd::server
