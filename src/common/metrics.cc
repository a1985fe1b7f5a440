#include "common/metrics.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace clusterd {
namespace {

std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string EscapeLabelValue(const std::string& v) {
  return absl::StrReplaceAll(v, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

std::string EscapeHelp(std::string_view v) {
  return absl::StrReplaceAll(absl::string_view(v.data(), v.size()), {{"\\", "\\\\"}, {"\n", "\\n"}});
}

std::string RenderLabels(const MetricLabels& labels, const std::string& extra_name = "",
                         const std::string& extra_value = "") {
  if (labels.empty() && extra_name.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out += ",";
    first = false;
    absl::StrAppend(&out, k, "=\"", EscapeLabelValue(v), "\"");
  }
  if (!extra_name.empty()) {
    if (!first) out += ",";
    absl::StrAppend(&out, extra_name, "=\"", extra_value, "\"");
  }
  out += "}";
  return out;
}

}  // namespace

void Gauge::Add(double v) {
  double cur = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  absl::MutexLock lock(&mu_);
  ++buckets_[i];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::Read() const {
  absl::MutexLock lock(&mu_);
  Snapshot s;
  s.bounds = bounds_;
  uint64_t running = 0;
  for (uint64_t b : buckets_) {
    running += b;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

MetricsRegistry::Family& MetricsRegistry::FamilyFor(std::string_view name, std::string_view help,
                                                    Kind kind) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(std::string(name), Family{kind, std::string(help), {}, {}, {}}).first;
  }
  // Registering one name with two kinds is a programming error.
  if (it->second.kind != kind) {
    throw std::logic_error("metric " + std::string(name) + " registered with two kinds");
  }
  return it->second;
}

Counter& MetricsRegistry::GetCounter(std::string_view name, std::string_view help,
                                     const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  auto& slot = FamilyFor(name, help, Kind::kCounter).counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& MetricsRegistry::GetGauge(std::string_view name, std::string_view help,
                                 const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  auto& slot = FamilyFor(name, help, Kind::kGauge).gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& MetricsRegistry::GetHistogram(std::string_view name, std::string_view help,
                                         std::vector<double> bounds, const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  auto& slot = FamilyFor(name, help, Kind::kHistogram).histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(std::move(bounds));
  return *slot;
}

std::string MetricsRegistry::RenderPrometheus() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    const char* type = family.kind == Kind::kCounter ? "counter"
                       : family.kind == Kind::kGauge ? "gauge"
                                                     : "histogram";
    absl::StrAppend(&out, "# HELP ", name, " ", EscapeHelp(family.help), "\n");
    absl::StrAppend(&out, "# TYPE ", name, " ", type, "\n");
    for (const auto& [labels, c] : family.counters) {
      absl::StrAppend(&out, name, RenderLabels(labels), " ", c->Value(), "\n");
    }
    for (const auto& [labels, g] : family.gauges) {
      absl::StrAppend(&out, name, RenderLabels(labels), " ", FormatDouble(g->Value()), "\n");
    }
    for (const auto& [labels, h] : family.histograms) {
      Histogram::Snapshot s = h->Read();
      for (size_t i = 0; i < s.bounds.size(); ++i) {
        absl::StrAppend(&out, name, "_bucket", RenderLabels(labels, "le", FormatDouble(s.bounds[i])),
                        " ", s.cumulative[i], "\n");
      }
      absl::StrAppend(&out, name, "_bucket", RenderLabels(labels, "le", "+Inf"), " ",
                      s.cumulative.back(), "\n");
      absl::StrAppend(&out, name, "_sum", RenderLabels(labels), " ", FormatDouble(s.sum), "\n");
      absl::StrAppend(&out, name, "_count", RenderLabels(labels), " ", s.count, "\n");
    }
  }
  return out;
}

MetricsRegistry& MetricsRegistry::Default() {
  static MetricsRegistry* registry = new MetricsRegistry();
  return *registry;
}

std::vector<double> MetricsRegistry::LatencyBounds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};
}

}  // namespace clusterd
