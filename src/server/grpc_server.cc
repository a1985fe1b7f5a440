#include "server/grpc_server.h"

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/log.h"
#include "server/decode_error_interceptor.h"

namespace clusterd::server {

std::string HostPort::ToString() const {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text) {
  HostPort hp;
  absl::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == absl::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("address \"", text, "\" is not of the form [ipv6]:port"));
    }
    hp.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos || text.find(':') != colon) {
      return absl::InvalidArgumentError(
          absl::StrCat("address \"", text, "\" is not of the form host:port or [ipv6]:port"));
    }
    hp.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (hp.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("address \"", text, "\" has no host"));
  }
  if (!absl::SimpleAtoi(port_text, &hp.port) || hp.port < 0 || hp.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("address \"", text, "\" has an invalid port \"", port_text, "\""));
  }
  return hp;
}

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    absl::string_view listen, const std::vector<grpc::Service*>& services,
    const GrpcServerOptions& options) {
  absl::StatusOr<HostPort> hp = ParseHostPort(listen);
  if (!hp.ok()) return hp.status();

  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(hp->ToString(), grpc::InsecureServerCredentials(), &bound_port);
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  builder.SetMaxSendMessageSize(options.max_send_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, options.keepalive_time_ms);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, options.keepalive_timeout_ms);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             options.min_recv_ping_interval_without_data_ms);
  // Clients that ping a little early must not be cut off for it.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  // gRPC sets SO_REUSEPORT by default, so a second server on the port would listen beside the
  // first and the kernel would spread new connections over the two: refuse a port in use.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (grpc::Service* service : services) builder.RegisterService(service);
  // A body that does not parse answers INVALID_ARGUMENT with a reason, not gRPC's bare
  // UNIMPLEMENTED, and the parser's own complaints are rate-limited (decode_error_interceptor.h).
  RouteProtobufLogs();
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<DecodeErrorInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));

  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen for gRPC on ", hp->ToString(),
                                               " (address in use, not local, or not permitted)"));
  }
  HostPort actual = *hp;
  actual.port = bound_port;
  LogInfo("grpc", "serving", {{"address", actual.ToString()}, {"services", services.size()}});
  return std::unique_ptr<GrpcServer>(
      new GrpcServer(std::move(server), actual.ToString(), bound_port));
}

GrpcServer::~GrpcServer() { Shutdown(absl::Seconds(1)); }

void GrpcServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(grace));
  server_->Wait();
}

}  // namespace clusterd::server
