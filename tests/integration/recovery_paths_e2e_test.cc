// The recovery paths recovery_e2e_test.cc does not cover, end to end against a real clusterd
// (recovery-protocol.md §9.6-§9.7 platform mode and the rank-0 rule, §9.9 elastic training,
// §12 NIC switch, §13 stress test, §14 hot switch): the job's objects are written as files, the
// C++ TaskD-like client answers the signals, and the test plays the operator, the platform and
// the scheduler through the extra RPCs and the shared `dir` store.
#include "absl/strings/str_split.h"
#include "recovery_e2e_fixture.h"
#include "stream_reader.h"

namespace clusterd {
namespace recovery_paths_e2e_test {

using namespace e2e;  // NOLINT(build/namespaces): the fixture and its helpers

constexpr absl::Duration kRpc = absl::Seconds(10);

class RecoveryPathsE2eTest : public RecoveryE2eTest {
 protected:
  ::Recover::Stub& Stub() {
    if (stub_ == nullptr) stub_ = ::Recover::NewStub(client::MakeChannel(grpc_address_));
    return *stub_;
  }
  static void SetDeadline(grpc::ClientContext* ctx) {
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + kRpc));
  }
  // One unary Recover call; the wire Status (the call itself must succeed).
  template <typename Request, typename Method>
  ::Status Call(Method method, const Request& request) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    ::Status response;
    grpc::Status st = (Stub().*method)(&ctx, request, &response);
    EXPECT_TRUE(st.ok()) << st.error_code() << " " << st.error_message();
    return response;
  }
  ::Status SwitchNic(
      const std::string& job,
      const std::map<std::string, std::pair<std::vector<std::string>, std::vector<bool>>>& ops) {
    ::SwitchNics req;
    req.set_jobid(job);
    for (const auto& [node, devs_ops] : ops) {
      ::DeviceList& list = (*req.mutable_nicops())[node];
      for (const std::string& d : devs_ops.first) list.add_dev(d);
      for (bool op : devs_ops.second) list.add_op(op);
    }
    return Call(&::Recover::Stub::SwitchNicTrack, req);
  }
  ::Status StressTest(const std::string& job,
                      const std::map<std::string, std::vector<int64_t>>& per_node,
                      const std::vector<int64_t>& all_nodes = {}) {
    ::StressTestParam req;
    req.set_jobid(job);
    for (const auto& [node, ops] : per_node) {
      ::StressOpList& list = (*req.mutable_stressparam())[node];
      for (int64_t op : ops) list.add_ops(op);
    }
    for (int64_t op : all_nodes) req.add_allnodesops(op);
    return Call(&::Recover::Stub::StressTest, req);
  }
  // True once clusterd has opened the server stream `method` for someone (the stream's
  // producer is registered before the call is counted).
  bool StreamOpened(const std::string& method) {
    httplib::Client http("http://" + http_address_);
    auto res = http.Get("/metrics");
    if (!res || res->status != 200) return false;
    for (absl::string_view line : absl::StrSplit(res->body, '\n')) {
      if (absl::StartsWith(line, "clusterd_grpc_requests_total{") &&
          absl::StrContains(line, absl::StrCat("method=\"", method, "\"")) &&
          absl::StrContains(line, "code=\"OK\"")) {
        return true;
      }
    }
    return false;
  }
  // The controller's state as the HTTP view shows it (the durable record is absent in INIT).
  std::string ControllerState() {
    Json r = Recovery();
    return r.is_object() ? r.value("state", "") : "";
  }
  ::ClientInfo Info(const std::string& job) {
    ::ClientInfo info;
    info.set_jobid(job);
    info.set_role("taskd");
    return info;
  }
  // A refused server stream's status.
  template <typename Message, typename Open>
  grpc::Status Refusal(Open open) {
    testing::StreamReader<Message> reader(open);
    EXPECT_FALSE(reader.WaitFor([](const Message&) { return true; }).has_value());
    return reader.WaitDone();
  }

  std::unique_ptr<::Recover::Stub> stub_;
};

std::vector<bool> Ops(const ::SwitchRankList& l) { return {l.op().begin(), l.op().end()}; }

// ---- §12 NIC switch ----

