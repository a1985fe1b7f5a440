// Bounds on request strings and the rate-limited log of bad input (server/request_limits.h),
// and the answer to an undecodable body (server/decode_error_interceptor.h).
#include "server/request_limits.h"

#include <string>

#include "absl/strings/match.h"
#include "config.pb.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "profiling.pb.h"
#include "pubfault.pb.h"
#include "recover.pb.h"
#include "server/decode_error_interceptor.h"

namespace clusterd::server {
namespace request_limits_test {

TEST(RequestLimits, AnIdOverTheBoundIsRefusedNamingTheFieldNotItsValue) {
  ::ClientInfo info;
  info.set_jobid(std::string(kMaxIdBytes, 'j'));
  info.set_role("taskd");
  EXPECT_TRUE(CheckRequestStrings(info).ok());
  info.set_jobid(std::string(kMaxIdBytes + 1, 'j'));
  absl::Status s = CheckRequestStrings(info);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "jobId is 257 bytes, over the limit of 256");
}

TEST(RequestLimits, FreeTextHasALargerBoundInNestedMessages) {
  ::StopCompleteRequest req;
  req.set_jobid("job-1");
  req.mutable_status()->set_info(std::string(kMaxTextBytes, 'i'));
  EXPECT_TRUE(CheckRequestStrings(req).ok());
  req.mutable_status()->set_info(std::string(kMaxTextBytes + 1, 'i'));
  EXPECT_EQ(CheckRequestStrings(req).message(),
            "status.info is 4097 bytes, over the limit of 4096");
}

TEST(RequestLimits, RepeatedStringsAndMapEntriesAreChecked) {
  ::RecoverStrategyRequest strategies;
  strategies.add_strategies("recover");
  strategies.add_strategies(std::string(300, 's'));
  EXPECT_EQ(CheckRequestStrings(strategies).message(),
            "strategies[1] is 300 bytes, over the limit of 256");

  ::ProcessFaultRequest faults;
  faults.add_faultranks()->set_rankid("1");
  faults.add_faultranks()->set_faulttype(std::string(300, '1'));
  EXPECT_EQ(CheckRequestStrings(faults).message(),
            "faultRanks[1].faultType is 300 bytes, over the limit of 256");

  ::SwitchNics nics;
  (*nics.mutable_nicops())[std::string(300, 'n')].add_dev("0");
  EXPECT_EQ(CheckRequestStrings(nics).message(),
            "nicOps[0].key is 300 bytes, over the limit of 256");

  // (Each change goes through mutable_*(): reflection reads the map's synced copy.)
  auto op = [](::StressTestResult& r) -> ::StressTestOpResult& {
    return (*(*r.mutable_stressresult())["3"].mutable_rankresult())["aic"];
  };
  ::StressTestResult results;
  op(results).set_code("0");
  op(results).set_result(std::string(kMaxTextBytes, 'r'));
  EXPECT_TRUE(CheckRequestStrings(results).ok());
  op(results).set_code(std::string(300, 'c'));
  EXPECT_EQ(CheckRequestStrings(results).message(),
            "stressResult[0].value.rankResult[0].value.code is 300 bytes, over the limit of 256");
}

TEST(RequestLimits, JobNsNameHoldsANamespaceAndAFullLengthName) {
  ::DataStatusReq req;
  req.set_jobnsname(std::string(63, 'n') + "/" + std::string(253, 'j'));
  EXPECT_TRUE(CheckRequestStrings(req).ok());
  req.set_jobnsname(std::string(kMaxJobNsNameBytes + 1, 'j'));
  EXPECT_FALSE(CheckRequestStrings(req).ok());
}

TEST(RequestLimits, APublicFaultDescriptionOf512FourByteRunesFits) {
  ::PublicFaultRequest req;
  req.set_id("fault-req-1");
  std::string description;
  for (int i = 0; i < 512; ++i) description += "\xF0\x9F\x98\x80";
  req.add_faults()->set_description(description);
  EXPECT_TRUE(CheckRequestStrings(req).ok());
}

TEST(RequestLimits, CheckRequestBoundsNamesTheMethod) {
  ::config::ClientInfo info;
  info.set_role(std::string(1000, 'r'));
  absl::Status s = CheckRequestBounds("/config.Config/Register", info);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "role is 1000 bytes, over the limit of 256, method=/config.Config/Register");
}

