// The recovery protocol end to end (recovery-protocol.md §2.3, §4, §5, §9, §11, §15): a real
// clusterd on the `dir` store, the job's objects written as files (as the operator and the
// scheduler would), and the C++ TaskD-like client (src/client/recover_client.h) driven by a
// ScriptedTrainingAgent answering the signals. One test per strategy, fallback steps, the §15
// sequence, and a SIGKILL of clusterd in the middle of a cycle.
#include <atomic>

#include "recovery_e2e_fixture.h"

namespace clusterd {
namespace recovery_e2e_test {

using namespace e2e;  // NOLINT(build/namespaces): the fixture and its helpers

// §15 verbatim: a non-UCE fault on global rank 10 (pod 1), process-level rescheduling.
TEST_F(RecoveryE2eTest, Section15ProcessLevelReschedulingHappyPath) {
  BEGIN_OR_SKIP("retry,recover,dump");
  AwaitSubscribed();
  // Steps 1-3 happened in the client loop: Init, Register (label on), Subscribe.
  auto pg = PodGroup();
  ASSERT_TRUE(pg.has_value());
  EXPECT_EQ((*pg)["metadata"]["labels"].value("process-recover-enable", ""), "on");
  absl::StatusOr<::Status> init = client_->Init();
  ASSERT_TRUE(init.ok());
  EXPECT_EQ(init->code(), 0);
  EXPECT_EQ(init->info(), absl::StrCat("job(uid=", kJob, ") init success"));

  // Step 5: MindIO reports the lost rank.
  ReportFault({{10, 1}});

  // §8.2 step 2: pod 1 was not in faultPod yet, so it is labelled as a software fault.
  EXPECT_TRUE(Eventually([&] {
    auto pod = Get(absl::StrCat("/api/v1/namespaces/", kNs, "/pods/pt-2x8-worker-0"));
    return pod.has_value() && (*pod)["metadata"]["labels"].value("fault-type", "") == "software";
  }));

  // Step 6: reset ConfigMap notifyFaultFlushing, then stopTrain with a new uuid.
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value()) << "no stopTrain";
  const std::string u1 = stop->uuid();
  EXPECT_FALSE(u1.empty());
  EXPECT_EQ(stop->jobid(), kJob);
  EXPECT_EQ(Actions(*stop), std::vector<std::string>{"stop_train"});
  EXPECT_EQ(Faults(*stop), (FaultSet{{"10", "1"}}));
  EXPECT_EQ(stop->changestrategy(), "");
  EXPECT_EQ(stop->timeout(), 0);
  Json flushing = ResetJson();
  EXPECT_EQ(flushing["RankList"], Json::array());
  EXPECT_EQ(flushing["FaultFlushing"], true);
  EXPECT_EQ(flushing["RetryTime"], 0);
  EXPECT_EQ(flushing["GracefulExit"], 0);
  EXPECT_EQ(flushing["RestartFaultProcess"], false);

  // Step 8: rank 10 expanded to its pod; reset ConfigMap `fault`; globalFault.
  auto global = Next(OfType("globalFault"));
  ASSERT_TRUE(global.has_value()) << "no globalFault";
  EXPECT_EQ(global->uuid(), u1);
  EXPECT_EQ(Actions(*global), (std::vector<std::string>{"on_global_rank", "fault_nodes_exit"}));
  EXPECT_EQ(Faults(*global), PodFaults(8, 15));
  EXPECT_EQ(Sorted(global->noderankids()), std::vector<std::string>{"1"});
  EXPECT_EQ(global->timeout(), 0);
  Json fault = ResetJson();
  ASSERT_EQ(fault["RankList"].size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const Json& e = fault["RankList"][i];
    EXPECT_EQ(e["RankId"].get<int>() / 8, 1) << e.dump();
    EXPECT_EQ(e["Status"], "fault");
    EXPECT_EQ(e["LogicId"], 0);
    EXPECT_EQ(e["Policy"], "");
    EXPECT_TRUE(e["ErrorCode"].is_null());
  }
  EXPECT_EQ(fault["FaultFlushing"], false);
  EXPECT_EQ(fault["RestartFaultProcess"], false);
  EXPECT_EQ(ReplyInfo("ReportStopComplete"),
            absl::StrCat("jobId=", kJob, ", uuid=", u1, ", receive ReportStopComplete"));