// A valid SwitchNicTrack: pause (new uuid, [pause_train], timeout 0) -> StopComplete -> the ranks
// and ops on SubscribeNotifySwitch -> ReplySwitchNicResult(true) -> continue -> RecoverStatus 0
// -> "switch nic finish" for the operator, reset (the signal stream ends OK).
TEST_F(RecoveryPathsE2eTest, NicSwitchPausesSwitchesTheRanksAndContinues) {
  BEGIN_OR_SKIP("retry,recover,dump", AgentBehaviour{}, JobExtras{.super_pod_id = 0});
  AwaitSubscribed();
  testing::StreamReader<::SwitchRankList> notify(
      [&](grpc::ClientContext* ctx) { return Stub().SubscribeNotifySwitch(ctx, Info(kJob)); });
  ASSERT_TRUE(Eventually([&] { return StreamOpened("/Recover/SubscribeNotifySwitch"); },
                         absl::Seconds(10)));

  // node-b holds global ranks 8..15 (device i -> rank 8 + i).
  ::Status accepted = SwitchNic(kJob, {{"node-b", {{"3", "0"}, {true, false}}}});
  EXPECT_EQ(accepted.code(), 0);
  EXPECT_EQ(accepted.info(), "switching operation was successfully distributed");
  // The operator subscribes while the switch runs (§12: one message, then the end).
  testing::StreamReader<::SwitchNicResponse> om([&](grpc::ClientContext* ctx) {
    ::SwitchNicRequest req;
    req.set_jobid(kJob);
    return Stub().SubscribeSwitchNicSignal(ctx, req);
  });

  auto pause = Next(OfType("stopTrain"));
  ASSERT_TRUE(pause.has_value()) << "no pause";
  EXPECT_FALSE(pause->uuid().empty());
  EXPECT_EQ(pause->jobid(), kJob);
  EXPECT_EQ(Actions(*pause), std::vector<std::string>{"pause_train"});
  EXPECT_EQ(pause->timeout(), 0);
  EXPECT_TRUE(pause->faultranks().empty());
  EXPECT_TRUE(pause->noderankids().empty());
  EXPECT_EQ(pause->changestrategy(), "");

  auto ranks = notify.WaitFor([](const ::SwitchRankList&) { return true; }, nullptr, kStep);
  ASSERT_TRUE(ranks.has_value()) << "no SwitchRankList; record state " << RecordState();
  EXPECT_EQ(std::vector<std::string>(ranks->rankid().begin(), ranks->rankid().end()),
            (std::vector<std::string>{"11", "8"}));
  EXPECT_EQ(Ops(*ranks), (std::vector<bool>{true, false}));
  EXPECT_EQ(ranks->jobid(), kJob);
  ASSERT_TRUE(Eventually([&] { return RecordState() == "WaitSwitchNicFinishedState"; }))
      << RecordState();

  // A second request while the first runs: the state is not INIT (411).
  ::Status busy = SwitchNic(kJob, {{"node-b", {{"1"}, {true}}}});
  EXPECT_EQ(busy.code(), 411) << busy.info();

  ::SwitchResult result;
  result.set_jobid(kJob);
  result.set_result(true);
  ::Status replied = Call(&::Recover::Stub::ReplySwitchNicResult, result);
  EXPECT_EQ(replied.code(), 0);
  EXPECT_EQ(replied.info(), "reply success");

  auto cont = Next(Strategy("continue"));
  ASSERT_TRUE(cont.has_value()) << "no continue";
  EXPECT_EQ(cont->uuid(), pause->uuid());
  EXPECT_EQ(Actions(*cont), std::vector<std::string>{"change_strategy"});
  EXPECT_TRUE(cont->faultranks().empty());
  EXPECT_TRUE(cont->noderankids().empty());
  EXPECT_EQ(cont->extraparams(), "");

  auto finished = om.WaitFor([](const ::SwitchNicResponse&) { return true; }, nullptr, kStep);
  ASSERT_TRUE(finished.has_value()) << "no OM message for the operator";
  EXPECT_EQ(finished->jobid(), kJob);
  EXPECT_EQ(finished->msg(), "switch nic finish");
  EXPECT_TRUE(om.WaitDone().ok());
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_EQ(client_->stats().stream_ends_ok, 1);
  EXPECT_TRUE(Eventually([&] { return ControllerState() == "INIT"; })) << ControllerState();
  EXPECT_EQ(driver_->resumed_count(), 1);
  // Once the switch has ended no switch is recorded: a new operator subscription fails.
  grpc::Status late = Refusal<::SwitchNicResponse>([&](grpc::ClientContext* ctx) {
    ::SwitchNicRequest req;
    req.set_jobid(kJob);
    return Stub().SubscribeSwitchNicSignal(ctx, req);
  });
  EXPECT_EQ(late.error_code(), grpc::StatusCode::UNKNOWN);
}

