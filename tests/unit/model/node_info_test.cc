#include "model/node_info.h"

#include "gtest/gtest.h"

namespace clusterd::model {
namespace node_info_test {

// fault-pipeline.md §1.3 example.
constexpr std::string_view kExample =
    R"({"NodeInfo":{"FaultDevList":[{"DeviceType":"CPU","DeviceId":0,"FaultCode":["0000001D"],"FaultLevel":"PreSeparateFault"}],"NodeStatus":"PreSeparate"},"CheckCode":"d089a10b52bc734b9b3bec6fdc2bd0486b9cedaf4d465c40be2f8888fff595a4"})";

NodeInfo Example() {
  NodeInfo info;
  info.fault_dev_list.push_back({"CPU", 0, {"0000001D"}, "PreSeparateFault"});
  info.node_status = "PreSeparate";
  return info;
}

TEST(NodeInfo, RendersTheSpecExample) { EXPECT_EQ(RenderNodeInfoValue(Example()), kExample); }

TEST(NodeInfo, ParsesAndVerifiesTheSpecExample) {
  auto info = ParseNodeInfoValue(kExample);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(*info, Example());
}

TEST(NodeInfo, EmptyListIsRenderedAsArray) {
  NodeInfo info;
  info.node_status = "Healthy";
  EXPECT_EQ(RenderNodeInfoValue(info).substr(0, 45),
            R"({"NodeInfo":{"FaultDevList":[],"NodeStatus":")");
}

TEST(NodeInfo, TamperedContentFailsVerification) {
  std::string text(kExample);
  text.replace(text.find("PreSeparateFault"), 16, "SeparateFault");
  EXPECT_EQ(ParseNodeInfoValue(text).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(NodeInfoUpdateTime, UtcUsesZAndOtherZonesAnOffset) {
  const absl::Time t = absl::FromUnixSeconds(1718007201) + absl::Milliseconds(700);
  EXPECT_EQ(FormatNodeInfoUpdateTime(t, absl::UTCTimeZone()), "2024-06-10T08:13:21Z");
  EXPECT_EQ(FormatNodeInfoUpdateTime(t, absl::FixedTimeZone(8 * 3600)),
            "2024-06-10T16:13:21+08:00");
  EXPECT_EQ(ParseNodeInfoUpdateTimeMs("2024-06-10T16:13:21+08:00"), 1718007201000);
  EXPECT_EQ(ParseNodeInfoUpdateTimeMs("garbage"), 0);
}

}  // namespace node_info_test
}  // namespace clusterd::model
