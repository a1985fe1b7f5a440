#pragma once

#include <memory>
#include <vector>

#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "server/config_service.h"
#include "server/data_trace_service.h"
#include "server/fault_service.h"
#include "server/job_service.h"
#include "server/pub_fault_service.h"
#include "server/recover_service.h"
#include "server/unary_gate.h"

namespace clusterd::server {

// The six services of the cluster brain, sharing one QPS gate, ready to hand to GrpcServer.
struct ServiceSet {
  explicit ServiceSet(Clock& clock, UnaryGate::Limits limits = {})
      : gate(clock, limits),
        recover(gate),
        config(gate),
        fault(gate),
        job(gate),
        data_trace(gate),
        pub_fault(gate) {}

  std::vector<grpc::Service*> All() {
    return {&recover, &config, &fault, &job, &data_trace, &pub_fault};
  }

  UnaryGate gate;
  RecoverService recover;
  ConfigService config;
  FaultService fault;
  JobService job;
  DataTraceService data_trace;
  PubFaultService pub_fault;
};

}  // namespace clusterd::server
