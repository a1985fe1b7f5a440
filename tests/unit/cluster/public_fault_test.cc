// Public faults (fault-pipeline.md §9, §1.8): validation and return codes, sender configuration,
// levels, assertion semantics, the per-sender rate limit and statistic-fault-info.
#include <fstream>
#include <sstream>

#include "cluster/public_fault_cache.h"
#include "cluster/public_fault_request.h"
#include "gtest/gtest.h"

namespace clusterd::cluster {
namespace public_fault_test {

constexpr int64_t kNow = 1741056920000;

PublicFaultConfig Shipped() {
  std::ifstream in(std::string(CLUSTERD_DATA_DIR) + "/publicFaultConfiguration.json");
  std::stringstream s;
  s << in.rdbuf();
  auto c = ParsePublicFaultConfig(s.str());
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

// §9.1, verbatim.
constexpr char kSpecRequest[] =
    R"({"id":"a1b2c3d4-0001","timestamp":1741056920000,"version":"1.0","resource":"CCAE",
 "faults":[{"faultId":"fault-0001","faultType":"NPU","faultCode":"220001001","faultTime":1741056919000,
   "assertion":"occur","faultLocation":{"rack":"r1"},
   "influence":[{"nodeName":"node-1","nodeSN":"","deviceIds":[0,1]}],"description":"link degraded"}]})";

PublicFaultRequest SpecRequest() {
  auto r = ParsePublicFaultRequest(kSpecRequest);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

NodeBySerialFn NoSerials() {
  return [](const std::string&) { return std::nullopt; };
}

TEST(PublicFaultConfig, ShippedFileLevelsAndSenders) {
  PublicFaultConfig c = Shipped();
  EXPECT_EQ(c.level_of_code.size(), 30u);
  EXPECT_EQ(c.LevelOf("220001001"), "SeparateNPU");
  EXPECT_EQ(c.LevelOf("110001022"), "PreSeparateNPU");
  EXPECT_EQ(c.LevelOf("010001001"), "SubHealthFault");
  EXPECT_EQ(c.LevelOf("200001006"), "NotHandleFault");
  EXPECT_EQ(c.resources, (std::set<std::string>{"CCAE", "fd-online", "pingmesh", "Netmind",
                                                "dpcStorage", "dtfsStorage"}));
}

TEST(PublicFaultConfig, SeparateWinsWhenACodeIsInSeveralCategories) {
  auto c = ParsePublicFaultConfig(
      R"({"publicFaultCode":{"NotHandleFaultCodes":["111111111"],"SeparateNPUCodes":["111111111"]},"publicFaultResource":["x"]})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->LevelOf("111111111"), "SeparateNPU");
}

TEST(PublicFaultValidation, SpecExampleIsAccepted) {
  PublicFaultVerdict v = ValidatePublicFaultRequest(SpecRequest(), Shipped(), NoSerials());
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.info, "public fault send successfully");
  ASSERT_EQ(v.accepted.size(), 1u);
  EXPECT_EQ(v.accepted[0].level, "SeparateNPU");
  EXPECT_EQ(v.accepted[0].nodes.at("node-1"), (std::vector<int32_t>{0, 1}));
}

TEST(PublicFaultValidation, RequestLevelFailuresReject409WithTheReason) {
  PublicFaultConfig c = Shipped();
  auto check = [&](auto mutate, const std::string& info) {
    PublicFaultRequest r = SpecRequest();
    mutate(r);
    PublicFaultVerdict v = ValidatePublicFaultRequest(r, c, NoSerials());
    EXPECT_EQ(v.code, 409) << info;
    EXPECT_EQ(v.info, "check public fault info failed, error: " + info);
    EXPECT_TRUE(v.accepted.empty());
  };
  check([](PublicFaultRequest& r) { r.version = "2.0"; }, "invalid version");
  check([](PublicFaultRequest& r) { r.id = "short"; }, "invalid id");
  check([](PublicFaultRequest& r) { r.id = "bad id with spaces"; }, "invalid id");
  check([](PublicFaultRequest& r) { r.timestamp = 17356896000000; }, "invalid timestamp");
  check([](PublicFaultRequest& r) { r.timestamp = 173568960000; }, "invalid timestamp");
  check([](PublicFaultRequest& r) { r.timestamp = 0; }, "invalid timestamp");
  check([](PublicFaultRequest& r) { r.resource = "nobody"; }, "invalid resource");
}

// The original's texts: a 13-digit timestamp before 2025 says why; a missing, empty or too long
// `faults` list is a length error.
TEST(PublicFaultValidation, EarlyTimestampAndFaultsLengthHaveTheOriginalTexts) {
  PublicFaultConfig c = Shipped();
  auto info = [&](auto mutate) {
    PublicFaultRequest r = SpecRequest();
    mutate(r);
    PublicFaultVerdict v = ValidatePublicFaultRequest(r, c, NoSerials());
    EXPECT_EQ(v.code, 409);
    return v.info;
  };
  EXPECT_EQ(info([](PublicFaultRequest& r) { r.timestamp = 1735689599999; }),
            "check public fault info failed, error: invalid timestamp, can not before "
            "2025/01/01T00:00:00Z");
  EXPECT_EQ(info([](PublicFaultRequest& r) { r.timestamp = 1000000000000; }),
            "check public fault info failed, error: invalid timestamp, can not before "
            "2025/01/01T00:00:00Z");
  EXPECT_EQ(info([](PublicFaultRequest& r) { r.faults.clear(); }),
            "check public fault info failed, error: invalid faults length");
  EXPECT_EQ(info([](PublicFaultRequest& r) { r.faults.assign(101, r.faults[0]); }),
            "check public fault info failed, error: invalid faults length");
  for (const char* text :
       {R"({"id":"a1b2c3d4-0001","timestamp":1741056920000,"version":"1.0","resource":"CCAE"})",
        R"({"id":"a1b2c3d4-0001","timestamp":1741056920000,"version":"1.0","resource":"CCAE",
            "faults":null})"}) {
    auto parsed = ParsePublicFaultRequest(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(ValidatePublicFaultRequest(*parsed, c, NoSerials()).info,
              "check public fault info failed, error: invalid faults length");
  }
  // 2025-01-01T00:00:00Z itself is accepted.
  PublicFaultRequest r = SpecRequest();
  r.timestamp = 1735689600000;
  EXPECT_EQ(ValidatePublicFaultRequest(r, c, NoSerials()).code, 0);
}

TEST(PublicFaultValidation, FaultLevelFailuresDropOnlyThatFault) {
  PublicFaultRequest r = SpecRequest();
  PublicFaultItem good = r.faults[0];
  auto bad = [&](auto mutate) {
    PublicFaultItem f = good;
    f.fault_id = "fault-bad-" + std::to_string(r.faults.size());
    mutate(f);
    r.faults.push_back(f);
  };
  bad([](PublicFaultItem& f) { f.fault_type = "GPU"; });
  bad([](PublicFaultItem& f) { f.fault_code = "999999999"; });  // not configured
  bad([](PublicFaultItem& f) { f.fault_code = "22000100"; });   // 8 characters
  bad([](PublicFaultItem& f) { f.assertion = "maybe"; });
  bad([](PublicFaultItem& f) { f.fault_time = 123; });
  bad([](PublicFaultItem& f) { f.description = "tab\there"; });
  bad([](PublicFaultItem& f) { f.description = std::string(513, 'x'); });
  bad([](PublicFaultItem& f) { f.fault_location["a-key-longer-than-16"] = "v"; });
  bad([](PublicFaultItem& f) { f.influence[0].node_name = "Node_1"; });
  bad([](PublicFaultItem& f) { f.influence[0].device_ids = {0, 0}; });
  bad([](PublicFaultItem& f) { f.influence[0].device_ids = {32}; });
  bad([](PublicFaultItem& f) { f.influence.clear(); });
  bad([](PublicFaultItem& f) { f.influence[0] = PublicFaultInfluence{"", "unknown-sn", {1}}; });
  PublicFaultVerdict v = ValidatePublicFaultRequest(r, Shipped(), NoSerials());
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.accepted.size(), 1u);
  EXPECT_EQ(v.dropped.size(), 13u);
}

TEST(PublicFaultValidation, NoValidFaultRejectsTheRequest) {
  PublicFaultRequest r = SpecRequest();
  r.faults[0].fault_type = "GPU";
  PublicFaultVerdict v = ValidatePublicFaultRequest(r, Shipped(), NoSerials());
  EXPECT_EQ(v.code, 409);
  EXPECT_EQ(v.info, "check public fault info failed, error: there is no valid fault");
}

TEST(PublicFaultValidation, SerialNumberResolvesToANode) {
  PublicFaultRequest r = SpecRequest();
  r.faults[0].influence[0] = PublicFaultInfluence{"", "2102313LNR10P5100002", {3}};
  auto by_sn = [](const std::string& sn) -> std::optional<std::string> {
    if (sn == "2102313LNR10P5100002") return std::string("node-b");
    return std::nullopt;
  };
  PublicFaultVerdict v = ValidatePublicFaultRequest(r, Shipped(), by_sn);
  ASSERT_EQ(v.code, 0);
  EXPECT_EQ(v.accepted[0].nodes.count("node-b"), 1u);
}

TEST(PublicFaultValidation, ConfigMapValueWithWrongTypesIsMalformed) {
  EXPECT_FALSE(ParsePublicFaultRequest(R"({"id":1})").ok());
  EXPECT_FALSE(ParsePublicFaultRequest(R"({"faults":[{"influence":[{"deviceIds":["a"]}]}]})").ok());
  EXPECT_FALSE(ParsePublicFaultRequest("not json").ok());
}

// ---- cache semantics ----

std::vector<AcceptedPublicFault> Accepted(const std::string& assertion,
                                          std::vector<int32_t> ids = {0, 1},
                                          const std::string& node = "node-1") {
  PublicFaultRequest r = SpecRequest();
  r.faults[0].assertion = assertion;
  r.faults[0].influence[0].node_name = node;
  r.faults[0].influence[0].device_ids = std::move(ids);
  return ValidatePublicFaultRequest(r, Shipped(), NoSerials()).accepted;
}

TEST(PublicFaultCache, OccurAddsOnceAndRecoverAfterFiveSecondsRemovesAtOnce) {
  PublicFaultCache cache;
  EXPECT_EQ(cache.Apply("CCAE", Accepted("occur"), kNow), std::set<std::string>{"node-1"});
  EXPECT_TRUE(cache.Apply("CCAE", Accepted("occur"), kNow + 1000).empty());
  auto faults = cache.OnNode("node-1");
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].fault_time_s, 1741056919);
  EXPECT_EQ(faults[0].added_ms, kNow);
  EXPECT_EQ(faults[0].key, "CCAEfault-0001");
  EXPECT_EQ(cache.Apply("CCAE", Accepted("recover"), kNow + 5000), std::set<std::string>{"node-1"});
  EXPECT_TRUE(cache.OnNode("node-1").empty());
}

