// The profiling switch record of jobs-ranktable-diagnosis.md §5.2.
#include "model/job_profiling_switch.h"

#include "gtest/gtest.h"
#include "model/job_status.h"

namespace clusterd::model {
namespace job_profiling_switch_test {

TEST(ProfilingSwitch, SerialisesInTheSpecOrder) {
  ProfilingSwitch s{"off", "on", "on", "on", "on"};
  EXPECT_EQ(
      SerializeProfilingSwitch(s),
      R"({"CommunicationOperator":"off","Step":"on","SaveCheckpoint":"on","FP":"on","DataLoader":"on"})");
}

TEST(ProfilingSwitch, ParsesWhatItWrites) {
  ProfilingSwitch s{"on", "off", "x", "", "on"};
  auto parsed = ParseProfilingSwitch(SerializeProfilingSwitch(s), "cm");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, s);
}

TEST(ProfilingSwitch, MissingFieldsAreEmptyAndBadJsonIsAnError) {
  auto parsed = ParseProfilingSwitch(R"({"Step":"on"})", "cm");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->step, "on");
  EXPECT_EQ(parsed->fp, "");
  EXPECT_FALSE(ParseProfilingSwitch("{", "cm").ok());
  EXPECT_FALSE(ParseProfilingSwitch(R"({"Step":1})", "cm").ok());
}

TEST(JobStatus, Spellings) {
  EXPECT_EQ(ToString(JobStatus::kComplete), "complete");
  EXPECT_EQ(ParseJobStatus("failed"), JobStatus::kFailed);
  EXPECT_FALSE(ParseJobStatus("completed").has_value());
  EXPECT_TRUE(IsFinished(JobStatus::kComplete));
  EXPECT_FALSE(IsFinished(JobStatus::kRunning));
}

}  // namespace job_profiling_switch_test
}  // namespace clusterd::model
