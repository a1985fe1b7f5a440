// §11.2-§11.5 desired patches, golden.

#include "recovery/side_effects.h"

#include "common/canonical_json.h"
#include "gtest/gtest.h"

namespace clusterd::recovery {
namespace side_effects_test {

TEST(SideEffects, PodGroupPatches) {
  EXPECT_EQ(CanonicalJson(ProcessRecoverEnablePatch("pause")),
            R"({"metadata":{"labels":{"process-recover-enable":"pause"}}})");
  EXPECT_EQ(CanonicalJson(RecoverStatusPatch("recover-success")),
            R"({"metadata":{"annotations":{"ProcessRecoverStatus":"recover-success"}}})");
  EXPECT_EQ(CanonicalJson(ConfirmFaultPatch({{10, 1}, {3, 0}, {10, 0}})),
            R"({"metadata":{"annotations":{"ProcessConfirmFault":"3:0,10:1"}}})");
}

TEST(SideEffects, PodPatches) {
  EXPECT_EQ(CanonicalJson(FaultTypePatch(true)),
            R"({"metadata":{"labels":{"fault-type":"retry-fault"}}})");
  EXPECT_EQ(CanonicalJson(FaultTypePatch(false)),
            R"({"metadata":{"labels":{"fault-type":"software"}}})");
  EXPECT_EQ(
      CanonicalJson(HotSwitchPreparePatch()),
      R"({"metadata":{"annotations":{"inHotSwitchFlow":"true","needOperatorOpe":"create"}}})");
  EXPECT_EQ(
      CanonicalJson(DeleteForSubHealthPatch()),
      R"({"metadata":{"annotations":{"needVolcanoOpe":"delete"},"labels":{"fault-type":"SubHealth"}}})");
  EXPECT_EQ(
      CanonicalJson(HotSwitchFailureCleanupPatch()),
      R"({"metadata":{"annotations":{"inHotSwitchFlow":null,"backupNewPodName":null,"needOperatorOpe":null}}})");
  EXPECT_EQ(CanonicalJson(BackupDeletePatch()),
            R"({"metadata":{"annotations":{"needOperatorOpe":"delete"}}})");
  EXPECT_EQ(CanonicalJson(HotSwitchSuccessCleanupPatch()),
            R"({"metadata":{"annotations":{"inHotSwitchFlow":null}}})");
}

TEST(SideEffects, NodeAndFaultJobInfoPatches) {
  EXPECT_EQ(CanonicalJson(NodeUnhealthyPatch()),
            R"({"metadata":{"annotations":{"NodeHealthyStatus":"UnHealthy"}}})");
  EXPECT_EQ(CanonicalJson(FaultJobInfoRemovalPatch("J")), R"({"data":{"J":null}})");
  EXPECT_EQ(FaultJobInfoValue({{"n3", "1"}, {"n1", "0"}, {"n2", "0"}, {"n4", ""}}, {"n2", "n4"}),
            R"({"0":{"faultNodes":["n2"],"healthyNodes":["n1"]},)"
            R"("1":{"faultNodes":[],"healthyNodes":["n3"]}})");
  EXPECT_EQ(FaultJobInfoValue({}, {}), "{}");
  EXPECT_EQ(FaultJobInfoConfigMap("J", "{}")["data"]["J"], "{}");
}

}  // namespace side_effects_test
}  // namespace clusterd::recovery
