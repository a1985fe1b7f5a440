#include "server/decode_error_interceptor.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/stubs/logging.h"
#include "server/request_limits.h"
#include "server/rpc_metrics.h"

namespace clusterd::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

class DecodeErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  // `method` is the registered method's name, which outlives every call.
  explicit DecodeErrorInterceptor(const char* method) : method_(method == nullptr ? "" : method) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      undecodable_ = true;
    }
    if (undecodable_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      Refuse(methods);
    }
    methods->Proceed();
  }

 private:
  void Refuse(grpc::experimental::InterceptorBatchMethods* methods) {
    const std::string reason = UndecodableRequestMessage(method_);
    methods->ModifySendStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, reason));
    RecordRpc(method_, grpc::StatusCode::INVALID_ARGUMENT);
    CountBadRequest(method_, "undecodable");
    if (int64_t suppressed = 0; BadInputLog::Default().Admit(&suppressed)) {
      LogWarn("grpc", "request refused: undecodable body",
              {{"method", method_}, {"error", reason}, {"suppressed", suppressed}});
    }
  }

  const absl::string_view method_;
  bool undecodable_ = false;  // batches of one call are intercepted one at a time
};

void ProtobufLog(google::protobuf::LogLevel level, const char* filename, int line,
                 const std::string& message) {
  static BadInputLog* limit = new BadInputLog(Clock::Real(), 1, 10);
  int64_t suppressed = 0;
  // A fatal message is always written: protobuf aborts after it.
  if (level != google::protobuf::LOGLEVEL_FATAL && !limit->Admit(&suppressed)) return;
  const spdlog::level::level_enum ours =
      level == google::protobuf::LOGLEVEL_INFO      ? spdlog::level::info
      : level == google::protobuf::LOGLEVEL_WARNING ? spdlog::level::warn
                                                    : spdlog::level::err;
  Log(ours, "protobuf", message,
      {{"at", absl::StrCat(filename == nullptr ? "" : filename, ":", line)},
       {"suppressed", suppressed}});
}

}  // namespace

void RouteProtobufLogs() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(&ProtobufLog); });
}

std::string UndecodableRequestMessage(absl::string_view full_method) {
  // "/config.Config/Register" -> "config.Config.Register" in the generated descriptor pool.
  std::string name(full_method.substr(full_method.empty() || full_method[0] != '/' ? 0 : 1));
  if (size_t slash = name.rfind('/'); slash != std::string::npos) name[slash] = '.';
  const google::protobuf::MethodDescriptor* method =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(name);
  const std::string type = method != nullptr ? method->input_type()->name() : "request message";
  return absl::StrCat("request body is not a valid ", type, ", method=", full_method);
}

grpc::experimental::Interceptor* DecodeErrorInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new DecodeErrorInterceptor(info->method());
}

}  // namespace clusterd::server
