#include "server/fault_service.h"

#include "absl/strings/str_cat.h"
#include "auth/permissions.h"
#include "cluster/job_uuid.h"
#include "common/log.h"
#include "server/method_names.h"
#include "server/rpc_util.h"

namespace clusterd::server {
namespace {

// §4.1: 8..128 bytes, no character in U+4E00..U+9FA5.
bool ValidQueryJobId(const std::string& id) {
  if (id.size() < 8 || id.size() > 128) return false;
  for (size_t i = 0; i + 2 < id.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(id[i]);
    if ((b0 & 0xF0) != 0xE0) continue;
    const uint32_t cp = ((b0 & 0x0F) << 12) |
                        ((static_cast<unsigned char>(id[i + 1]) & 0x3F) << 6) |
                        (static_cast<unsigned char>(id[i + 2]) & 0x3F);
    if (cp >= 0x4E00 && cp <= 0x9FA5) return false;
  }
  return true;
}

}  // namespace

FaultService::FaultService(UnaryGate& gate, Clock& clock, cluster::FaultCentre* centre)
    : GatedService(gate),
      clock_(clock),
      centre_(centre),
      hub_("fault", kMailboxCapacity),
      query_bucket_(10, 10, clock) {
  if (centre_ != nullptr) {
    centre_->AddJobFaultSink(this);
    centre_->SetFaultSubscribed([this](const std::string& id) { return Serves(id); });
  }
}

::fault::FaultMsgSignal FaultService::ToProto(const cluster::FaultMsgSignal& s) {
  ::fault::FaultMsgSignal p;
  p.set_uuid(s.uuid);
  p.set_jobid(s.job_id);
  p.set_signaltype(s.signal_type);
  for (const auto& n : s.nodes) {
    ::fault::NodeFaultInfo* node = p.add_nodefaultinfo();
    node->set_nodename(n.node_name);
    node->set_nodeip(n.node_ip);
    node->set_nodesn(n.node_sn);
    node->set_faultlevel(n.fault_level);
    for (const auto& d : n.fault_devices) {
      ::fault::DeviceFaultInfo* dev = node->add_faultdevice();
      dev->set_deviceid(d.device_id);
      dev->set_devicetype(d.device_type);
      for (const auto& c : d.fault_codes) dev->add_faultcodes(c);
      dev->set_faultlevel(d.fault_level);
      for (const auto& sw : d.switch_fault_infos) {
        ::fault::SwitchFaultInfo* info = dev->add_switchfaultinfos();
        info->set_faultcode(sw.fault_code);
        info->set_switchchipid(sw.switch_chip_id);
        info->set_switchportid(sw.switch_port_id);
        info->set_faulttime(sw.fault_time);
        info->set_faultlevel(sw.fault_level);
      }
      for (const auto& l : d.fault_levels) dev->add_faultlevels(l);
    }
  }
  return p;
}

void FaultService::Deliver(const std::vector<cluster::FaultSubscriptions::Delivery>& deliveries) {
  for (const auto& d : deliveries) {
    auto mailbox = hub_.Find(d.publisher);
    if (mailbox == nullptr) continue;
    cluster::FaultMsgSignal signal = d.signal;
    signal.uuid = cluster::NewJobUuid();
    mailbox->Push(ToProto(signal));
  }
}

void FaultService::OnJobFaults(const cluster::JobFaultRanks& faults) {
  if (!faults.multi_instance_job_id.empty()) {
    absl::MutexLock lock(&mu_);
    instance_of_[faults.job_id] = faults.multi_instance_job_id;
  }
  auto exists = [this](const std::string& id) {
    return centre_ != nullptr && centre_->JobExists(id);
  };
  Deliver(subscriptions_.Update(faults, exists));
}

void FaultService::OnJobGone(const std::string& job_id) {
  std::string instance;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = instance_of_.find(job_id); it != instance_of_.end()) {
      instance = it->second;
      instance_of_.erase(it);
    }
  }
  Deliver(subscriptions_.JobGone(job_id, instance));
}

void FaultService::CloseStreams() {
  hub_.CloseAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "clusterd is stopping"));
}

absl::Status FaultService::MayFollow(const grpc::ServerContextBase& ctx, absl::string_view method,
                                     const std::string& job_id) {
  // One job's faults: that job's pods; every job's (no job id): a `read` credential.
  if (job_id.empty()) return Permit(ctx, method, auth::kPermRead, "");
  return ActForJob(ctx, method, job_id);
}