  // Step 10: the decision is recover.
  auto decided = Next(OfType("changeStrategy"));
  ASSERT_TRUE(decided.has_value()) << "no changeStrategy";
  EXPECT_EQ(decided->uuid(), u1);
  EXPECT_EQ(decided->changestrategy(), "recover");
  EXPECT_EQ(Actions(*decided), std::vector<std::string>{"change_strategy"});
  EXPECT_EQ(Faults(*decided), PodFaults(8, 15));
  EXPECT_EQ(Sorted(decided->noderankids()), std::vector<std::string>{"1"});  // not replaced
  EXPECT_EQ(decided->extraparams(), "");
  EXPECT_EQ(ReplyInfo("ReportRecoverStrategy"),
            absl::StrCat("jobId=", kJob, ", uuid=", u1, ", receive ReportRecoverStrategy"));

  // Step 12: RecoverStatus 0 -> recover-success, reset, the stream ends OK.
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_EQ(client_->stats().stream_ends_ok, 1);
  EXPECT_EQ(ReplyInfo("ReportRecoverStatus"),
            absl::StrCat("jobId=", kJob, ", uuid=", u1, ", receive ReportRecoverStatus"));
  EXPECT_TRUE(
      Eventually([&] { return PodGroupAnnotation("ProcessRecoverStatus") == "recover-success"; }));
  EXPECT_TRUE(Eventually([&] {
    Json cleared = ResetJson();
    return cleared["RankList"] == Json::array() && cleared["FaultFlushing"] == false;
  }));
  EXPECT_TRUE(driver_->WaitUntil(
      [](const auto& d) { return d.phase() == TrainingPhase::kTraining; }, absl::Seconds(5)));
  EXPECT_EQ(driver_->resumed_count(), 1);

  // Step 13: the client reconnects (Init and Register answer 0 again).
  EXPECT_TRUE(Eventually([&] { return client_->stats().subscribes >= 2; }, absl::Seconds(20)));
  absl::StatusOr<::Status> reg = client_->Register();
  ASSERT_TRUE(reg.ok());
  EXPECT_EQ(reg->code(), 0);
  EXPECT_EQ(reg->info(), "register success");
  EXPECT_EQ(client_->stats().duplicates_suppressed, 0);
}

// Online recovery (retry) after a UCE reported by the client (type 0, §15 variant).
TEST_F(RecoveryE2eTest, RetryAfterAUceReportedWithReportProcessFault) {
  BEGIN_OR_SKIP("retry,recover,dump");
  AwaitSubscribed();
  ReportFault({{3, 0}});
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value()) << "no stopTrain: the retry report must come back from the fault "
                                   "centre as a doStepRetry fault (§8.3)";
  EXPECT_EQ(Faults(*stop), (FaultSet{{"3", "0"}}));
  auto global = Next(OfType("globalFault"));
  ASSERT_TRUE(global.has_value());
  EXPECT_EQ(global->uuid(), stop->uuid());
  EXPECT_EQ(Actions(*global), std::vector<std::string>{"on_global_rank"});
  EXPECT_EQ(Faults(*global), (FaultSet{{"3", "0"}}));
  EXPECT_EQ(global->timeout(), 0);
  auto retry = Next(OfType("changeStrategy"));
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->changestrategy(), "retry");
  EXPECT_EQ(Faults(*retry), (FaultSet{{"3", "0"}}));
  EXPECT_EQ(Sorted(retry->noderankids()), std::vector<std::string>{"0"});
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_TRUE(
      Eventually([&] { return PodGroupAnnotation("ProcessRecoverStatus") == "retry-success"; }));
  EXPECT_EQ(driver_->resumed_count(), 1);
  EXPECT_EQ(driver_->strategies_run(), std::vector<std::string>{"retry"});
}

