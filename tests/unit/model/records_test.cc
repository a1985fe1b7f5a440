// Switch record, escalation reasons, reset-config: rendering and parsing.
#include "common/check_code.h"
#include "gtest/gtest.h"
#include "model/fault_level.h"
#include "model/npu_name_list.h"
#include "model/reset_info.h"
#include "model/switch_info.h"
#include "model/upgrade_fault_reason.h"

namespace clusterd::model {
namespace records_test {

TEST(FaultLevel, NamesRoundTripAndOrderIsSeverity) {
  for (int i = 0; i < kNumFaultLevels; ++i) {
    const auto level = static_cast<FaultLevel>(i);
    EXPECT_EQ(ParseFaultLevel(FaultLevelName(level)), level);
  }
  EXPECT_EQ(MostSevere(FaultLevel::kRestartBusiness, FaultLevel::kSeparateNPU),
            FaultLevel::kSeparateNPU);
  EXPECT_EQ(MostSevere(FaultLevel::kNormalNPU, FaultLevel::kNotHandleFault),
            FaultLevel::kNotHandleFault);
  EXPECT_FALSE(ParseFaultLevel("separatenpu").has_value());
}

TEST(SwitchInfo, ZeroRecordIsTheSpecText) {
  EXPECT_EQ(
      RenderSwitchInfo(ZeroSwitchInfo()),
      R"({"FaultCode":null,"FaultLevel":"","UpdateTime":0,"NodeStatus":"","FaultTimeAndLevelMap":null})");
}

TEST(SwitchInfo, EnabledWithoutFaultsAndRoundTrip) {
  SwitchInfo info;
  info.fault_code.emplace();
  info.update_time = 1718000001;
  info.node_status = "Healthy";
  info.fault_time_and_level_map.emplace();
  const std::string text = RenderSwitchInfo(info);
  EXPECT_EQ(
      text,
      R"({"FaultCode":[],"FaultLevel":"","UpdateTime":1718000001,"NodeStatus":"Healthy","FaultTimeAndLevelMap":{}})");
  EXPECT_EQ(*ParseSwitchInfo(text), info);
  EXPECT_EQ(*ParseSwitchInfo(RenderSwitchInfo(ZeroSwitchInfo())), ZeroSwitchInfo());
}

TEST(SwitchFaultEvent, FieldOrderAndRoundTrip) {
  SwitchFaultEvent e{0x00f1fef5, "[0x00f1fef5,155912,cpu,na]", 0, 0, 1, 7, 3, 1, 1718000000123};
  const std::string text = RenderSwitchFaultEvent(e);
  EXPECT_EQ(
      text,
      R"({"EventType":15859445,"AssembledFaultCode":"[0x00f1fef5,155912,cpu,na]","PeerPortDevice":0,"PeerPortId":0,"SwitchChipId":1,"SwitchPortId":7,"Severity":3,"Assertion":1,"AlarmRaisedTime":1718000000123})");
  EXPECT_EQ(*ParseSwitchFaultEvent(text), e);
}

TEST(UpgradeFaultReasons, RenderSortedByNpuAndParseBack) {
  UpgradeFaultReasons reasons;
  reasons["Ascend910-3"].push_back(
      {1718000000000, "80e18005", "ManuallySeparateNPU", std::string(kUpgradeTypeFrequency)});
  reasons["Ascend910-1"].push_back({5, std::string(kAutofillFaultCode), "ManuallySeparateNPU",
                                    std::string(kUpgradeTypeAutofill)});
  const std::string text = RenderUpgradeFaultReasons(reasons);
  EXPECT_EQ(
      text,
      R"({"Ascend910-1":[{"upgrade_time":5,"fault_code":"AutofillFaultCode","fault_level":"ManuallySeparateNPU","upgrade_type":"FaultAutofill"}],"Ascend910-3":[{"upgrade_time":1718000000000,"fault_code":"80e18005","fault_level":"ManuallySeparateNPU","upgrade_type":"FaultFrequency"}]})");
  EXPECT_EQ(*ParseUpgradeFaultReasons(text), reasons);
  EXPECT_EQ(RenderUpgradeFaultReasons({}), "{}");
  EXPECT_TRUE(ParseUpgradeFaultReasons("")->empty());
  EXPECT_FALSE(ParseUpgradeFaultReasons("[1]").ok());
}

TEST(TaskResetInfo, ClusterdExampleMatchesTheSpecCheckCode) {
  TaskResetInfo info;
  TaskDevInfo rank;
  rank.rank_id = 8;
  rank.status = std::string(kRankStatusFault);
  info.rank_list.push_back(rank);
  info.update_time = 1718000100;
  const std::string text = RenderTaskResetInfo(info);
  EXPECT_EQ(
      text,
      R"({"RankList":[{"RankId":8,"LogicId":0,"Status":"fault","Policy":"","InitialPolicy":"","ErrorCode":null,"ErrorCodeHex":""}],"UpdateTime":1718000100,"RetryTime":0,"FaultFlushing":false,"GracefulExit":0,"RestartFaultProcess":false})");
  EXPECT_EQ(TaskResetInfoCheckCode(info),
            "3bf30c2c7650e08869d36bac819a0f046febed183167399904a561c2a27ebb75");
  EXPECT_EQ(Sha256Hex(text), TaskResetInfoCheckCode(info));
  auto parsed = ParseTaskResetInfo(text, TaskResetInfoCheckCode(info));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, info);
  EXPECT_FALSE(ParseTaskResetInfo(text, std::string_view("")).ok());
}

TEST(TaskResetInfo, PluginWritesEmptyErrorCodeArray) {
  TaskDevInfo rank;
  rank.error_code = std::vector<int64_t>{};
  TaskResetInfo info;
  info.rank_list.push_back(rank);
  EXPECT_NE(RenderTaskResetInfo(info).find(R"("ErrorCode":[])"), std::string::npos);
}

TEST(NpuNameList, SplitTrimsAndDropsEmpty) {
  EXPECT_EQ(SplitNpuNames(" Ascend910-3, ,Ascend910-5,"),
            (std::vector<std::string>{"Ascend910-3", "Ascend910-5"}));
  EXPECT_TRUE(SplitNpuNames("").empty());
  EXPECT_EQ(JoinNpuNames({"a", "b"}), "a,b");
}

}  // namespace records_test
}  // namespace clusterd::model