// Requests failing the §12 checks get 413 and leave the job alone; the RPCs of an unregistered
// job are refused with the texts of §2.3 / §12.
TEST_F(RecoveryPathsE2eTest, NicSwitchRequestsFailingTheChecksAreRefused) {
  BEGIN_OR_SKIP("retry,recover,dump", AgentBehaviour{}, JobExtras{.super_pod_id = 0});
  AwaitSubscribed();
  struct Case {
    std::string what;
    std::string job;
    std::map<std::string, std::pair<std::vector<std::string>, std::vector<bool>>> ops;
  };
  const std::vector<Case> cases = {
      {"unknown job", "no-such-job", {{"node-b", {{"0"}, {true}}}}},
      {"no nicOps", kJob, {}},
      {"node not in the rank table", kJob, {{"node-z", {{"0"}, {true}}}}},
      {"dev and op lengths differ", kJob, {{"node-b", {{"0", "1"}, {true}}}}},
      {"empty dev and op", kJob, {{"node-b", {{}, {}}}}},
      {"device not in the rank table", kJob, {{"node-b", {{"9"}, {true}}}}},
  };
  for (const Case& c : cases) {
    ::Status st = SwitchNic(c.job, c.ops);
    EXPECT_EQ(st.code(), 413) << c.what << ": " << st.info();
    EXPECT_FALSE(st.info().empty()) << c.what;
  }
  EXPECT_EQ(ControllerState(), "INIT");
  EXPECT_TRUE(driver_->signals().empty());

  // Unregistered job: the reply 400, the notify stream refused.
  ::SwitchResult result;
  result.set_jobid("no-such-job");
  result.set_result(true);
  ::Status reply = Call(&::Recover::Stub::ReplySwitchNicResult, result);
  EXPECT_EQ(reply.code(), 400);
  EXPECT_EQ(reply.info(), "jobId=no-such-job not registed");
  grpc::Status notify = Refusal<::SwitchRankList>([&](grpc::ClientContext* ctx) {
    return Stub().SubscribeNotifySwitch(ctx, Info("no-such-job"));
  });
  EXPECT_EQ(notify.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(notify.error_message(), "jobId=no-such-job not registed, please wait agent register");
  // No switch recorded: the operator's subscription fails.
  grpc::Status om = Refusal<::SwitchNicResponse>([&](grpc::ClientContext* ctx) {
    ::SwitchNicRequest req;
    req.set_jobid(kJob);
    return Stub().SubscribeSwitchNicSignal(ctx, req);
  });
  EXPECT_EQ(om.error_code(), grpc::StatusCode::UNKNOWN);
}

// ReplySwitchNicResult(false): the operator hears "switch nic failed, switch nic failed" and the
// normal recovery flow starts with a stop (A_STOP, new uuid).
TEST_F(RecoveryPathsE2eTest, AFailedNicSwitchStartsTheNormalRecoveryFlow) {
  BEGIN_OR_SKIP("retry,recover,dump", AgentBehaviour{}, JobExtras{.super_pod_id = 0});
  AwaitSubscribed();
  testing::StreamReader<::SwitchRankList> notify(
      [&](grpc::ClientContext* ctx) { return Stub().SubscribeNotifySwitch(ctx, Info(kJob)); });
  ASSERT_TRUE(Eventually([&] { return StreamOpened("/Recover/SubscribeNotifySwitch"); },
                         absl::Seconds(10)));
  ASSERT_EQ(SwitchNic(kJob, {{"node-a", {{"0"}, {true}}}}).code(), 0);
  testing::StreamReader<::SwitchNicResponse> om([&](grpc::ClientContext* ctx) {
    ::SwitchNicRequest req;
    req.set_jobid(kJob);
    return Stub().SubscribeSwitchNicSignal(ctx, req);
  });
  auto pause = Next(OfType("stopTrain"));
  ASSERT_TRUE(pause.has_value());
  auto ranks = notify.WaitFor([](const ::SwitchRankList&) { return true; }, nullptr, kStep);
  ASSERT_TRUE(ranks.has_value());
  EXPECT_EQ(std::vector<std::string>(ranks->rankid().begin(), ranks->rankid().end()),
            std::vector<std::string>{"0"});
  ASSERT_TRUE(Eventually([&] { return RecordState() == "WaitSwitchNicFinishedState"; }))
      << RecordState();

  ::SwitchResult result;
  result.set_jobid(kJob);
  result.set_result(false);
  ::Status replied = Call(&::Recover::Stub::ReplySwitchNicResult, result);
  EXPECT_EQ(replied.code(), 0);
  EXPECT_EQ(replied.info(), "reply success");
  auto failed = om.WaitFor([](const ::SwitchNicResponse&) { return true; }, nullptr, kStep);
  ASSERT_TRUE(failed.has_value()) << "no OM message for the operator";
  EXPECT_EQ(failed->msg(), "switch nic failed, switch nic failed");
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value()) << "no stop after the failed switch; state " << RecordState();
  EXPECT_EQ(Actions(*stop), std::vector<std::string>{"stop_train"});
  EXPECT_FALSE(stop->uuid().empty());
  EXPECT_NE(stop->uuid(), pause->uuid());
  const auto signals = driver_->signals();
  EXPECT_EQ(std::count_if(signals.begin(), signals.end(), Strategy("continue")), 0);
}

// ---- §13 stress test ----

