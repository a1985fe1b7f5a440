#include "diagnosis/net_fault.h"

#include "absl/strings/str_cat.h"
#include "common/check_code.h"
#include "gtest/gtest.h"

namespace clusterd::diagnosis {
namespace net_fault_test {

TEST(NetFault, SdidAddressAndServerField) {
  EXPECT_EQ(SdidToAddress(62914560), "192.15.2.199");
  EXPECT_EQ(SdidToAddress(62980097), "192.15.3.198");
  EXPECT_EQ(SdidServer(62914560), 15u);
  EXPECT_EQ(SdidServer(64815119), 15u);
}

TEST(NetFault, PingmeshConfigEffectiveEntriesAndCathelper) {
  auto c = ParsePingmeshConfig({{"global", R"({"activate": "off", "task_interval": 1})"},
                                {"1", R"({"activate": "on",  "task_interval": 5})"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(CathelperFor(EffectiveEntry(*c, "1")).period, 50);
  EXPECT_TRUE(CathelperFor(EffectiveEntry(*c, "1")).net_fault);
  EXPECT_FALSE(CathelperFor(EffectiveEntry(*c, "2")).net_fault);
  EXPECT_EQ(RenderCathelperConf(CathelperFor(std::nullopt)),
            "suppressedPeriod=0\nnetworkType=1\npingType=0\npingTimes=5\npingInterval=1\n"
            "period=15\nnetFault=off\n");
  auto parsed = ParseCathelperConf(RenderCathelperConf(CathelperFor(EffectiveEntry(*c, "1"))));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, CathelperFor(EffectiveEntry(*c, "1")));
}

TEST(NetFault, AnyBadPingmeshValueRejectsTheWholeUpdate) {
  EXPECT_FALSE(ParsePingmeshConfig({{"1", R"({"activate":"yes","task_interval":5})"}}).ok());
  auto r = ParsePingmeshConfig({{"global", R"({"activate":"on","task_interval":61})"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("task_interval"), std::string::npos);
  EXPECT_FALSE(ParsePingmeshConfig({{"roce", "not json"}}).ok());
}

TEST(NetFault, TopologyMapsSdidsToNodes) {
  auto t = ParseSuperPodTopology(
      R"({"Version":"A3","SuperPodID":"0","NodeDeviceMap":{"node-a":{"NodeName":"node-a","ServerID":"15",
          "DeviceMap":{"0":"62914560","1":"62980097"}}}})",
      "super-pod-0.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->super_pod_id, "0");
  ASSERT_EQ(t->npu_by_sdid.count("62980097"), 1u);
  EXPECT_EQ(t->npu_by_sdid["62980097"].node_name, "node-a");
  EXPECT_EQ(t->npu_by_sdid["62980097"].phy_id, "1");
  EXPECT_FALSE(ParseSuperPodTopology("{", "x").ok());
}

constexpr char kHeader[] =
    "pingTaskId,srcType,srcAddr,dstType,dstAddr,minDelay,maxDelay,avgDelay,minLossRate,"
    "maxLossRate,avgLossRate,timestamp\n";

TEST(NetFault, PingCsvSkipsMalformedAndTruncatedRows) {
  ParseStats stats;
  auto rows =
      ParsePingResultCsv(absl::StrCat(kHeader, "t,0,1,0,2,8000,12000,9000,0.000,0.000,0.000,1000\n",
                                      "t,0,1,0\n", "t,0,1,0,2,8"),
                         &stats);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].avg_delay, 9000);
  EXPECT_EQ(stats.malformed_rows, 2);
  EXPECT_FALSE(ParsePingResultCsv("a,b\n").ok());
}

PingRow Row(std::string src, std::string dst, int64_t ts, double loss = 0, double delay_us = 9000) {
  PingRow r;
  r.task_id = "0";
  r.src_addr = std::move(src);
  r.dst_addr = std::move(dst);
  r.avg_delay = r.min_delay = r.max_delay = delay_us;
  r.avg_loss = r.min_loss = r.max_loss = loss;
  r.timestamp = ts;
  return r;
}

TEST(NetFault, WindowWaitsForTenPeriodsThenAdvancesByOnePeriod) {
  PingWindow w(absl::Seconds(10));
  std::vector<PingRow> rows;
  for (int64_t t = 1; t <= 10; ++t) rows.push_back(Row("a", "b", t * 10000));
  w.Add(rows);
  EXPECT_FALSE(w.Advance());  // spans 90 s
  w.Add({Row("a", "b", 110000)});
  ASSERT_TRUE(w.Advance());
  EXPECT_EQ(w.t_max(), 110000);
  EXPECT_EQ(w.Current().size(), 1u);   // t ∈ (90 s, 100 s]
  EXPECT_EQ(w.Baseline().size(), 8u);  // t ∈ (10 s, 90 s]
  // A row two periods ahead waits in the queue.
  w.Add({Row("a", "b", 130000), Row("a", "b", 120000)});
  ASSERT_TRUE(w.Advance());
  EXPECT_EQ(w.t_max(), 120000);
  EXPECT_EQ(w.Current().back().timestamp, 110000);
  ASSERT_TRUE(w.Advance());
  EXPECT_EQ(w.Current().back().timestamp, 120000);
}

// A super pod where NPU "62914560" loses packets on every path it is on.
std::vector<NetAlarm> BadNpuRound(double loss) {
  std::vector<PingRow> baseline, current;
  const std::vector<std::string> npus = {"62914560", "62980097", "63176706", "63242243"};
  for (int64_t t = 1; t <= 8; ++t) {
    for (const auto& s : npus) {
      for (const auto& d : npus) {
        if (s != d) baseline.push_back(Row(s, d, t));
      }
    }
  }
  for (const auto& s : npus) {
    for (const auto& d : npus) {
      if (s == d) continue;
      const bool bad = s == npus[0] || d == npus[0];
      current.push_back(Row(s, d, 9, bad ? loss : 0));
    }
  }
  return RootCause(FindFaultyPaths(current, baseline));
}

TEST(NetFault, OneLossyNpuIsOneMajorAlarm) {
  std::vector<NetAlarm> alarms = BadNpuRound(0.4);
  ASSERT_EQ(alarms.size(), 1u);
  EXPECT_EQ(alarms[0].src_id, "62914560");
  EXPECT_EQ(alarms[0].dst_id, "62914560");
  EXPECT_EQ(alarms[0].level, 1);
  EXPECT_EQ(alarms[0].fault_type, 1);
  EXPECT_DOUBLE_EQ(alarms[0].avg_loss, 40);
  EXPECT_EQ(alarms[0].timestamp, 9);
}

TEST(NetFault, LossAboveEightyPercentIsADisconnect) {
  std::vector<NetAlarm> alarms = BadNpuRound(0.9);
  ASSERT_EQ(alarms.size(), 1u);
  EXPECT_EQ(alarms[0].fault_type, 2);
}

TEST(NetFault, OneBadLinkIsAMinorPairAlarmAndDelayCountsSeparately) {
  std::vector<PingRow> baseline, current;
  for (int64_t t = 1; t <= 8; ++t) {
    baseline.push_back(Row("1", "2", t));
    baseline.push_back(Row("3", "4", t));
  }
  current.push_back(Row("1", "2", 9, 0.0, 60000));  // 9 ms -> 60 ms
  current.push_back(Row("3", "4", 9));
  std::vector<NetAlarm> alarms = RootCause(FindFaultyPaths(current, baseline));
  ASSERT_EQ(alarms.size(), 1u);
  EXPECT_EQ(alarms[0].src_id, "1");
  EXPECT_EQ(alarms[0].dst_id, "2");
  EXPECT_EQ(alarms[0].level, 0);
  EXPECT_EQ(alarms[0].fault_type, 0);
  EXPECT_DOUBLE_EQ(alarms[0].avg_delay, 60);
}

TEST(NetFault, PathsWithoutBaselineAreSkipped) {
  EXPECT_TRUE(FindFaultyPaths({Row("1", "2", 9, 1.0)}, {}).empty());
}

TEST(NetFault, PublicFaultCodesByEndpoints) {
  NetAlarm a;
  a.src_id = "62914560";
  a.dst_id = "62980097";
  a.timestamp = 1735690000000;
  EXPECT_EQ(AlarmToPublicFault(a).fault_code, "200001010");
  a.dst_id = "67108864";  // server 16
  EXPECT_EQ(AlarmToPublicFault(a).fault_code, "200001011");
  a.dst_id = "10.0.0.1";
  EXPECT_EQ(AlarmToPublicFault(a).fault_code, "200001011");
  a.dst_type = 3;
  EXPECT_EQ(AlarmToPublicFault(a).fault_code, "200001012");
}

TEST(NetFault, PublicFaultFields) {
  NetAlarm a;
  a.task_id = "0";
  a.timestamp = 1735690000000;
  a.avg_loss = 40;
  a.src_id = "Node-A-62980097";
  a.dst_id = "62914560";
  a.level = 1;
  a.fault_type = 1;
  PublicFault f = AlarmToPublicFault(a);
  EXPECT_EQ(f.fault_id, Sha256Hex("0-Node-A-62980097->0-62914560"));
  EXPECT_EQ(f.fault_type, "Network");
  EXPECT_EQ(f.assertion, "once");
  EXPECT_EQ(f.fault_time, 1735690000000);
  EXPECT_EQ(f.fault_location.at("SrcID"), "Node-A-62980097");
  EXPECT_EQ(f.fault_location.at("DstType"), "0");
  ASSERT_EQ(f.influence.size(), 1u);
  EXPECT_EQ(f.influence[0].node_name, "node-a-62980097");
  EXPECT_EQ(f.influence[0].device_ids, (std::vector<int64_t>{1}));
  EXPECT_EQ(f.description,
            R"({"taskId":"0","timestamp":1735690000000,"minLossRate":0,"maxLossRate":0,)"
            R"("avgLossRate":40,"minDelay":0,"maxDelay":0,"avgDelay":0,"srcId":"Node-A-62980097",)"
            R"("srcType":0,"dstId":"62914560","dstType":0,"level":1,"faultType":1})");
  PublicFaultReport r = NetFaultReport({a}, absl::FromUnixMillis(1735690000500), "id-12345678");
  EXPECT_EQ(r.resource, "fd-online");
  EXPECT_EQ(r.timestamp, 1735690000500);
  EXPECT_EQ(r.faults.size(), 1u);
}

TEST(NetFault, SuppressionWithPeriodZeroOnlyDropsRepeatsWithinARound) {
  AlarmSuppression s;
  NetAlarm a;
  a.src_id = a.dst_id = "1";
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_EQ(s.Filter({a, a}, t0, 0).size(), 1u);
  EXPECT_EQ(s.Filter({a}, t0 + absl::Seconds(15), 0).size(), 1u);
  EXPECT_EQ(s.Filter({a}, t0 + absl::Seconds(20), 60).size(), 0u);
}

TEST(NetFault, LogEntryHasUnpaddedDateFields) {
  EXPECT_EQ(
      NetworkFaultLogEntry(
          0, absl::FromCivil(absl::CivilSecond(2025, 1, 5, 3, 4, 5), absl::UTCTimeZone()), {}),
      "Detection 0 result(2025-1-5 3:4:5):\n[]\n");
}

TEST(NetFault, DetectorAnalysesOnceTheWindowIsFull) {
  CathelperConf conf = CathelperFor(PingmeshEntry{true, 1});  // period 10 s
  SuperPodNetDetector d("0", conf);
  AlarmSuppression s;
  // Path 1-2 loses half its packets from the row of round 11 on; the window spans ten periods
  // at round 11, and the current data are one period old, so round 12 reports it.
  for (int64_t round = 1; round <= 12; ++round) {
    const int64_t ts = round * 10000;
    const double loss = round >= 11 ? 0.5 : 0;
    std::vector<NetAlarm> alarms =
        d.Round({Row("1", "2", ts, loss), Row("3", "4", ts)}, absl::FromUnixSeconds(round * 10), s);
    if (round < 12) {
      EXPECT_TRUE(alarms.empty()) << round;
      continue;
    }
    ASSERT_EQ(alarms.size(), 1u);
    EXPECT_EQ(alarms[0].src_id, "1");
    EXPECT_EQ(alarms[0].dst_id, "2");
    EXPECT_EQ(alarms[0].fault_type, 1);
  }
  EXPECT_EQ(d.rounds(), 2);
}

}  // namespace net_fault_test
}  // namespace clusterd::diagnosis
