#pragma once

// An in-process gRPC server on 127.0.0.1 (port 0) serving one service, and a plaintext channel
// to it: the set-up of the server tests that need a real transport.
#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"

namespace clusterd::testing {

struct LoopbackServer {
  // Null server when it could not start (the caller asserts).
  static LoopbackServer Start(grpc::Service* service) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service);
    LoopbackServer s;
    s.server = builder.BuildAndStart();
    if (s.server != nullptr) {
      s.channel =
          grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
    }
    return s;
  }
  void Shutdown() {
    if (server != nullptr) {
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    }
  }

  std::unique_ptr<grpc::Server> server;
  std::shared_ptr<grpc::Channel> channel;
};

}  // namespace clusterd::testing