// StressTest: pause (timeout 900) -> StopComplete -> rank -> ops on SubscribeNotifyExecStressTest
// -> pauseStartAgent, reset ConfigMap notifyFaultFlushing -> ReplyStressTestResult (no fault) ->
// reset ConfigMap cleared, continueStartAgent, continue -> "stress test finish, result:<json>".
TEST_F(RecoveryPathsE2eTest, StressTestPausesRunsTheOpsAndReportsTheResult) {
  BEGIN_OR_SKIP("retry,recover,dump");
  AwaitSubscribed();
  testing::StreamReader<::StressTestRankParams> exec([&](grpc::ClientContext* ctx) {
    return Stub().SubscribeNotifyExecStressTest(ctx, Info(kJob));
  });
  ASSERT_TRUE(Eventually([&] { return StreamOpened("/Recover/SubscribeNotifyExecStressTest"); },
                         absl::Seconds(10)));

  ::Status accepted = StressTest(kJob, {{"node-b", {0, 1}}});
  EXPECT_EQ(accepted.code(), 0);
  EXPECT_EQ(accepted.info(), "stress test operation was successfully distributed");
  testing::StreamReader<::StressTestResponse> om([&](grpc::ClientContext* ctx) {
    ::StressTestRequest req;
    req.set_jobid(kJob);
    return Stub().SubscribeStressTestResponse(ctx, req);
  });

  auto pause = Next(OfType("stopTrain"));
  ASSERT_TRUE(pause.has_value()) << "no pause";
  EXPECT_FALSE(pause->uuid().empty());
  EXPECT_EQ(Actions(*pause), std::vector<std::string>{"pause_train"});
  EXPECT_EQ(pause->timeout(), 900);
  EXPECT_TRUE(pause->faultranks().empty());

  auto params = exec.WaitFor([](const ::StressTestRankParams&) { return true; }, nullptr, kStep);
  ASSERT_TRUE(params.has_value()) << "no StressTestRankParams; record state " << RecordState();
  EXPECT_EQ(params->jobid(), kJob);
  ASSERT_EQ(params->stressparam().size(), 8u);
  for (int rank = 8; rank <= 15; ++rank) {
    auto it = params->stressparam().find(std::to_string(rank));
    ASSERT_NE(it, params->stressparam().end()) << rank;
    EXPECT_EQ(std::vector<int64_t>(it->second.ops().begin(), it->second.ops().end()),
              (std::vector<int64_t>{0, 1}));
  }

  auto pause_agents = Next(OfType("pauseStartAgent"));
  ASSERT_TRUE(pause_agents.has_value()) << "no pauseStartAgent";
  EXPECT_EQ(Actions(*pause_agents), std::vector<std::string>{"pause_start_agent"});
  EXPECT_FALSE(pause_agents->uuid().empty());
  EXPECT_NE(pause_agents->uuid(), pause->uuid());
  EXPECT_TRUE(Eventually([&] { return ResetJson().value("FaultFlushing", false); }))
      << ResetJson().dump();
  ASSERT_TRUE(Eventually([&] { return RecordState() == "WaitStressTestFinishedState"; }))
      << RecordState();

  // A second operation while the test runs: 411.
  EXPECT_EQ(StressTest(kJob, {}, {0}).code(), 411);

  ::StressTestResult result;
  result.set_jobid(kJob);
  ::StressTestOpResult ok;
  ok.set_code("0");
  ok.set_result("pass");
  ::StressTestOpResult failed_to_run;  // "1": execution failed, no consequence (§13)
  failed_to_run.set_code("1");
  failed_to_run.set_result("exec failed");
  (*(*result.mutable_stressresult())["8"].mutable_rankresult())["aic"] = ok;
  (*(*result.mutable_stressresult())["9"].mutable_rankresult())["p2p"] = failed_to_run;
  ::Status replied = Call(&::Recover::Stub::ReplyStressTestResult, result);
  EXPECT_EQ(replied.code(), 0);
  EXPECT_EQ(replied.info(), "reply success");

  auto continue_agents = Next(OfType("continueStartAgent"));
  ASSERT_TRUE(continue_agents.has_value()) << "no continueStartAgent";
  EXPECT_EQ(Actions(*continue_agents), std::vector<std::string>{"continue_start_agent"});
  EXPECT_FALSE(continue_agents->uuid().empty());
  EXPECT_NE(continue_agents->uuid(), pause_agents->uuid());
  auto cont = Next(Strategy("continue"));
  ASSERT_TRUE(cont.has_value()) << "no continue";
  EXPECT_EQ(Actions(*cont), std::vector<std::string>{"change_strategy"});
  EXPECT_TRUE(cont->faultranks().empty());
  EXPECT_TRUE(cont->noderankids().empty());

  auto finished = om.WaitFor([](const ::StressTestResponse&) { return true; }, nullptr, kStep);
  ASSERT_TRUE(finished.has_value()) << "no result for the caller";
  EXPECT_EQ(finished->jobid(), kJob);
  EXPECT_EQ(finished->msg(),
            "stress test finish, result:"
            R"({"8":{"rankResult":{"aic":{"code":"0","result":"pass"}}},)"
            R"("9":{"rankResult":{"p2p":{"code":"1","result":"exec failed"}}}})");
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_EQ(client_->stats().stream_ends_ok, 1);
  Json cleared = ResetJson();
  EXPECT_EQ(cleared["FaultFlushing"], false);
  EXPECT_EQ(cleared["RankList"], Json::array());
  EXPECT_TRUE(Eventually([&] { return ControllerState() == "INIT"; })) << ControllerState();
}

