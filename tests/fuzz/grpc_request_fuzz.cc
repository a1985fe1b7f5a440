// Feeds every request type of the six gRPC services (Recover, PubFault, TrainingDataTrace,
// config.Config, fault.Fault, job.Job; the original .proto files) to its service handler.
//
// Input: "<full method path>\n<request bytes>", e.g. "/Recover/Init\n" + a serialized
// ClientInfo. A path that names no method picks one by its hash, so a mutated path still
// reaches a handler. The bytes are
//   1. parsed as the method's request type in this process and put through what every handler
//      runs first: the string bounds (CheckRequestBounds) and, for the methods that carry ranks,
//      nodes or public faults, their conversions (server/recover_convert.h, PubFaultService);
//   2. sent as they are, over loopback, to the daemon of fuzz_daemon.h: the server parses them
//      (or its interceptor refuses them) and the real handler answers, against the worked
//      example job. A server stream is read for at most 50 ms, then cancelled.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fuzz_daemon.h"
#include "fuzz_util.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/message.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "pubfault.pb.h"
#include "recover.pb.h"
#include "server/pub_fault_service.h"
#include "server/recover_convert.h"
#include "server/request_limits.h"

using namespace clusterd;
namespace pb = google::protobuf;

namespace {

struct Method {
  std::string path;  // "/Recover/Init"
  const pb::Descriptor* request = nullptr;
  bool server_streaming = false;
};

// The methods of the six services, in the order of their .proto files.
const std::vector<Method>& Methods() {
  static const std::vector<Method> methods = [] {
    // Referencing a generated type keeps its file (and its service descriptors) linked in.
    (void)::ClientInfo::descriptor();
    (void)::PublicFaultRequest::descriptor();
    std::vector<Method> out;
    for (const char* service :
         {"Recover", "PubFault", "TrainingDataTrace", "config.Config", "fault.Fault", "job.Job"}) {
      const pb::ServiceDescriptor* s =
          pb::DescriptorPool::generated_pool()->FindServiceByName(service);
      if (s == nullptr) continue;
      for (int i = 0; i < s->method_count(); ++i) {
        const pb::MethodDescriptor* m = s->method(i);
        out.push_back(
            {"/" + s->full_name() + "/" + m->name(), m->input_type(), m->server_streaming()});
      }
    }
    return out;
  }();
  return methods;
}

const Method& Pick(std::string_view path) {
  const std::vector<Method>& methods = Methods();
  for (const Method& m : methods) {
    if (m.path == path) return m;
  }
  return methods[std::hash<std::string_view>{}(path) % methods.size()];
}

// Step 1: the checks and conversions the handlers run before anything else.
void CheckInProcess(const Method& method, const pb::Message& request) {
  if (!server::CheckRequestBounds(method.path, request).ok()) return;
  if (const auto* r = dynamic_cast<const ::ProcessFaultRequest*>(&request)) {
    (void)server::ParseFaultRanks(r->faultranks());
    (void)server::ParseFaultRanks(r->faultranks(), 16);
  } else if (const auto* r = dynamic_cast<const ::StopCompleteRequest*>(&request)) {
    (void)server::ParseFaultRanks(r->faultranks());
  } else if (const auto* r = dynamic_cast<const ::RecoverStrategyRequest*>(&request)) {
    (void)server::ParseFaultRanks(r->faultranks());
  } else if (const auto* r = dynamic_cast<const ::RecoverStatusRequest*>(&request)) {
    int dropped = 0;
    (void)server::ParseIsolateRanks(r->isolaterankids(), &dropped);
  } else if (const auto* r = dynamic_cast<const ::SwitchNics*>(&request)) {
    (void)server::NicOpsOf(*r);
  } else if (const auto* r = dynamic_cast<const ::StressTestParam*>(&request)) {
    (void)server::StressParamOf(*r);
  } else if (const auto* r = dynamic_cast<const ::StressTestResult*>(&request)) {
    (void)server::ParseStressResults(*r);
  } else if (const auto* r = dynamic_cast<const ::PublicFaultRequest*>(&request)) {
    (void)server::PubFaultService::FromProto(*r);
  }
}

// Waits for one call's completion callback.
class Done {
 public:
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// A server-streaming call through the generic (bidi) API: one request, half-close, one read.
class StreamCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  StreamCall(grpc::GenericStub& stub, const std::string& method, const grpc::ByteBuffer& request) {
    ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(50));
    stub.PrepareBidiStreamingCall(&ctx_, method, grpc::StubOptions(), this);
    request_ = request;
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&response_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (ok) ctx_.TryCancel();  // one message is enough; the stream would go on
  }
  void OnDone(const grpc::Status&) override { done_.Notify(); }
  void Wait() { done_.Wait(); }

 private:
  grpc::ClientContext ctx_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  Done done_;
};

// Step 2: the bytes to the daemon.
void SendToDaemon(const Method& method, std::string_view bytes) {
  static grpc::GenericStub* stub = [] {
    const fuzz::DaemonAddresses& daemon = fuzz::Daemon();
    return new grpc::GenericStub(
        grpc::CreateChannel(daemon.grpc, grpc::InsecureChannelCredentials()));
  }();
  grpc::Slice slice(bytes.data(), bytes.size());
  grpc::ByteBuffer request(&slice, 1);
  if (method.server_streaming) {
    StreamCall call(*stub, method.path, request);
    call.Wait();
    return;
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::ByteBuffer response;
  Done done;
  stub->UnaryCall(&ctx, method.path, grpc::StubOptions(), &request, &response,
                  [&done](const grpc::Status&) { done.Notify(); });
  done.Wait();
}

}  // namespace

// The daemon starts before the first input (and turns the log off).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)clusterd::fuzz::Daemon();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::AsText(data, size);
  const size_t newline = input.find('\n');
  const std::string_view path = newline == std::string_view::npos ? "" : input.substr(0, newline);
  const std::string_view bytes =
      newline == std::string_view::npos ? input : input.substr(newline + 1);
  const Method& method = Pick(path);

  const pb::Message* prototype =
      pb::MessageFactory::generated_factory()->GetPrototype(method.request);
  std::unique_ptr<pb::Message> request(prototype->New());
  if (request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    CheckInProcess(method, *request);
  }
  SendToDaemon(method, bytes);
  return 0;
}