TEST(RequestLimits, IdOnlyRequestsHaveASmallSizeBound) {
  EXPECT_EQ(MessageLimitOf(*::ClientInfo::descriptor()), 608u);
  EXPECT_EQ(MessageLimitOf(*::StressTestRequest::descriptor()), 64u + 16 + 256);
  // Types with lists keep only the transport's 4 MiB and the per-field bounds.
  EXPECT_EQ(MessageLimitOf(*::PublicFaultRequest::descriptor()), 0u);
  EXPECT_EQ(MessageLimitOf(*::StopCompleteRequest::descriptor()), 0u);
}

TEST(RequestLimits, AnUnknownFieldPastTheBoundIsResourceExhausted) {
  ::ClientInfo info;
  info.set_jobid(std::string(kMaxIdBytes, 'j'));
  info.set_role(std::string(kMaxIdBytes, 'r'));
  EXPECT_TRUE(CheckRequestBounds("/Recover/Init", info).ok());
  // Field 15, length-delimited, 1 MiB: what a client of the same proto cannot even send.
  info.GetReflection()->MutableUnknownFields(&info)->AddLengthDelimited(15,
                                                                        std::string(1 << 20, 'x'));
  absl::Status s = CheckRequestBounds("/Recover/Init", info);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(s.message(), "request is 10")) << s.message();
  EXPECT_TRUE(absl::EndsWith(s.message(),
                             " bytes, over the limit of 608 for ClientInfo, method=/Recover/Init"))
      << s.message();
}

TEST(RequestLimits, ALongFieldIsNamedBeforeTheSize) {
  ::ClientInfo info;
  info.set_jobid(std::string(4 << 20, 'j'));
  absl::Status s = CheckRequestBounds("/Recover/Init", info);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "jobId is ")) << s.message();
}

TEST(BadInputLog, AFloodWritesTheBurstThenOneLineAtTheRateNamingTheSuppressed) {
  ManualClock clock;
  BadInputLog log(clock, 1, 3);
  int64_t suppressed = -1;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(log.Admit(&suppressed));
    EXPECT_EQ(suppressed, 0);
  }
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(log.Admit(&suppressed));
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(log.Admit(&suppressed));
  EXPECT_EQ(suppressed, 100);
  EXPECT_FALSE(log.Admit(&suppressed));
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(log.Admit(&suppressed));
  EXPECT_EQ(suppressed, 1);
}

TEST(DecodeErrorInterceptor, TheAnswerNamesTheRequestMessageOfTheMethod) {
  EXPECT_EQ(UndecodableRequestMessage("/Recover/Init"),
            "request body is not a valid ClientInfo, method=/Recover/Init");
  EXPECT_EQ(UndecodableRequestMessage("/Recover/ReportProcessFault"),
            "request body is not a valid ProcessFaultRequest, method=/Recover/ReportProcessFault");
  EXPECT_EQ(UndecodableRequestMessage("/config.Config/Register"),
            "request body is not a valid ClientInfo, method=/config.Config/Register");
  EXPECT_EQ(UndecodableRequestMessage("/PubFault/SendPublicFault"),
            "request body is not a valid PublicFaultRequest, method=/PubFault/SendPublicFault");
  EXPECT_EQ(UndecodableRequestMessage("/No/Such"),
            "request body is not a valid request message, method=/No/Such");
}

}  // namespace request_limits_test
}  // namespace clusterd::server