// Requests failing the §13 checks get 413; an unregistered job's result reply gets 400.
TEST_F(RecoveryPathsE2eTest, StressTestRequestsFailingTheChecksAreRefused) {
  BEGIN_OR_SKIP("retry,recover,dump");
  AwaitSubscribed();
  struct Case {
    std::string what;
    std::string job;
    std::map<std::string, std::vector<int64_t>> per_node;
    std::vector<int64_t> all_nodes;
  };
  const std::vector<Case> cases = {
      {"unknown job", "no-such-job", {}, {0}},
      {"no ops at all", kJob, {}, {}},
      {"node not in the rank table", kJob, {{"node-z", {0}}}, {}},
      {"empty op list", kJob, {{"node-b", {}}}, {}},
      {"unknown op", kJob, {{"node-b", {2}}}, {}},
      {"duplicated op", kJob, {{"node-a", {0, 0}}}, {}},
      {"unknown op for all nodes", kJob, {}, {0, 7}},
  };
  for (const Case& c : cases) {
    ::Status st = StressTest(c.job, c.per_node, c.all_nodes);
    EXPECT_EQ(st.code(), 413) << c.what << ": " << st.info();
    EXPECT_FALSE(st.info().empty()) << c.what;
  }
  EXPECT_EQ(ControllerState(), "INIT");
  EXPECT_TRUE(driver_->signals().empty());

  ::StressTestResult result;
  result.set_jobid("no-such-job");
  ::Status reply = Call(&::Recover::Stub::ReplyStressTestResult, result);
  EXPECT_EQ(reply.code(), 400);
  EXPECT_EQ(reply.info(), "jobId=no-such-job not registed");
  grpc::Status exec = Refusal<::StressTestRankParams>([&](grpc::ClientContext* ctx) {
    return Stub().SubscribeNotifyExecStressTest(ctx, Info("no-such-job"));
  });
  EXPECT_EQ(exec.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(exec.error_message(), "jobId=no-such-job not registed, please wait agent register");
}

// A stress-test result with code "2" (fault found) on rank 8: the node is isolated (annotation
// NodeHealthyStatus=UnHealthy, §11.4), the caller hears "stress test find fault, isolate node:…",
// and a stop with all the node's ranks (type 1, new uuid) starts the normal recovery.
TEST_F(RecoveryPathsE2eTest, AStressTestFindingAFaultIsolatesTheNodeAndStopsTraining) {
  BEGIN_OR_SKIP("retry,recover,dump");
  AwaitSubscribed();
  testing::StreamReader<::StressTestRankParams> exec([&](grpc::ClientContext* ctx) {
    return Stub().SubscribeNotifyExecStressTest(ctx, Info(kJob));
  });
  ASSERT_TRUE(Eventually([&] { return StreamOpened("/Recover/SubscribeNotifyExecStressTest"); },
                         absl::Seconds(10)));
  ::Status accepted = StressTest(kJob, {}, {0});  // allNodesOps: every node of the rank table
  ASSERT_EQ(accepted.code(), 0) << accepted.info();
  testing::StreamReader<::StressTestResponse> om([&](grpc::ClientContext* ctx) {
    ::StressTestRequest req;
    req.set_jobid(kJob);
    return Stub().SubscribeStressTestResponse(ctx, req);
  });
  auto pause = Next(OfType("stopTrain"));
  ASSERT_TRUE(pause.has_value());
  auto params = exec.WaitFor([](const ::StressTestRankParams&) { return true; }, nullptr, kStep);
  ASSERT_TRUE(params.has_value());
  EXPECT_EQ(params->stressparam().size(), 16u);
  ASSERT_TRUE(Next(OfType("pauseStartAgent")).has_value());
  ASSERT_TRUE(Eventually([&] { return RecordState() == "WaitStressTestFinishedState"; }))
      << RecordState();

  ::StressTestResult result;
  result.set_jobid(kJob);
  ::StressTestOpResult found;
  found.set_code("2");
  found.set_result("aic fault");
  (*(*result.mutable_stressresult())["8"].mutable_rankresult())["aic"] = found;
  ::Status replied = Call(&::Recover::Stub::ReplyStressTestResult, result);
  EXPECT_EQ(replied.code(), 0);
  EXPECT_EQ(replied.info(), "reply success");

  auto message = om.WaitFor([](const ::StressTestResponse&) { return true; }, nullptr, kStep);
  ASSERT_TRUE(message.has_value()) << "no result for the caller";
  EXPECT_EQ(message->msg(), "stress test find fault, isolate node:[node-b]");
  ASSERT_TRUE(Next(OfType("continueStartAgent")).has_value());
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value()) << "no stop after the failed test; state " << RecordState();
  EXPECT_EQ(Actions(*stop), std::vector<std::string>{"stop_train"});
  EXPECT_NE(stop->uuid(), pause->uuid());
  EXPECT_EQ(Faults(*stop), PodFaults(8, 15));
  EXPECT_TRUE(Eventually([&] {
    auto node = Get("/api/v1/nodes/node-b");
    return node.has_value() &&
           (*node)["metadata"]["annotations"].value("NodeHealthyStatus", "") == "UnHealthy";
  }));
  auto node_a = Get("/api/v1/nodes/node-a");
  ASSERT_TRUE(node_a.has_value());
  EXPECT_FALSE((*node_a)["metadata"]["annotations"].contains("NodeHealthyStatus"));
  const auto signals = driver_->signals();
  EXPECT_EQ(std::count_if(signals.begin(), signals.end(), Strategy("continue")), 0);
}

// ---- §9.9 elastic training, §9.7 rank-0 rule ----