grpc::ServerUnaryReactor* FaultService::Register(grpc::CallbackServerContext* ctx,
                                                 const ::fault::ClientInfo* request,
                                                 ::fault::Status* response) {
  return BlockingUnary(ctx, method::kFaultRegister, [this, ctx, request, response] {
    if (absl::Status s = CheckRequestBounds(method::kFaultRegister, *request); !s.ok()) {
      return ToGrpcStatus(s);
    }
    if (request->role().empty()) {
      return GoError("role is required", method::kFaultRegister);
    }
    if (absl::Status s = MayFollow(*ctx, method::kFaultRegister, request->jobid()); !s.ok()) {
      return ToGrpcStatus(s);
    }
    auto known = [this](const std::string& id, const std::string& role) {
      return centre_ != nullptr && centre_->JobKnown(id, role);
    };
    cluster::FaultSubscriptions::Registration r =
        subscriptions_.Register(request->jobid(), request->role(), known);
    response->set_code(r.code);
    response->set_info(r.info);
    if (r.rpc_error) return GoError(r.info, method::kFaultRegister);
    hub_.Open(r.publisher);
    Deliver(r.initial);
    LogInfo("fault-service", "publisher registered",
            {{"job", cluster::FaultSubscriptions::NormaliseJobId(request->jobid())},
             {"role", request->role()}});
    return grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<::fault::FaultMsgSignal>* FaultService::SubscribeFaultMsgSignal(
    grpc::CallbackServerContext* ctx, const ::fault::ClientInfo* request) {
  const absl::string_view method = method::kFaultSubscribeFaultMsgSignal;
  if (absl::Status s = CheckRequestBounds(method, *request); !s.ok()) {
    return RefuseStream<::fault::FaultMsgSignal>(method, ToGrpcStatus(s));
  }
  if (request->role().empty()) {
    return RefuseStream<::fault::FaultMsgSignal>(method, GoError("role is required", method));
  }
  if (absl::Status s = MayFollow(*ctx, method, request->jobid()); !s.ok()) {
    return RefuseStream<::fault::FaultMsgSignal>(method, ToGrpcStatus(s));
  }
  const std::string job_id = cluster::FaultSubscriptions::NormaliseJobId(request->jobid());
  const std::string key = cluster::FaultSubscriptions::PublisherKey(job_id, request->role());
  auto mailbox = hub_.Find(key);
  if (mailbox == nullptr || !subscriptions_.IsRegistered(job_id, request->role())) {
    return RefuseStream<::fault::FaultMsgSignal>(
        method,
        GoError(absl::StrCat("jobId=", job_id, " not registered, role=", request->role()), method));
  }
  RecordRpc(method, grpc::StatusCode::OK);
  return hub_.Subscribe(mailbox, nullptr);
}

grpc::ServerUnaryReactor* FaultService::GetFaultMsgSignal(grpc::CallbackServerContext* ctx,
                                                          const ::fault::ClientInfo* request,
                                                          ::fault::FaultQueryResult* response) {
  return BlockingUnary(ctx, method::kFaultGetFaultMsgSignal, [this, ctx, request, response] {
    if (absl::Status s = CheckRequestBounds(method::kFaultGetFaultMsgSignal, *request); !s.ok()) {
      return ToGrpcStatus(s);
    }
    if (absl::Status s = MayFollow(*ctx, method::kFaultGetFaultMsgSignal, request->jobid());
        !s.ok()) {
      return ToGrpcStatus(s);
    }
    if (!query_bucket_.TryAcquire()) {
      response->set_code(429);
      response->set_info("rate limited, please try again later");
      return GoError(response->info(), method::kFaultGetFaultMsgSignal);
    }
    const std::string& job_id = request->jobid();
    if (job_id.empty()) {
      absl::MutexLock lock(&mu_);
      const absl::Time now = clock_.Now();
      if (!cluster_view_.has_value() || now - cluster_view_time_ >= kClusterViewTtl) {
        cluster::FaultMsgSignal view =
            centre_ != nullptr ? centre_->ClusterSignal() : cluster::BuildClusterFaultSignal({});
        view.uuid = cluster::NewJobUuid();
        cluster_view_ = ToProto(view);
        cluster_view_time_ = now;
      }
      response->set_code(200);
      response->set_info("Succeed");
      *response->mutable_faultsignal() = *cluster_view_;
      return grpc::Status::OK;
    }
    if (!ValidQueryJobId(job_id)) {
      response->set_code(409);
      response->set_info(absl::StrCat("job with jobId: ", job_id, " is invalid"));
      return GoError(response->info(), method::kFaultGetFaultMsgSignal);
    }
    // The original answers from the job fault ranks of every job the registry holds, unfiltered:
    // a healthy job is "all info returned" too, and NotHandleFault entries are shown.
    const bool known = centre_ != nullptr && centre_->JobExists(job_id);
    std::optional<cluster::JobFaultRanks> faults;
    if (known) faults = centre_->JobFaults(job_id);
    cluster::JobFaultQueryAnswer answer =
        cluster::AnswerJobFaultQuery(job_id, known, faults.has_value() ? &*faults : nullptr);
    response->set_code(200);
    response->set_info(answer.info);
    if (answer.signal.has_value()) {
      answer.signal->uuid = cluster::NewJobUuid();
      *response->mutable_faultsignal() = ToProto(*answer.signal);
    }
    return grpc::Status::OK;
  });
}

}  // namespace clusterd::server