TEST(PublicFaultCache, EarlyRecoverRemovesAtAddTimePlusFiveSeconds) {
  PublicFaultCache cache;
  cache.Apply("CCAE", Accepted("occur"), kNow);
  EXPECT_TRUE(cache.Apply("CCAE", Accepted("recover"), kNow + 2000).empty());
  EXPECT_EQ(cache.NextDue(), kNow + 5000);
  EXPECT_TRUE(cache.Expire(kNow + 4999).empty());
  EXPECT_EQ(cache.Expire(kNow + 5000), std::set<std::string>{"node-1"});
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(PublicFaultCache, RecoverBeforeOccurRemovesTheLateOccurAtTheScheduledTime) {
  PublicFaultCache cache;
  cache.Apply("CCAE", Accepted("recover"), kNow);
  cache.Apply("CCAE", Accepted("occur"), kNow + 1000);
  EXPECT_EQ(cache.Size(), 1u);
  EXPECT_EQ(cache.Expire(kNow + 5000), std::set<std::string>{"node-1"});
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(PublicFaultCache, OnceIsVisibleForFiveSeconds) {
  PublicFaultCache cache;
  cache.Apply("CCAE", Accepted("once"), kNow);
  EXPECT_EQ(cache.Size(), 1u);
  EXPECT_TRUE(cache.Expire(kNow + 4000).empty());
  cache.Expire(kNow + 5000);
  EXPECT_EQ(cache.Size(), 0u);
}

TEST(PublicFaultCache, LimitRejectsFaultsBeyondIt) {
  PublicFaultCache cache(1, 100, 2);
  size_t rejected = 0;
  cache.Apply("CCAE", Accepted("occur", {0}, "a"), kNow, &rejected);
  cache.Apply("CCAE", Accepted("occur", {0}, "b"), kNow, &rejected);
  cache.Apply("CCAE", Accepted("occur", {0}, "c"), kNow, &rejected);
  EXPECT_EQ(cache.Size(), 2u);
  EXPECT_EQ(rejected, 1u);
}

TEST(PublicFaultRateLimit, HundredBurstThenOnePerSecondPerSender) {
  PublicFaultCache cache;
  cache.SetResources({"CCAE", "Netmind"}, kNow);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(cache.Admit("CCAE", kNow)) << i;
  EXPECT_FALSE(cache.Admit("CCAE", kNow));
  EXPECT_TRUE(cache.Admit("Netmind", kNow));  // another sender is not affected
  EXPECT_FALSE(cache.Admit("CCAE", kNow + 999));
  EXPECT_TRUE(cache.Admit("CCAE", kNow + 1000));
  EXPECT_FALSE(cache.Admit("unknown", kNow));  // no bucket: 410
}

TEST(PublicFaultStatistic, RendersAndLoadsBack) {
  PublicFaultCache cache;
  cache.Apply("CCAE", Accepted("occur"), kNow);
  auto data = cache.StatisticData();
  EXPECT_EQ(data.at("FaultNum"), R"({"publicFaultNum":1})");
  EXPECT_EQ(
      data.at("PublicFaults"),
      R"({"node-1":[{"resource":"CCAE","devIds":[0,1],"faultId":"fault-0001","type":"NPU","faultCode":"220001001","level":"SeparateNPU","faultTime":1741056919}]})");
  PublicFaultCache reloaded;
  ASSERT_TRUE(reloaded.LoadStatistic(data.at("PublicFaults"), kNow + 1).ok());
  auto faults = reloaded.OnNode("node-1");
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].key, "CCAEfault-0001");
  EXPECT_EQ(faults[0].device_ids, (std::vector<int32_t>{0, 1}));
}

TEST(PublicFaultStatistic, MoreThan4500FaultsOnlyCount) {
  PublicFaultCache cache;
  for (int i = 0; i < 4501; ++i)
    cache.Apply("CCAE", Accepted("occur", {0}, "node-" + std::to_string(i)), kNow);
  auto data = cache.StatisticData();
  EXPECT_EQ(data.count("PublicFaults"), 0u);
  EXPECT_EQ(data.at("FaultNum"), R"({"publicFaultNum":4501})");
  EXPECT_EQ(data.count("Description"), 1u);
}

}  // namespace public_fault_test
}  // namespace clusterd::cluster
