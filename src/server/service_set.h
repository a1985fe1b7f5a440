#pragma once

#include <memory>
#include <vector>

#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "server/cluster_brain.h"
#include "server/config_service.h"
#include "server/data_trace_service.h"
#include "server/fault_service.h"
#include "server/handler_pool.h"
#include "server/job_service.h"
#include "server/pub_fault_service.h"
#include "server/recover_service.h"
#include "server/unary_gate.h"

namespace clusterd::server {

// The six services of the cluster brain, sharing one QPS gate, ready to hand to GrpcServer.
// Construct before brain.Start(): the services attach their listeners to the brain's rooms.
struct ServiceSet {
  // `authz`: who may call what (null: everyone, as the original; tests of the services).
  ServiceSet(Clock& clock, ClusterBrain& brain, UnaryGate::Limits limits = {},
             auth::Authorizer* authz = nullptr)
      : handler_pool(HandlerPool::Options{}),
        gate(clock, limits),
        recover(gate, brain.recovery()),
        config(gate, brain.global_rank_tables()),
        fault(gate, clock, &brain.faults()),
        job(gate, clock, brain.jobs()),
        data_trace(gate, brain.data_trace()),
        pub_fault(gate, &brain.faults()) {
    recover.SetHandlerPool(&handler_pool);
    config.SetHandlerPool(&handler_pool);
    fault.SetHandlerPool(&handler_pool);
    job.SetHandlerPool(&handler_pool);
    data_trace.SetHandlerPool(&handler_pool);
    pub_fault.SetHandlerPool(&handler_pool);
    recover.SetAuthorizer(authz);
    config.SetAuthorizer(authz);
    fault.SetAuthorizer(authz);
    job.SetAuthorizer(authz);
    data_trace.SetAuthorizer(authz);
    pub_fault.SetAuthorizer(authz);
  }

  std::vector<grpc::Service*> All() {
    return {&recover, &config, &fault, &job, &data_trace, &pub_fault};
  }

  // Ends every server stream (before GrpcServer::Shutdown, so that it need not wait for them).
  void CloseStreams() {
    recover.CloseStreams();
    config.CloseStreams();
    job.CloseStreams();
    data_trace.CloseStreams();
    fault.CloseStreams();
  }

  // First, so destroyed last: after the GrpcServer (declared after this set by its owner), whose
  // shutdown waits for the calls the pool's queued handlers finish.
  HandlerPool handler_pool;
  UnaryGate gate;
  RecoverService recover;
  ConfigService config;
  FaultService fault;
  JobService job;
  DataTraceService data_trace;
  PubFaultService pub_fault;
};

}  // namespace clusterd::server