// recover-in-place: a software fault is restartable in place, so only the faulty processes of
// pod 1 restart (§9.8).
TEST_F(RecoveryE2eTest, RecoverInPlaceRestartsOnlyTheFaultyProcesses) {
  BEGIN_OR_SKIP("recover-in-place,recover");
  AwaitSubscribed();
  ReportFault({{10, 1}});
  ASSERT_TRUE(Next(OfType("stopTrain")).has_value());
  ASSERT_TRUE(Next(OfType("globalFault")).has_value());
  auto decided = Next(OfType("changeStrategy"));
  ASSERT_TRUE(decided.has_value());
  EXPECT_EQ(decided->changestrategy(), "recover");
  EXPECT_EQ(decided->extraparams(), "recover-in-place");
  EXPECT_EQ(Actions(*decided),
            (std::vector<std::string>{"change_strategy", "fault_nodes_restart"}));
  EXPECT_EQ(Sorted(decided->noderankids()), std::vector<std::string>{"1"});
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_TRUE(
      Eventually([&] { return PodGroupAnnotation("ProcessRecoverStatus") == "recover-success"; }));
  EXPECT_EQ(driver_->resumed_count(), 1);
}

// dump-only job (first configured strategy is dump): an unhealthy fault dumps at once (§9.3
// "dump on fault", §7.4 A_DUMP), then the clean-up exit follows (§9.10).
TEST_F(RecoveryE2eTest, DumpOnFaultSavesACheckpointThenExits) {
  BEGIN_OR_SKIP("dump");
  AwaitSubscribed();
  ReportFault({{10, 1}});
  auto dump = Next(OfType("saveAndExit"));
  ASSERT_TRUE(dump.has_value()) << "no saveAndExit";
  EXPECT_FALSE(dump->uuid().empty());
  EXPECT_EQ(Actions(*dump), std::vector<std::string>{"save_and_exit"});
  EXPECT_TRUE(dump->faultranks().empty());
  EXPECT_EQ(Sorted(dump->noderankids()), std::vector<std::string>{"1"});
  auto exit = Next(Strategy("exit"));
  ASSERT_TRUE(exit.has_value()) << "no clean-up exit";
  EXPECT_EQ(exit->uuid(), dump->uuid());
  EXPECT_EQ(exit->extraparams(), "dump_exit");
  EXPECT_EQ(Sorted(exit->noderankids()), std::vector<std::string>{"1"});
  EXPECT_TRUE(
      Eventually([&] { return PodGroupAnnotation("ProcessRecoverStatus") == "dump-success"; }));
  EXPECT_EQ(driver_->phase(), TrainingPhase::kExiting);
}

