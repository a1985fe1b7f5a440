#include "client/channel.h"

#include <string>
#include <utility>

namespace clusterd::client {

std::shared_ptr<grpc::Channel> MakeChannel(absl::string_view address) {
  return MakeChannel(address, grpc::InsecureChannelCredentials());
}

std::shared_ptr<grpc::Channel> MakeChannel(absl::string_view address,
                                           std::shared_ptr<grpc::ChannelCredentials> credentials) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 3000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 1);
  args.SetMaxReceiveMessageSize(8 * 1024 * 1024);
  return grpc::CreateCustomChannel(std::string(address), std::move(credentials), args);
}

}  // namespace clusterd::client
