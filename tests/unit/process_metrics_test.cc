// The process_* series (common/process_metrics.h) read from /proc/self.
#include "common/process_metrics.h"

#include <unistd.h>

#include <ctime>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"

namespace clusterd {
namespace process_metrics_test {

std::map<std::string, double> Values(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    double v = 0;
    EXPECT_TRUE(absl::SimpleAtod(line.substr(space + 1), &v)) << line;
    out[line.substr(0, space)] = v;
  }
  return out;
}

TEST(ProcessMetrics, EverySeriesIsThereWithAPlausibleValue) {
  const std::string text = RenderProcessMetrics();
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << text;
  std::map<std::string, double> v = Values(text);
  EXPECT_GE(v["process_cpu_seconds_total"], 0);
  EXPECT_GT(v["process_resident_memory_bytes"], 1 << 20);
  EXPECT_GE(v["process_virtual_memory_bytes"], v["process_resident_memory_bytes"]);
  EXPECT_GE(v["process_open_fds"], 3);  // stdin, stdout, stderr
  EXPECT_GE(v["process_max_fds"], v["process_open_fds"]);
  EXPECT_GE(v["process_threads"], 1);
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(v["process_start_time_seconds"], now + 1);
  EXPECT_GT(v["process_start_time_seconds"], now - 24 * 3600) << "this test process started today";
}

TEST(ProcessMetrics, AnOpenedDescriptorIsCounted) {
  const double before = Values(RenderProcessMetrics())["process_open_fds"];
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const double after = Values(RenderProcessMetrics())["process_open_fds"];
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(after, before + 2);
}

}  // namespace process_metrics_test
}  // namespace clusterd
