#include "agent/grpc_source.h"

#include "absl/strings/str_cat.h"
#include "agent/agent_metrics.h"
#include "agent/event_json.h"
#include "auth/audit.h"
#include "auth/authorizer.h"
#include "auth/permissions.h"
#include "auth/policy.h"
#include "auth/token_file.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "npu_agent.grpc.pb.h"

namespace clusterd::agent {
namespace {

namespace pb = ::clusterd::agent;

EventFields FieldsOf(const pb::FaultEvent& e) {
  EventFields f;
  f.kind = e.kind();
  f.npu = e.has_npu() ? e.npu() : -1;
  f.code = e.code();
  f.assertion = e.assertion();
  f.severity = e.has_severity() ? e.severity() : -1;
  f.chip_id = e.has_chip_id() ? static_cast<int64_t>(e.chip_id()) : -1;
  f.port_id = e.has_port_id() ? static_cast<int64_t>(e.port_id()) : -1;
  f.peer_port_id = e.peer_port_id();
  f.device_type = e.device_type();
  f.device_id = e.device_id();
  f.alarm_time_ms = e.alarm_time_ms();
  return f;
}

class InjectionService final : public pb::FaultInjection::CallbackService {
 public:
  InjectionService(int num_npus, AgentRunner& runner, auth::Authorizer* authz)
      : num_npus_(num_npus), runner_(runner), authz_(authz) {}

  grpc::ServerUnaryReactor* Inject(grpc::CallbackServerContext* context,
                                   const pb::InjectRequest* request,
                                   pb::InjectReply* reply) override {
    auth::Caller caller;
    caller.peer = context->peer();
    if (auto it = context->client_metadata().find("authorization");
        it != context->client_metadata().end()) {
      caller.authorization.assign(it->second.data(), it->second.size());
    }
    auth::Principal who;
    if (absl::Status s = authz_->Permit(kInjectMethod, caller, auth::kPermInject, "", &who);
        !s.ok()) {
      auth::Audit(kInjectMethod, who, caller.peer, "", "denied", s.message());
      grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
      reactor->Finish(
          grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message())));
      return reactor;
    }
    for (int i = 0; i < request->events_size(); ++i) {
      absl::StatusOr<AgentEvent> event = MakeEvent(FieldsOf(request->events(i)), num_npus_);
      if (!event.ok()) {
        reply->add_errors(absl::StrCat("event[", i, "]: ", event.status().message()));
        AgentMetrics::Events(request->events(i).kind(), "rejected").Increment();
        continue;
      }
      runner_.Inject(*std::move(event));
      reply->set_accepted(reply->accepted() + 1);
    }
    auth::Audit(kInjectMethod, who, caller.peer, "", "ok",
                absl::StrCat("accepted=", reply->accepted(), " rejected=", reply->errors_size()));
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  static constexpr char kInjectMethod[] = "/clusterd.agent.FaultInjection/Inject";
  const int num_npus_;
  AgentRunner& runner_;
  auth::Authorizer* authz_;
};

// Who may Inject: loopback callers, and every holder of a token of the token file.
auth::Policy InjectPolicy() {
  auth::Policy p;
  p.rules.push_back(
      auth::PolicyRule{{std::string(auth::kAnonymousLoopbackUser)}, {}, {"inject"}, {}});
  p.rules.push_back(auth::PolicyRule{{}, {std::string(auth::kGroupAuthenticated)}, {"inject"}, {}});
  return p;
}

class GrpcSource final : public FaultSourceHandle {
 public:
  GrpcSource(std::unique_ptr<auth::PolicySource> policy,
             std::unique_ptr<auth::TokenAuthenticator> tokens,
             std::unique_ptr<auth::Authorizer> authz, std::unique_ptr<InjectionService> service,
             std::unique_ptr<grpc::Server> server, std::string address)
      : policy_(std::move(policy)),
        tokens_(std::move(tokens)),
        authz_(std::move(authz)),
        service_(std::move(service)),
        server_(std::move(server)),
        address_(std::move(address)) {}
  ~GrpcSource() override { server_->Shutdown(std::chrono::system_clock::now()); }
  std::string Describe() const override { return "grpc:" + address_; }

 private:
  std::unique_ptr<auth::PolicySource> policy_;
  std::unique_ptr<auth::TokenAuthenticator> tokens_;
  std::unique_ptr<auth::Authorizer> authz_;
  std::unique_ptr<InjectionService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FaultSourceHandle>> StartGrpcSource(const std::string& listen,
                                                                   int num_npus,
                                                                   AgentRunner& runner,
                                                                   const std::string& token_file) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("grpc fault source \"", listen, "\": want HOST:PORT"));
  }
  std::unique_ptr<auth::TokenAuthenticator> tokens;
  if (!token_file.empty()) {
    absl::StatusOr<std::unique_ptr<auth::TokenFileAuthenticator>> file =
        auth::TokenFileAuthenticator::Open(token_file, Clock::Real());
    if (!file.ok()) return file.status();
    tokens = *std::move(file);
  }
  auto policy = std::make_unique<auth::PolicySource>(InjectPolicy());
  auto authz = std::make_unique<auth::Authorizer>(
      auth::Authorizer::Options{policy.get(), tokens.get(), nullptr}, Clock::Real());
  auto service = std::make_unique<InjectionService>(num_npus, runner, authz.get());
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat("grpc fault source: cannot listen on ", listen));
  }
  std::string address = absl::StrCat(listen.substr(0, colon), ":", port);
  return std::make_unique<GrpcSource>(std::move(policy), std::move(tokens), std::move(authz),
                                      std::move(service), std::move(server), std::move(address));
}

}  // namespace clusterd::agent