// exit: the job supports nothing else, so its faulty pod exits and every other agent restarts
// its workers (reset ConfigMap RetryTime + 1 after ListenSchedule, §7.4 A_RESTART_ALL).
// `retry` is configured, but a normal fault is not retried (§9.4).
TEST_F(RecoveryE2eTest, ExitWhenTheJobSupportsNoOtherStrategy) {
  BEGIN_OR_SKIP("retry", AgentBehaviour{.supported_strategies = {"exit"}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  ASSERT_TRUE(Next(OfType("stopTrain")).has_value());
  ASSERT_TRUE(Next(OfType("globalFault")).has_value());
  auto exit = Next(OfType("changeStrategy"));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->changestrategy(), "exit");
  EXPECT_EQ(exit->extraparams(), "");
  EXPECT_EQ(Actions(*exit), std::vector<std::string>{"change_strategy"});
  EXPECT_EQ(Faults(*exit), PodFaults(8, 15));
  EXPECT_EQ(Sorted(exit->noderankids()), std::vector<std::string>{"1"});
  EXPECT_EQ(driver_->phase(), TrainingPhase::kExiting);
  // ListenSchedule (20 s; the job is running) then restartAllProcess.
  EXPECT_TRUE(Eventually([&] { return ResetJson().value("RetryTime", 0) == 1; }, absl::Seconds(45)))
      << "record state: " << RecordState() << ", reset.json: " << ResetJson().dump();
}

// The same exit with `recover` configured: the schedule watcher ran during the cycle. Its 5 s
// check was parked in the executor's work queue when ListenSchedule armed its 20 s deadline.
TEST_F(RecoveryE2eTest, ExitAfterTheScheduleWatcherRanStillRestartsAllProcesses) {
  BEGIN_OR_SKIP("recover", AgentBehaviour{.supported_strategies = {"exit"}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  auto exit = Next(OfType("changeStrategy"));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->changestrategy(), "exit");
  // The schedule watcher's checks and the ListenSchedule deadline are timers of one job; each
  // must fire (each reconcile of the job asks to be woken at its next one: RequeueAfter).
  EXPECT_TRUE(Eventually([&] { return ResetJson().value("RetryTime", 0) == 1; }, absl::Seconds(45)))
      << "controller: "
      << Get(absl::StrCat("/api/clusterd/v1/recovery/", kJob)).value_or(Json()).dump();
}

// Fallback: recover fails (non-zero RecoverStatus) -> dump (same cycle, new changeStrategy) ->
// clean-up exit (§9.5, §9.10).
TEST_F(RecoveryE2eTest, AFailedRecoverFallsBackToDumpThenExit) {
  BEGIN_OR_SKIP("recover,dump", AgentBehaviour{.status_codes = {{"recover", {1}}}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  auto recover = Next(Strategy("recover"));
  ASSERT_TRUE(recover.has_value());
  auto dump = Next(Strategy("dump"));
  ASSERT_TRUE(dump.has_value()) << "no fallback to dump";
  EXPECT_EQ(dump->uuid(), recover->uuid());
  EXPECT_EQ(Faults(*dump), PodFaults(8, 15));
  auto exit = Next(Strategy("exit"));
  ASSERT_TRUE(exit.has_value()) << "no clean-up exit";
  EXPECT_EQ(exit->extraparams(), "dump_exit");
  EXPECT_TRUE(
      Eventually([&] { return PodGroupAnnotation("ProcessRecoverStatus") == "dump-success"; }));
  EXPECT_EQ(driver_->strategies_run(), (std::vector<std::string>{"recover", "dump", "exit"}));
}

// Fallback: the processes cannot be stopped (StopComplete 404) -> killMaster, job-level
// rescheduling by the client (§4.2, §9.10).
TEST_F(RecoveryE2eTest, ProcessNotReadyKillsTheJob) {
  BEGIN_OR_SKIP("recover", AgentBehaviour{.stop_complete_code = 404});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value());
  auto kill = Next(OfType("killMaster"));
  ASSERT_TRUE(kill.has_value()) << "no killMaster";
  EXPECT_EQ(kill->uuid(), stop->uuid());
  EXPECT_TRUE(kill->actions().empty());
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_EQ(driver_->kill_count(), 1);
}

// The client never answers a stop: 15 min would pass; instead check that a second client
// Subscribe (reconnect) mid-cycle resets the controller, which ends the stream (§2.3, quirk 2).
TEST_F(RecoveryE2eTest, AReconnectMidCycleOnALiveServerResetsTheCycle) {
  BEGIN_OR_SKIP("recover", AgentBehaviour{.never_answer = {"stopTrain"}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  ASSERT_TRUE(Next(OfType("stopTrain")).has_value());
  ASSERT_TRUE(Eventually([&] { return RecordState() == "WaitReportStopCompleteState"; }))
      << RecordState();
  // A second subscriber (the same job) takes over; the first stream ends.
  auto stub = ::Recover::NewStub(client::MakeChannel(grpc_address_));
  grpc::ClientContext ctx;
  ::ClientInfo req;
  req.set_jobid(kJob);
  req.set_role("taskd");
  auto second = stub->SubscribeProcessManageSignal(&ctx, req);
  ASSERT_TRUE(client_->WaitStreamEnds(1, kStep));
  EXPECT_TRUE(Eventually([&] {
    Json reset = ResetJson();
    return reset["FaultFlushing"] == false && reset["RankList"] == Json::array();
  }));
  ctx.TryCancel();
  (void)second->Finish();
}

// SIGKILL while the controller waits for StopComplete: the restarted clusterd resumes the cycle
// from clusterd-recovery-<jobId> when the client comes back and asks for the report once more
// (stopTrain, same uuid), which this client drops as a duplicate, as the TaskD manager does;
// the report sent after the restart continues the cycle, and no signal is acted on twice.
TEST_F(RecoveryE2eTest, SigkillWhileWaitingForStopCompleteResumesTheCycle) {
  BEGIN_OR_SKIP("retry,recover,dump", AgentBehaviour{.never_answer = {"stopTrain"}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value());
  ASSERT_TRUE(Eventually([&] { return RecordState() == "WaitReportStopCompleteState"; }))
      << "record state: " << RecordState();

  KillAndRestart();
  driver_->SetBehaviour({});
  EXPECT_EQ(RecordState(), "WaitReportStopCompleteState");
  ASSERT_TRUE(Eventually([&] { return client_->stats().subscribes >= 2; }, absl::Seconds(30)))
      << client_->stats().last_error;
  // MindIO finished stopping while clusterd was away: the report goes to the new process.
  absl::StatusOr<::Status> st = client_->ReportStopComplete(0, "stopped");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->code(), 0);
  EXPECT_EQ(st->info(),
            absl::StrCat("jobId=", kJob, ", uuid=", stop->uuid(), ", receive ReportStopComplete"));

  auto global = Next(OfType("globalFault"));
  ASSERT_TRUE(global.has_value()) << "the cycle did not resume";
  EXPECT_EQ(global->uuid(), stop->uuid());
  auto decided = Next(Strategy("recover"));
  ASSERT_TRUE(decided.has_value());
  ASSERT_TRUE(
      Eventually([&] { return PodGroupAnnotation("ProcessRecoverStatus") == "recover-success"; }));
  const auto signals = driver_->signals();
  EXPECT_EQ(std::count_if(signals.begin(), signals.end(), OfType("stopTrain")), 1);
  EXPECT_EQ(std::count_if(signals.begin(), signals.end(), OfType("globalFault")), 1);
  EXPECT_EQ(client_->stats().duplicates_suppressed, 1);  // the stopTrain asked again
  EXPECT_EQ(driver_->resumed_count(), 1);
}

// SIGKILL while the controller waits for the recover result: after the restart the client's
// RecoverStatus finishes the cycle (recover-success), the strategy ran once.
TEST_F(RecoveryE2eTest, SigkillWhileWaitingForRecoverStatusResumesTheCycle) {
  BEGIN_OR_SKIP("retry,recover,dump", AgentBehaviour{.never_answer = {"changeStrategy:recover"}});
  AwaitSubscribed();
  ReportFault({{10, 1}});
  auto decided = Next(Strategy("recover"));
  ASSERT_TRUE(decided.has_value());
  ASSERT_TRUE(Eventually([&] { return RecordState() == "WaitReportProcessRecoverStatusState"; }))
      << "record state: " << RecordState();

  KillAndRestart();
  driver_->SetBehaviour({});
  ASSERT_TRUE(Eventually([&] { return client_->stats().subscribes >= 2; }, absl::Seconds(30)))
      << client_->stats().last_error;
  absl::StatusOr<::Status> st = client_->ReportRecoverStatus(0, "recover");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->code(), 0);
  EXPECT_EQ(st->info(), absl::StrCat("jobId=", kJob, ", uuid=", decided->uuid(),
                                     ", receive ReportRecoverStatus"));
  ASSERT_TRUE(
      Eventually([&] { return PodGroupAnnotation("ProcessRecoverStatus") == "recover-success"; }));
  ASSERT_TRUE(client_->WaitStreamEnds(2, kStep));  // the kill, then the end of the cycle
  const auto signals = driver_->signals();
  EXPECT_EQ(std::count_if(signals.begin(), signals.end(), Strategy("recover")), 1);
}

// Issue 16 item 6 end to end. A directory stands where the dir store renames the record's file
// (clusterd-recovery-<jobId>.json), so every write of the record fails as on a broken volume.
// The cycle's stopTrain and the answer to the report that started it are held; clusterd is
// SIGKILLed meanwhile: the cycle is lost with it, but the client never saw a signal of it. Once
// the record can be written, the next report runs a cycle whose signals the record knows.
TEST_F(RecoveryE2eTest, SigkillWhileTheRecordCannotBeWrittenLeavesNoSignalTheRecordDoesNotKnow) {
  BEGIN_OR_SKIP("retry,recover,dump");
  AwaitSubscribed();
  const std::string record_path =
      absl::StrCat(state_, "/configmaps/", kNs, "/clusterd-recovery-", kJob, ".json");
  std::filesystem::create_directories(record_path);
  auto record_errors = [&]() -> int64_t {
    httplib::Client http("http://" + http_address_);
    auto res = http.Get("/metrics");
    if (!res || res->status != 200) return -1;
    const std::string key = "clusterd_recovery_io_errors_total{what=\"record\"} ";
    const size_t at = res->body.find(key);
    if (at == std::string::npos) return 0;
    return std::atoll(res->body.c_str() + at + key.size());
  };

  // MindIO's report, on a stub of its own (no retries): its answer waits for the record too.
  std::atomic<bool> answered{false};
  grpc::Status report_status;
  std::thread reporter([&] {
    auto stub = ::Recover::NewStub(client::MakeChannel(grpc_address_));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    ::ProcessFaultRequest req;
    req.set_jobid(kJob);
    *req.add_faultranks() = RecoverClient::Fault(10, 1);
    ::Status resp;
    report_status = stub->ReportProcessFault(&ctx, req, &resp);
    answered = true;
  });
  const bool held = Eventually([&] {
    const Json r = Recovery();
    return r.is_object() && r.value("ready", true) == false &&
           r.value("recordDurable", true) == false;
  });
  // Retried with back-off, not given up: several failed writes, still nothing out.
  const bool retried = Eventually([&] { return record_errors() >= 3; });
  const std::vector<::ProcessManageSignal> before_kill = driver_->signals();
  const bool answered_before_kill = answered;
  auto describe = [&] {
    return clusterd::testing::RunCommand(absl::StrCat(CLUSTERCTL_BIN, " --addr ", grpc_address_,
                                                      " --http ", http_address_, " describe job ",
                                                      kJob));
  };
  const clusterd::testing::CommandResult held_view = describe();

  proc_->Signal(SIGKILL);
  ASSERT_TRUE(proc_->Wait(absl::Seconds(10)).ok());
  reporter.join();
  EXPECT_TRUE(held) << Recovery().dump();
  EXPECT_TRUE(retried) << record_errors();
  EXPECT_FALSE(answered_before_kill);
  EXPECT_EQ(held_view.exit_code, 0) << held_view.output;
  EXPECT_TRUE(absl::StrContains(held_view.output, "Ready:      NO: record not durable since"))
      << held_view.output;
  EXPECT_FALSE(report_status.ok());  // the transport error a client retries
  EXPECT_EQ(std::count_if(before_kill.begin(), before_kill.end(), OfType("stopTrain")), 0);
  EXPECT_EQ(std::count_if(before_kill.begin(), before_kill.end(), OfType("globalFault")), 0);

  // The volume works again; a new clusterd knows no cycle, as the client does not.
  std::filesystem::remove(record_path);
  StartClusterd(grpc_address_);
  EXPECT_EQ(RecordState(), "");
  ASSERT_TRUE(Eventually([&] { return client_->stats().subscribes >= 2; }, absl::Seconds(30)))
      << client_->stats().last_error;
  ReportFault({{10, 1}});
  auto stop = Next(OfType("stopTrain"));
  ASSERT_TRUE(stop.has_value());
  auto cm = ConfigMap(absl::StrCat("clusterd-recovery-", kJob));
  ASSERT_TRUE(cm.has_value());
  Json record = Json::parse((*cm)["data"].value("record.json", ""), nullptr, false);
  EXPECT_EQ(record.value("uuid", ""), stop->uuid());
  EXPECT_EQ(Recovery().value("recordDurable", false), true);
  const clusterd::testing::CommandResult durable_view = describe();
  EXPECT_TRUE(absl::StrContains(durable_view.output, "Ready:      yes (record durable)"))
      << durable_view.output;
}

}  // namespace recovery_e2e_test
}  // namespace clusterd
