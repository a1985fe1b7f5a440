#include "common/metrics.h"

#include "gtest/gtest.h"

namespace clusterd {
namespace metrics_test {

TEST(MetricsRegistry, RendersCountersGaugesAndHistogramsInPrometheusText) {
  MetricsRegistry registry;
  registry.GetCounter("x_total", "Things.", {{"reason", "bad \"json\""}}).Increment(3);
  registry.GetGauge("depth", "Queue depth.").Set(2.5);
  Histogram& h = registry.GetHistogram("lat_seconds", "Latency.", {0.1, 1});
  h.Observe(0.05);
  h.Observe(0.5);
  h.Observe(7);
  EXPECT_EQ(registry.RenderPrometheus(),
            "# HELP depth Queue depth.\n"
            "# TYPE depth gauge\n"
            "depth 2.5\n"
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{le=\"0.1\"} 1\n"
            "lat_seconds_bucket{le=\"1\"} 2\n"
            "lat_seconds_bucket{le=\"+Inf\"} 3\n"
            "lat_seconds_sum 7.55\n"
            "lat_seconds_count 3\n"
            "# HELP x_total Things.\n"
            "# TYPE x_total counter\n"
            "x_total{reason=\"bad \\\"json\\\"\"} 3\n");
}

TEST(MetricsRegistry, TheSameNameAndLabelsGiveTheSameSeries) {
  MetricsRegistry registry;
  Counter& a = registry.GetCounter("c_total", "C.", {{"k", "v"}});
  Counter& b = registry.GetCounter("c_total", "C.", {{"k", "v"}});
  EXPECT_EQ(&a, &b);
  Counter& other = registry.GetCounter("c_total", "C.", {{"k", "w"}});
  EXPECT_NE(&a, &other);
}

}  // namespace metrics_test
}  // namespace clusterd
