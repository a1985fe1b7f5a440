#include "client/channel.h"

#include <string>

namespace clusterd::client {

std::shared_ptr<grpc::Channel> MakeChannel(absl::string_view address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 3000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 1);
  args.SetMaxReceiveMessageSize(8 * 1024 * 1024);
  return grpc::CreateCustomChannel(std::string(address), grpc::InsecureChannelCredentials(), args);
}

}  // namespace clusterd::client
