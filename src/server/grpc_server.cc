#include "server/grpc_server.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/log.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "server/decode_error_interceptor.h"
#include "server/grpc_core_log.h"
#include "server/grpc_listener.h"

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

namespace {

// A readable, non-empty PEM file: gRPC's file watcher would only log the problem later, and
// every handshake would then fail without a word to the operator.
absl::Status CheckPemFile(absl::string_view flag, const std::string& path,
                          absl::string_view marker) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": cannot read the file (", strerror(errno), ")"));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!absl::StrContains(text, marker)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": not a PEM file with a \"", marker, "\" block"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> TlsCredentials(
    const GrpcServerOptions::Tls& tls) {
  if (tls.cert_file.empty() || tls.key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both --grpc-tls-cert and --grpc-tls-key");
  }
  if (absl::Status s = CheckPemFile("--grpc-tls-cert", tls.cert_file, "CERTIFICATE"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPemFile("--grpc-tls-key", tls.key_file, "PRIVATE KEY"); !s.ok()) {
    return s;
  }
  if (!tls.client_ca_file.empty()) {
    if (absl::Status s = CheckPemFile("--grpc-client-ca", tls.client_ca_file, "CERTIFICATE");
        !s.ok()) {
      return s;
    }
  }
  // The watcher re-reads the files every refresh interval, so a rotated certificate (e.g. by
  // cert-manager) is served to new connections without a restart.
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      tls.key_file, tls.cert_file, tls.client_ca_file, std::max(1u, tls.refresh_interval_s));
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (tls.client_ca_file.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    absl::string_view listen, const std::vector<grpc::Service*>& services,
    const GrpcServerOptions& options) {
  if (!options.plaintext && !options.tls.has_value()) {
    return absl::InvalidArgumentError("gRPC with neither a plaintext nor a TLS port");
  }
  std::unique_ptr<GrpcServer> self(new GrpcServer());
  self->limits_ = std::make_unique<ConnectionLimits>(ConnectionLimits::Limits{
      .max_total = options.max_connections, .max_per_client = options.max_connections_per_client});

  grpc::ServerBuilder builder;
  std::vector<std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>> acceptors;
  std::string plaintext_address;
  if (options.plaintext) {
    absl::StatusOr<HostPort> hp = ParseHostPort(listen);
    if (!hp.ok()) return hp.status();
    absl::StatusOr<std::unique_ptr<GrpcListener>> l =
        GrpcListener::Bind(*hp, *self->limits_, "plaintext");
    if (!l.ok()) return l.status();
    hp->port = (*l)->port();
    self->address_ = hp->ToString();
    self->port_ = hp->port;
    plaintext_address = self->address_;
    acceptors.push_back(builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
        grpc::InsecureServerCredentials()));
    self->listeners_.push_back(std::move(*l));
  }
  if (options.tls.has_value()) {
    absl::StatusOr<HostPort> hp = ParseHostPort(options.tls->listen);
    if (!hp.ok()) return hp.status();
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds = TlsCredentials(*options.tls);
    if (!creds.ok()) return creds.status();
    absl::StatusOr<std::unique_ptr<GrpcListener>> l =
        GrpcListener::Bind(*hp, *self->limits_, "tls");
    if (!l.ok()) return l.status();
    hp->port = (*l)->port();
    self->tls_address_ = hp->ToString();
    self->tls_port_ = hp->port;
    if (!options.plaintext) {
      self->address_ = self->tls_address_;
      self->port_ = self->tls_port_;
    }
    acceptors.push_back(builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, *creds));
    self->listeners_.push_back(std::move(*l));
  }

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
  // A connection that never finishes its (TLS) handshake is closed after 10 s rather than
  // gRPC's default 120 s, so silent connections do not hold slots of the connection limits.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, 10000);
  for (grpc::Service* service : services) builder.RegisterService(service);
  // A body that does not parse answers INVALID_ARGUMENT with a reason, not gRPC's bare
  // UNIMPLEMENTED, and the parser's own complaints are rate-limited (decode_error_interceptor.h).
  RouteProtobufLogs();
  // gRPC core's own log lines (a failed TLS handshake is one per connection) are counted and
  // rate-limited (grpc_core_log.h).
  RouteGrpcCoreLogs();
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<DecodeErrorInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));

  self->server_ = builder.BuildAndStart();
  if (self->server_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot start the gRPC server on ", self->address_));
  }
  for (size_t i = 0; i < acceptors.size(); ++i) self->listeners_[i]->Start(std::move(acceptors[i]));
  LogInfo("grpc", "serving",
          {{"plaintext", options.plaintext ? plaintext_address : std::string("off")},
           {"tls", options.tls.has_value() ? self->tls_address_ : std::string("off")},
           {"mtls", options.tls.has_value() && !options.tls->client_ca_file.empty()},
           {"max_connections", options.max_connections},
           {"max_connections_per_client", options.max_connections_per_client},
           {"services", services.size()}});
  return self;
}

GrpcServer::~GrpcServer() { Shutdown(absl::Seconds(1)); }

void GrpcServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& listener : listeners_) listener->StopAccepting();
  if (server_ == nullptr) return;  // Start failed before the server was built
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(grace));
  server_->Wait();
}

}  // namespace clusterd::server