// A fault on pod 1 of a job configured for elastic training: downgrade (scale-in) -> 201 with the
// isolate ranks -> faultNodesExit -> scale-in success (ScaleRunningState); when the scheduler
// has replaced pod 1, upgrade (scale-out) -> success -> INIT.
TEST_F(RecoveryPathsE2eTest, ElasticTrainingScalesInThenOutWhenTheReplacementPodRuns) {
  BEGIN_OR_SKIP("elastic-training", AgentBehaviour{.supported_strategies = {"downgrade", "exit"}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value());
  auto global = Next(OfType("globalFault"));
  ASSERT_TRUE(global.has_value());
  EXPECT_EQ(Faults(*global), PodFaults(8, 15));

  auto down = Next(OfType("changeStrategy"));
  ASSERT_TRUE(down.has_value()) << "no decision";
  EXPECT_EQ(down->changestrategy(), "downgrade");
  EXPECT_EQ(down->uuid(), stop->uuid());
  EXPECT_EQ(Actions(*down), std::vector<std::string>{"change_strategy"});
  EXPECT_EQ(Faults(*down), PodFaults(8, 15));
  EXPECT_EQ(Sorted(down->noderankids()), std::vector<std::string>{"1"});
  EXPECT_EQ(down->extraparams(), R"({"scale-in-strategy": "DP"})");
  EXPECT_EQ(down->timeout(), 0);

  // The agent answered 201 with the isolate ranks (8..15); pod 1 is already in faultPod, so the
  // faultNodesExit names no further pod (§7.4 A_CHECK).
  auto exit_nodes = Next(OfType("faultNodesExit"));
  ASSERT_TRUE(exit_nodes.has_value()) << "no faultNodesExit; record state " << RecordState();
  EXPECT_EQ(exit_nodes->uuid(), stop->uuid());
  EXPECT_EQ(Actions(*exit_nodes), std::vector<std::string>{"fault_nodes_exit"});
  EXPECT_TRUE(exit_nodes->faultranks().empty());
  EXPECT_TRUE(exit_nodes->noderankids().empty());
  EXPECT_EQ(ReplyInfo("ReportRecoverStatus{code=201"),
            absl::StrCat("jobId=", kJob, ", uuid=", stop->uuid(), ", receive ReportRecoverStatus"));

  ASSERT_TRUE(Eventually([&] { return RecordState() == "ScaleRunningState"; })) << RecordState();
  EXPECT_EQ(driver_->phase(), TrainingPhase::kScaledIn);
  EXPECT_EQ(client_->stats().stream_ends, 0);  // training goes on at reduced size
  EXPECT_EQ(PodGroupAnnotation("ProcessRecoverStatus"), "");

  // The scheduler brings pod 1 back (new UID, NPUs bound).
  ReplacePod(1, "9c2e7d4f-0000-4000-8000-0000000000aa");
  auto up = Next(Strategy("upgrade"));
  ASSERT_TRUE(up.has_value()) << "no scale-out; record state " << RecordState();
  EXPECT_EQ(up->uuid(), stop->uuid());
  EXPECT_EQ(Actions(*up), std::vector<std::string>{"change_strategy"});
  EXPECT_EQ(Faults(*up), PodFaults(8, 15));
  EXPECT_EQ(Sorted(up->noderankids()), std::vector<std::string>{"1"});
  EXPECT_EQ(up->extraparams(), R"({"scale-out-strategy": "DP"})");

  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_EQ(client_->stats().stream_ends_ok, 1);
  EXPECT_TRUE(Eventually([&] { return ControllerState() == "INIT"; })) << ControllerState();
  EXPECT_EQ(driver_->strategies_run(), (std::vector<std::string>{"downgrade", "upgrade"}));
  EXPECT_EQ(driver_->phase(), TrainingPhase::kTraining);
}

// §9.7: the decision never scales in while pod rank 0 is faulty; with nothing else configured the
// job exits instead.
TEST_F(RecoveryPathsE2eTest, ElasticTrainingNeverScalesInWhenPodRankZeroIsFaulty) {
  BEGIN_OR_SKIP("elastic-training", AgentBehaviour{.supported_strategies = {"downgrade", "exit"}});
  AwaitSubscribed();
  ReportFault({{3, 1}});
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value());
  auto global = Next(OfType("globalFault"));
  ASSERT_TRUE(global.has_value());
  EXPECT_EQ(Faults(*global), PodFaults(0, 7));
  EXPECT_EQ(Sorted(global->noderankids()), std::vector<std::string>{"0"});
  auto decided = Next(OfType("changeStrategy"));
  ASSERT_TRUE(decided.has_value());
  EXPECT_EQ(decided->changestrategy(), "exit");
  EXPECT_EQ(decided->uuid(), stop->uuid());
  EXPECT_EQ(decided->extraparams(), "");
  EXPECT_EQ(Faults(*decided), PodFaults(0, 7));
  EXPECT_EQ(Sorted(decided->noderankids()), std::vector<std::string>{"0"});
  const auto signals = driver_->signals();
  EXPECT_EQ(std::count_if(signals.begin(), signals.end(), Strategy("downgrade")), 0);
}

// ---- §9.6 platform mode ----

