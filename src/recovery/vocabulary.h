#pragma once

// Every string the recovery plane puts on the wire or on a Kubernetes object, spelled once
// (recovery-protocol.md §2-§5, §9.1, §9.6, §11-§14). Clients compare these byte for byte.

#include <cstdint>
#include <string_view>

namespace clusterd::recovery {

// §5.1 signalType.
inline constexpr std::string_view kSignalKeepAlive = "keep-alive";
inline constexpr std::string_view kSignalStopTrain = "stopTrain";
inline constexpr std::string_view kSignalGlobalFault = "globalFault";
inline constexpr std::string_view kSignalChangeStrategy = "changeStrategy";
inline constexpr std::string_view kSignalSaveAndExit = "saveAndExit";
inline constexpr std::string_view kSignalKillMaster = "killMaster";
inline constexpr std::string_view kSignalFaultNodesExit = "faultNodesExit";
inline constexpr std::string_view kSignalPreExitProcess = "preExitProcess";
inline constexpr std::string_view kSignalHotSwitch = "hot-switch";
inline constexpr std::string_view kSignalPauseStartAgent = "pauseStartAgent";
inline constexpr std::string_view kSignalContinueStartAgent = "continueStartAgent";

// §5.2 actions. The last four contain spaces.
inline constexpr std::string_view kActionStopTrain = "stop_train";
inline constexpr std::string_view kActionPauseTrain = "pause_train";
inline constexpr std::string_view kActionOnGlobalRank = "on_global_rank";
inline constexpr std::string_view kActionFaultNodesExit = "fault_nodes_exit";
inline constexpr std::string_view kActionFaultNodesRestart = "fault_nodes_restart";
inline constexpr std::string_view kActionChangeStrategy = "change_strategy";
inline constexpr std::string_view kActionSaveAndExit = "save_and_exit";
inline constexpr std::string_view kActionPauseStartAgent = "pause_start_agent";
inline constexpr std::string_view kActionContinueStartAgent = "continue_start_agent";
inline constexpr std::string_view kActionPreExitProcess = "pre exit process";
inline constexpr std::string_view kActionHotSwitch = "hot switch";
inline constexpr std::string_view kActionStopSwitch = "stop switch";
inline constexpr std::string_view kActionNewPodRunning = "new pod running";

// §5.3 strategy names.
inline constexpr std::string_view kStrategyRetry = "retry";
inline constexpr std::string_view kStrategyRecoverInPlace = "recover-in-place";
inline constexpr std::string_view kStrategyRecover = "recover";
inline constexpr std::string_view kStrategyElasticTraining = "elastic-training";
inline constexpr std::string_view kStrategyDowngrade = "downgrade";
inline constexpr std::string_view kStrategyUpgrade = "upgrade";
inline constexpr std::string_view kStrategyDump = "dump";
inline constexpr std::string_view kStrategyExit = "exit";
inline constexpr std::string_view kStrategyContinue = "continue";
inline constexpr std::string_view kStrategyMigration = "migration";
inline constexpr std::string_view kStrategyJobRescheduling = "job-rescheduling";
inline constexpr std::string_view kStrategyPodRescheduling = "pod-rescheduling";

// §5.4 extraParams. The scale texts have exactly one space after the colon.
inline constexpr std::string_view kExtraScaleIn = "{\"scale-in-strategy\": \"DP\"}";
inline constexpr std::string_view kExtraScaleOut = "{\"scale-out-strategy\": \"DP\"}";
inline constexpr std::string_view kExtraRecoverInPlace = "recover-in-place";
inline constexpr std::string_view kExtraDumpExit = "dump_exit";

// §5.5 fault types, as integers; on the wire they are their decimal strings.
inline constexpr int kFaultTypeUce = 0;      // on-chip memory, retry class
inline constexpr int kFaultTypeNormal = 1;   // anything else
inline constexpr int kFaultTypeNetwork = 2;  // HCCL, retry class
// The codes of the two retry classes are model::kFaultCodeUce and model::kFaultCodeHcclRetry.

// §4 status codes. Wire codes (§4.1) first, then client-reported and internal ones.
inline constexpr int32_t kCodeOk = 0;
inline constexpr int32_t kCodeSuccess = 200;
inline constexpr int32_t kCodeExitIsolateRanks = 201;
inline constexpr int32_t kCodeUnRegistry = 400;
inline constexpr int32_t kCodeOrderMix = 401;
inline constexpr int32_t kCodeJobNotExist = 402;
inline constexpr int32_t kCodeProcessRecoverEnableOff = 403;
inline constexpr int32_t kCodeProcessNotReady = 404;
inline constexpr int32_t kCodeRecoverableRetryError = 405;
inline constexpr int32_t kCodeUnRecoverableRetryError = 406;
inline constexpr int32_t kCodeDumpError = 407;
inline constexpr int32_t kCodeUnInit = 408;
inline constexpr int32_t kCodeInvalidReqParam = 409;
inline constexpr int32_t kCodeInvalidReqRate = 410;
inline constexpr int32_t kCodeOmIsRunning = 411;
inline constexpr int32_t kCodeOmParamInvalid = 413;
inline constexpr int32_t kCodeRateLimited = 429;
inline constexpr int32_t kCodeClientError = 499;  // also UnRecoverTrainError
inline constexpr int32_t kCodeOutOfMaxServeJobs = 500;
inline constexpr int32_t kCodeOperateConfigMapError = 501;
inline constexpr int32_t kCodeOperatePodGroupError = 502;
inline constexpr int32_t kCodeScheduleTimeout = 503;
inline constexpr int32_t kCodeSignalQueueBusy = 504;
inline constexpr int32_t kCodeEventQueueBusy = 505;
inline constexpr int32_t kCodeControllerEventCancel = 506;
inline constexpr int32_t kCodeWaitReportTimeout = 507;
inline constexpr int32_t kCodeWaitPlatStrategyTimeout = 508;
inline constexpr int32_t kCodeWriteConfirmFaultOrWaitPlatResultFault = 509;
inline constexpr int32_t kCodeHcclRoutingConvergenceFail = 510;
inline constexpr int32_t kCodeServerInnerError = 599;

// §9.1 PodGroup labels and annotations.
inline constexpr std::string_view kLabelProcessRecoverEnable = "process-recover-enable";
inline constexpr std::string_view kProcessRecoverOn = "on";
inline constexpr std::string_view kProcessRecoverPause = "pause";
inline constexpr std::string_view kAnnotationRecoverStrategy = "recover-strategy";
inline constexpr std::string_view kLabelFaultScheduling = "fault-scheduling";
inline constexpr std::string_view kFaultSchedulingGrace = "grace";
inline constexpr std::string_view kFaultSchedulingForce = "force";
inline constexpr std::string_view kLabelPodRescheduling = "pod-rescheduling";
inline constexpr std::string_view kLabelSubHealthyStrategy = "subHealthyStrategy";
inline constexpr std::string_view kSubHealthGraceExit = "graceExit";
inline constexpr std::string_view kSubHealthHotSwitch = "hotSwitch";
inline constexpr std::string_view kSubHealthIgnore = "ignore";
inline constexpr std::string_view kLabelFramework = "framework";
inline constexpr std::string_view kFrameworkPytorch = "pytorch";
inline constexpr std::string_view kFrameworkMindspore = "mindspore";
inline constexpr std::string_view kAnnotationWaitRescheduleTimeout = "wait-reschedule-timeout";
inline constexpr std::string_view kAnnotationRaBlock = "ra-block";

// §9.6 platform-mode annotations and ProcessRecoverStatus values.
inline constexpr std::string_view kAnnotationProcessRecoverStrategy = "ProcessRecoverStrategy";
inline constexpr std::string_view kAnnotationProcessConfirmFault = "ProcessConfirmFault";
inline constexpr std::string_view kAnnotationProcessResultFault = "ProcessResultFault";
inline constexpr std::string_view kAnnotationRankTableReady = "RankTableReady";
inline constexpr std::string_view kAnnotationProcessRecoverStatus = "ProcessRecoverStatus";
inline constexpr std::string_view kStatusRetrySuccess = "retry-success";
inline constexpr std::string_view kStatusRetryFailed = "retry-failed";
inline constexpr std::string_view kStatusRecoverSuccess = "recover-success";
inline constexpr std::string_view kStatusRecoverFailed = "recover-failed";
inline constexpr std::string_view kStatusDumpSuccess = "dump-success";
inline constexpr std::string_view kStatusDumpFailed = "dump-failed";
inline constexpr std::string_view kStatusExitCompleted = "exit-completed";

// §11.3 pod labels and annotations, §11.4 node annotation.
inline constexpr std::string_view kAnnotationRankIndex = "hccl/rankIndex";
inline constexpr std::string_view kAnnotationAscendReal = "huawei.com/AscendReal";
inline constexpr std::string_view kPodTypeKey = "podType";
inline constexpr std::string_view kPodTypeBackup = "backup";
inline constexpr std::string_view kLabelFaultType = "fault-type";
inline constexpr std::string_view kFaultTypeSoftware = "software";
inline constexpr std::string_view kFaultTypeRetryFault = "retry-fault";
inline constexpr std::string_view kFaultTypeSubHealth = "SubHealth";
inline constexpr std::string_view kAnnotationInHotSwitchFlow = "inHotSwitchFlow";
inline constexpr std::string_view kAnnotationNeedOperatorOpe = "needOperatorOpe";
inline constexpr std::string_view kAnnotationNeedVolcanoOpe = "needVolcanoOpe";
inline constexpr std::string_view kAnnotationBackupNewPodName = "backupNewPodName";
inline constexpr std::string_view kOpeCreate = "create";
inline constexpr std::string_view kOpeDelete = "delete";
inline constexpr std::string_view kAnnotationNodeHealthyStatus = "NodeHealthyStatus";
inline constexpr std::string_view kNodeUnHealthy = "UnHealthy";
inline constexpr std::string_view kEnvMindioWaitTime = "MINDIO_WAIT_MINDX_TIME";

// §11.1, §11.5 ConfigMaps.
inline constexpr std::string_view kResetConfigPrefix = "reset-config-";
inline constexpr std::string_view kResetJsonKey = "reset.json";
inline constexpr std::string_view kCheckCodeKey = "checkCode";
inline constexpr std::string_view kFaultJobInfoNamespace = "cluster-system";
inline constexpr std::string_view kFaultJobInfoName = "fault-job-info";
// The durable record of a job's recovery (beyond the original): one ConfigMap per job in the
// job's namespace, key kRecordKey.
inline constexpr std::string_view kRecordPrefix = "clusterd-recovery-";
inline constexpr std::string_view kRecordKey = "record.json";

// §8.1 health states.
inline constexpr std::string_view kHealthy = "Healthy";
inline constexpr std::string_view kSubHealthy = "SubHealthy";
inline constexpr std::string_view kUnHealthy = "UnHealthy";
inline constexpr std::string_view kLevelSubHealthFault = "SubHealthFault";

// §2.3 reply texts (the misspellings are on the wire).
inline constexpr std::string_view kInfoReceiveStopComplete = "ReportStopComplete";
inline constexpr std::string_view kInfoReceiveRecoverStrategy = "ReportRecoverStrategy";
inline constexpr std::string_view kInfoReceiveRecoverStatus = "ReportRecoverStatus";
inline constexpr std::string_view kInfoReceiveProcessFault = "receive ReportProcessFault";
inline constexpr std::string_view kInfoReplySuccess = "reply success";
inline constexpr std::string_view kInfoSwitchNicDistributed =
    "switching operation was successfully distributed";
inline constexpr std::string_view kInfoStressTestDistributed =
    "stress test operation was successfully distributed";

// §12-§13 OM messages.
inline constexpr std::string_view kOmSwitchNicFinish = "switch nic finish";
inline constexpr std::string_view kOmPauseTrainFailed = "om failed, pause train failed";
inline constexpr std::string_view kOmSwitchNicFailed = "switch nic failed, switch nic failed";
inline constexpr std::string_view kOmSwitchNicReportError =
    "switch nic failed, report error when switching nic";
inline constexpr std::string_view kOmSwitchNicTimeout =
    "switch nic failed, report switch nic timeout";
inline constexpr std::string_view kOmContinueTrainFailed =
    "switch nic failed, continue train failed";
inline constexpr std::string_view kOmContinueTrainTimeout =
    "switch nic failed, continue train timeout";
inline constexpr std::string_view kOmPauseTrainTimeout = "pause train timeout";
inline constexpr std::string_view kOmSendSignalFailed = "om failed, send signal failed";
inline constexpr std::string_view kOmSendSwitchNicSignalFailed =
    "send switch nic signal failed, please check manually";
inline constexpr std::string_view kOmReportSwitchNicTimeout =
    "report switch nic result timeout, please check manually";
inline constexpr std::string_view kOmSendStressTestSignalFailed =
    "send stress test signal failed, please check manually";
inline constexpr std::string_view kOmReportStressTestTimeout =
    "report stress test result timeout, please check manually";
inline constexpr std::string_view kOmStressTestFinishPrefix = "stress test finish, result:";
inline constexpr std::string_view kOmStressTestIsolatePrefix =
    "stress test find fault, isolate node:";
inline constexpr std::string_view kOmStressTestTimeoutFaultPrefix =
    "stress test timeout fault, faultRank:";
inline constexpr std::string_view kOmStressTestRecvFault = "recv fault, when stressing test";
inline constexpr std::string_view kOmStressTestTimeout =
    "stress test failed, report stress test timeout";

// §13 stress-test op codes and per-rank result codes.
inline constexpr int64_t kStressOpAic = 0;
inline constexpr int64_t kStressOpP2p = 1;
inline constexpr std::string_view kStressResultOk = "0";
inline constexpr std::string_view kStressResultExecFailed = "1";
inline constexpr std::string_view kStressResultFaultFound = "2";
inline constexpr std::string_view kStressResultTimeout = "3";
inline constexpr std::string_view kStressResultVoltageFailed = "4";

}  // namespace clusterd::recovery
