#pragma once

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/support/server_interceptor.h"

namespace clusterd::server {

// Turns the answer to a request body that does not parse into its request message into
// INVALID_ARGUMENT "request body is not a valid <Message>, method=<path>", counted in
// clusterd_grpc_requests_total{method,code="INVALID_ARGUMENT"} and
// clusterd_grpc_bad_requests_total{method,reason="undecodable"}, with a rate-limited log line
// (BadInputLog).
//
// Why an interceptor: gRPC C++'s callback handlers never call the service when deserialisation
// fails; they finish the call themselves with UNIMPLEMENTED and an empty message
// (CallbackUnaryHandler::RunHandler and its streaming siblings, gRPC 1.51), so no handler can
// see it. A server interceptor sees both ends of every call: POST_RECV_MESSAGE hands it no
// message when parsing failed, and PRE_SEND_STATUS lets it replace that status.
class DecodeErrorInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;
};

// Sends libprotobuf's own log lines to our log, rate-limited like every line about bad input:
// its default handler writes one unbounded stderr line per body with invalid UTF-8 in a string
// field ("String field 'ClientInfo.jobId' contains invalid UTF-8 data ..."). Idempotent; call at
// start-up (protobuf's handler is not thread-safe to change while messages are parsed).
void RouteProtobufLogs();

// The answer to an undecodable body of `full_method` ("/Recover/Init"): names the request
// message when the method is one of ours ("request body is not a valid ClientInfo, method=...").
std::string UndecodableRequestMessage(absl::string_view full_method);

}  // namespace clusterd::server