// ProcessRecoverStrategy present at Init: platform mode. The cycle waits for the platform's
// strategy, writes ProcessConfirmFault, merges the platform's ProcessResultFault, waits for
// RankTableReady before `recover`, and writes ProcessRecoverStatus.
TEST_F(RecoveryPathsE2eTest, PlatformModeCycleIsDrivenByThePodGroupAnnotations) {
  BEGIN_OR_SKIP("retry,recover,dump", AgentBehaviour{},
                JobExtras{.pod_group_annotations = {{"ProcessRecoverStrategy", ""}}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  // A_FLUSH waits for the platform's strategy: nothing is sent meanwhile.
  ASSERT_TRUE(Eventually([&] { return RecordState() == "NotifyWaitFaultFlushingState"; }))
      << RecordState();
  EXPECT_TRUE(driver_->signals().empty());

  PatchPodGroupAnnotations({{"ProcessRecoverStrategy", "recover"}});
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value()) << "no stop after the platform chose; state " << RecordState();
  EXPECT_EQ(Faults(*stop), (FaultSet{{"10", "1"}}));

  // The confirm/result exchange: the server writes the faults, the platform answers.
  ASSERT_TRUE(Eventually([&] { return PodGroupAnnotation("ProcessConfirmFault") == "10:1"; }))
      << "ProcessConfirmFault=" << PodGroupAnnotation("ProcessConfirmFault") << ", state "
      << RecordState();
  EXPECT_TRUE(driver_->signals().size() == 1u) << "globalFault before the platform's result";
  // The platform adds rank 3 (pod 0); the malformed item is skipped.
  PatchPodGroupAnnotations({{"ProcessResultFault", "3:1,garbage"}});

  auto global = Next(OfType("globalFault"));
  ASSERT_TRUE(global.has_value()) << "no globalFault; state " << RecordState();
  EXPECT_EQ(global->uuid(), stop->uuid());
  EXPECT_EQ(Actions(*global), (std::vector<std::string>{"on_global_rank", "fault_nodes_exit"}));
  EXPECT_EQ(Faults(*global), PodFaults(0, 15));
  EXPECT_EQ(Sorted(global->noderankids()), (std::vector<std::string>{"0", "1"}));

  // `recover` waits for RankTableReady=true.
  ASSERT_TRUE(Eventually([&] { return RecordState() == "NotifyDecidedStrategyState"; }))
      << RecordState();
  const auto before = driver_->signals();
  EXPECT_EQ(std::count_if(before.begin(), before.end(), OfType("changeStrategy")), 0);
  PatchPodGroupAnnotations({{"RankTableReady", "true"}});
  auto decided = Next(OfType("changeStrategy"));
  ASSERT_TRUE(decided.has_value()) << "no decision after RankTableReady; state " << RecordState();
  EXPECT_EQ(decided->changestrategy(), "recover");
  EXPECT_EQ(decided->uuid(), stop->uuid());
  EXPECT_EQ(Faults(*decided), PodFaults(0, 15));
  EXPECT_EQ(Sorted(decided->noderankids()), (std::vector<std::string>{"0", "1"}));

  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_TRUE(
      Eventually([&] { return PodGroupAnnotation("ProcessRecoverStatus") == "recover-success"; }));
  // The server never clears ProcessConfirmFault: that is the platform's job.
  EXPECT_EQ(PodGroupAnnotation("ProcessConfirmFault"), "10:1");
  EXPECT_EQ(driver_->strategies_run(), std::vector<std::string>{"recover"});
}

// §9.6: ProcessConfirmFault left non-empty by the platform makes the exchange fail
// (writeConfirmFaultOrWaitResultFaultTimeout): no globalFault; the job is handed to the
// scheduler (A_FAULT_RETRY: label pause, clean-up exit, label back on) and the cycle ends.
TEST_F(RecoveryPathsE2eTest, PlatformModeWithAnUnclearedConfirmFaultHandsTheJobToTheScheduler) {
  BEGIN_OR_SKIP("retry,recover,dump", AgentBehaviour{},
                JobExtras{.pod_group_annotations = {{"ProcessRecoverStrategy", "recover"},
                                                    {"ProcessConfirmFault", "1:1"}}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value());
  auto label = [&] {
    auto pg = PodGroup();
    return pg.has_value() ? (*pg)["metadata"]["labels"].value("process-recover-enable", "") : "";
  };
  EXPECT_TRUE(Eventually([&] { return label() == "pause"; })) << "state " << RecordState();
  auto exit = Next(Strategy("exit"));
  ASSERT_TRUE(exit.has_value()) << "no clean-up exit; state " << RecordState();
  EXPECT_EQ(exit->uuid(), stop->uuid());
  EXPECT_EQ(exit->extraparams(), "dump_exit");
  EXPECT_EQ(Actions(*exit), std::vector<std::string>{"change_strategy"});
  EXPECT_TRUE(exit->faultranks().empty());
  EXPECT_EQ(Sorted(exit->noderankids()), std::vector<std::string>{"1"});
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_EQ(label(), "on");
  EXPECT_EQ(PodGroupAnnotation("ProcessConfirmFault"), "1:1");  // never overwritten or cleared
  const auto signals = driver_->signals();
  EXPECT_EQ(std::count_if(signals.begin(), signals.end(), OfType("globalFault")), 0);
}

// ---- §14 hot switch ----

// A sub-health fault on pod 1 of a job with subHealthyStrategy=hotSwitch: hot-switch
// [hot switch] with the pod's ranks -> the faulty pod is annotated for the operator -> the backup
// pod runs -> [new pod running] -> MindIO's pause result (migration) -> the old pod is marked for
// deletion -> once it is deleted, changeStrategy migration -> RecoverStatus 0 -> success clean-up.
TEST_F(RecoveryPathsE2eTest, HotSwitchMigratesASubHealthyPodToItsBackup) {
  BEGIN_OR_SKIP(
      "retry,recover,dump", AgentBehaviour{},
      JobExtras{.pod_group_labels = {{"subHealthyStrategy", "hotSwitch"}}, .ready_nodes = true});
  AwaitSubscribed();
  // The device plugin reports a sub-health fault on NPU 2 of node-b (global rank 10).
  cluster::testing::NodeSpec node;
  node.node = "node-b";
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  model::DeviceFault fault;
  fault.fault_type = "CardUnhealthy";
  fault.npu_name = "Ascend910-2";
  fault.large_model_fault_level = "SubHealthFault";
  fault.fault_level = "SubHealthFault";
  fault.fault_handling = "SubHealthFault";
  fault.fault_code = "80CB8009";
  fault.fault_time_and_level_map["80CB8009"] = {now_ms, "SubHealthFault"};
  node.faults = {fault};
  node.update_time = now_ms / 1000;
  WriteObject("configmaps", cluster::testing::DeviceInfoConfigMap(node));

  auto prepare = Next(OfType("hot-switch"));
  ASSERT_TRUE(prepare.has_value())
      << "no hot switch; controller " << Recovery().dump() << "\nfaults "
      << Get("/api/clusterd/v1/faults").value_or(Json()).dump();
  EXPECT_EQ(prepare->uuid(), "");  // outside a stop cycle (§14)
  EXPECT_EQ(Actions(*prepare), std::vector<std::string>{"hot switch"});
  EXPECT_EQ(Faults(*prepare), PodFaults(8, 15));
  EXPECT_TRUE(prepare->noderankids().empty());
  EXPECT_EQ(prepare->changestrategy(), "");
  const std::string old_pod = ExamplePod(1).name;
  auto pod_annotation = [&](const std::string& name, const std::string& key) -> std::string {
    auto pod = Get(absl::StrCat("/api/v1/namespaces/", kNs, "/pods/", name));
    if (!pod.has_value()) return "";
    return (*pod)["metadata"]["annotations"].value(key, "");
  };
  ASSERT_TRUE(Eventually([&] {
    return pod_annotation(old_pod, "inHotSwitchFlow") == "true" &&
           pod_annotation(old_pod, "needOperatorOpe") == "create";
  })) << "faulty pod not annotated; state "
      << ControllerState();
  EXPECT_EQ(ControllerState(), "WaitNewPodState");

  // The operator creates the backup pod; it runs.
  const std::string backup = old_pod + "-backup";
  {
    PodSpec p = ExamplePod(1);
    p.name = backup;
    p.uid = "9c2e7d4f-0000-4000-8000-0000000000bb";
    p.node = "node-a";
    p.master_addr_env = "192.168.0.11";
    p.extra_annotations.push_back({"scheduling.k8s.io/group-name", kPodGroup});
    p.extra_annotations.push_back({"podType", "backup"});
    p.labels.push_back({"job-name", "pt-2x8"});
    absl::StatusOr<store::Object> created = Store().Create(store::kPods, PodObject(p));
    ASSERT_TRUE(created.ok()) << created.status();
    absl::StatusOr<store::Object> named =
        Store().Patch(store::ObjectKey{std::string(store::kPods), kNs, old_pod},
                      Json{{"metadata", {{"annotations", {{"backupNewPodName", backup}}}}}});
    ASSERT_TRUE(named.ok()) << named.status();
  }
  auto running = Next(OfType("hot-switch"));
  ASSERT_TRUE(running.has_value()) << "no [new pod running]; state " << ControllerState();
  EXPECT_EQ(running->uuid(), "");
  EXPECT_EQ(Actions(*running), std::vector<std::string>{"new pod running"});
  EXPECT_TRUE(running->faultranks().empty());

  // MindIO paused and answered "migration": the old pod is handed to Volcano.
  ASSERT_TRUE(Eventually([&] {
    auto pod = Get(absl::StrCat("/api/v1/namespaces/", kNs, "/pods/", old_pod));
    return pod.has_value() &&
           (*pod)["metadata"]["annotations"].value("needVolcanoOpe", "") == "delete" &&
           (*pod)["metadata"]["labels"].value("fault-type", "") == "SubHealth";
  })) << "old pod not marked; state "
      << ControllerState();
  EXPECT_EQ(ControllerState(), "WaitOldPodDeletedState");
  const auto before = driver_->signals();
  EXPECT_EQ(std::count_if(before.begin(), before.end(), Strategy("migration")), 0);

  // Volcano deletes it: migration.
  ASSERT_TRUE(Store().Delete(store::ObjectKey{std::string(store::kPods), kNs, old_pod}).ok());
  auto migration = Next(Strategy("migration"));
  ASSERT_TRUE(migration.has_value()) << "no migration; state " << ControllerState();
  EXPECT_EQ(migration->uuid(), "");
  EXPECT_EQ(Actions(*migration), std::vector<std::string>{"change_strategy"});
  EXPECT_TRUE(migration->faultranks().empty());
  EXPECT_TRUE(migration->noderankids().empty());
  EXPECT_EQ(migration->extraparams(), "");

  // RecoverStatus 0: success clean-up (the backup pod leaves the flow), reset.
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_EQ(client_->stats().stream_ends_ok, 1);
  EXPECT_TRUE(Eventually([&] {
    auto pod = Get(absl::StrCat("/api/v1/namespaces/", kNs, "/pods/", backup));
    return pod.has_value() && !(*pod)["metadata"]["annotations"].contains("inHotSwitchFlow");
  }));
  EXPECT_EQ(driver_->strategies_run(), std::vector<std::string>{"migration"});
}

// §9.8: a job restarting in place whose agent can then only dump: every fault pod must exit and
// is reported to the fault centre as not retryable, so the RestartBusiness fault RecoverInPlace
// hid until then is published in cluster-info with its own level.
TEST_F(RecoveryPathsE2eTest, PodsReportedNotRetryableHaveTheirFaultPublished) {
  AgentBehaviour behaviour;
  behaviour.supported_strategies = {"dump", "exit"};
  BEGIN_OR_SKIP("recover-in-place,recover,dump", behaviour, {.ready_nodes = true});
  AwaitSubscribed();
  // A RestartBusiness chip fault on node-b's NPU 3 (rank 11, pod 1): restartable in place.
  cluster::testing::NodeSpec spec;
  spec.node = "node-b";
  spec.faults = {cluster::testing::ChipFault("Ascend910-3", "RestartBusiness",
                                             {{"80E18005", absl::ToUnixMillis(absl::Now())}})};
  spec.unhealthy = {"Ascend910-3"};
  WriteObject("configmaps", cluster::testing::DeviceInfoConfigMap(spec));
  auto device_info = [&] {
    auto cm = Get("/api/v1/namespaces/mindx-dl/configmaps/cluster-info-device-0");
    return cm.has_value() ? (*cm)["data"].dump() : std::string();
  };
  // The fault reaches the controller (pre-exit of pod 1), hidden from cluster-info meanwhile.
  ASSERT_TRUE(Next(OfType("preExitProcess")).has_value());
  EXPECT_EQ(device_info().find("80E18005"), std::string::npos) << device_info();
  // The cycle: stop, global fault, the in-place wait, then dump (the only strategy left).
  ASSERT_TRUE(Next(OfType("stopTrain")).has_value());
  ASSERT_TRUE(Next(OfType("globalFault")).has_value());
  ASSERT_TRUE(Next([](const ::ProcessManageSignal& s) {
                return s.signaltype() == "saveAndExit" || s.signaltype() == "changeStrategy";
              }).has_value());
  EXPECT_TRUE(Eventually([&] { return device_info().find("80E18005") != std::string::npos; }))
      << device_info();
  EXPECT_NE(device_info().find("RestartBusiness"), std::string::npos);
  // Published because of the report, not because the fault grew too old to restart in place.
  std::ifstream log(LogPath(1));
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("pods reported not retryable"), std::string::npos);
}

}  // namespace recovery_paths_e2e_test
}  // namespace clusterd
