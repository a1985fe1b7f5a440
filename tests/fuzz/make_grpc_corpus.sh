#!/usr/bin/env bash
# Regenerates tests/fuzz/corpus/grpc_request/: one seed per method of the six services, each
# "<full method path>\n" followed by the request in protobuf binary, encoded by protoc from the
# text form below (the worked example job of fuzz_daemon.h: jobId 7c1f0d3a-..., pods on node-a
# and node-b). Run from anywhere; needs protoc (protobuf-compiler).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=tests/fuzz/corpus/grpc_request
mkdir -p "$out"
job=7c1f0d3a-6b0e-4a53-9d8f-2a1c0e5b7f11

seed() {  # seed FILE PROTO TYPE METHOD TEXT
  local file=$1 proto=$2 type=$3 method=$4 text=$5
  {
    printf '%s\n' "$method"
    printf '%s' "$text" | protoc --proto_path=proto --encode="$type" "$proto"
  } >"$out/$file"
}

taskd="jobId: \"$job\" role: \"taskd\""
seed recover_init recover.proto ClientInfo /Recover/Init "$taskd"
seed recover_register recover.proto ClientInfo /Recover/Register "$taskd"
seed recover_subscribe recover.proto ClientInfo /Recover/SubscribeProcessManageSignal "$taskd"
seed recover_stop_complete recover.proto StopCompleteRequest /Recover/ReportStopComplete \
  "jobId: \"$job\" status { code: 0 info: \"ok\" } faultRanks { rankId: \"3\" faultType: \"0\" }"
seed recover_strategy recover.proto RecoverStrategyRequest /Recover/ReportRecoverStrategy \
  "jobId: \"$job\" faultRanks { rankId: \"3\" faultType: \"0\" } strategies: \"recover\" strategies: \"dump\""
seed recover_status recover.proto RecoverStatusRequest /Recover/ReportRecoverStatus \
  "jobId: \"$job\" status { code: 0 } strategy: \"recover\" isolateRankIds: \"3\" isolateRankIds: \"x\""
seed recover_process_fault recover.proto ProcessFaultRequest /Recover/ReportProcessFault \
  "jobId: \"$job\" faultRanks { rankId: \"10\" faultType: \"1\" } faultRanks { rankId: \"-1\" faultType: \"0\" }"
seed recover_switch_nic recover.proto SwitchNics /Recover/SwitchNicTrack \
  "jobID: \"$job\" nicOps { key: \"node-a\" value { dev: \"Ascend910-0\" op: true } }"
seed recover_subscribe_switch_nic recover.proto SwitchNicRequest /Recover/SubscribeSwitchNicSignal \
  "jobID: \"$job\""
seed recover_subscribe_notify_switch recover.proto ClientInfo /Recover/SubscribeNotifySwitch "$taskd"
seed recover_switch_result recover.proto SwitchResult /Recover/ReplySwitchNicResult \
  "jobId: \"$job\" result: true"
seed recover_health recover.proto ClientInfo /Recover/HealthCheck "$taskd"
seed recover_stress_test recover.proto StressTestParam /Recover/StressTest \
  "jobID: \"$job\" stressParam { key: \"node-a\" value { ops: 0 ops: 1 } } allNodesOps: 0"
seed recover_subscribe_stress recover.proto StressTestRequest /Recover/SubscribeStressTestResponse \
  "jobID: \"$job\""
seed recover_subscribe_exec_stress recover.proto ClientInfo /Recover/SubscribeNotifyExecStressTest "$taskd"
seed recover_stress_result recover.proto StressTestResult /Recover/ReplyStressTestResult \
  "jobId: \"$job\" stressResult { key: \"0\" value { rankResult { key: \"0\" value { code: \"0\" result: \"ok\" } } } }"
seed pubfault_send pubfault.proto PublicFaultRequest /PubFault/SendPublicFault \
  'id: "a1b2c3d4-0001" timestamp: 1741056920000 version: "1.0" resource: "CCAE"
   faults { faultId: "fault-0001" faultType: "NPU" faultCode: "220001001" faultTime: 1741056919000
            assertion: "occur" faultLocation { key: "rack" value: "r1" }
            influence { nodeName: "node-a" deviceIds: 0 deviceIds: 1 } description: "link degraded" }'
seed trace_modify profiling.proto DataTypeReq /TrainingDataTrace/ModifyTrainingDataTraceSwitch \
  'jobNsName: "default/pt-2x8" profilingSwitch { CommunicationOperator: "on" Step: "on" }'
seed trace_get profiling.proto DataStatusReq /TrainingDataTrace/GetTrainingDataTraceSwitch \
  'jobNsName: "default/pt-2x8"'
seed trace_subscribe profiling.proto ProfilingClientInfo /TrainingDataTrace/SubscribeDataTraceSwitch \
  "$taskd"
seed config_register config.proto config.ClientInfo /config.Config/Register "$taskd"
seed config_subscribe config.proto config.ClientInfo /config.Config/SubscribeRankTable "$taskd"
seed fault_register fault.proto fault.ClientInfo /fault.Fault/Register "jobId: \"$job\" role: \"mindio\""
seed fault_subscribe fault.proto fault.ClientInfo /fault.Fault/SubscribeFaultMsgSignal "$taskd"
seed fault_get fault.proto fault.ClientInfo /fault.Fault/GetFaultMsgSignal "$taskd"
seed job_register job.proto job.ClientInfo /job.Job/Register 'role: "CCAgent"'
seed job_subscribe job.proto job.ClientInfo /job.Job/SubscribeJobSummarySignal 'role: "CCAgent"'
seed job_subscribe_list job.proto job.ClientInfo /job.Job/SubscribeJobSummarySignalList 'role: "CCAgent"'
