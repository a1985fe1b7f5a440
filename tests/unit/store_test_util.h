#pragma once

// Helpers shared by the store tests: temporary directories, object builders and a recorder
// of watch events that tests wait on with a deadline (delivery is asynchronous by contract).

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "store/object_store.h"

namespace clusterd::store::testing {

// Generous: only reached when a test is about to fail.
inline constexpr absl::Duration kEventDeadline = absl::Seconds(10);

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "clusterd-store-XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline Object ConfigMap(std::string_view ns, std::string_view name,
                        const Object& labels = Object::object(),
                        const Object& data = Object::object()) {
  Object o;
  o["apiVersion"] = "v1";
  o["kind"] = "ConfigMap";
  o["metadata"]["name"] = name;
  o["metadata"]["namespace"] = ns;
  if (!labels.empty()) o["metadata"]["labels"] = labels;
  o["data"] = data;
  return o;
}

// A Pod a real API server admits: one container with a name and an image (spec.containers is
// required), bound to `node` when not empty, with `phase` as its status when not empty.
inline Object Pod(std::string_view ns, std::string_view name, std::string_view node = "",
                  std::string_view phase = "", const Object& labels = Object::object()) {
  Object o;
  o["apiVersion"] = "v1";
  o["kind"] = "Pod";
  o["metadata"]["name"] = name;
  o["metadata"]["namespace"] = ns;
  if (!labels.empty()) o["metadata"]["labels"] = labels;
  o["spec"]["containers"] = {{{"name", "c"}, {"image", "busybox"}}};
  if (!node.empty()) o["spec"]["nodeName"] = node;
  if (!phase.empty()) o["status"]["phase"] = phase;
  return o;
}

inline Object Node(std::string_view name, const Object& labels = Object::object()) {
  Object o;
  o["apiVersion"] = "v1";
  o["kind"] = "Node";
  o["metadata"]["name"] = name;
  if (!labels.empty()) o["metadata"]["labels"] = labels;
  return o;
}

// Records the events of one watch.
class EventLog {
 public:
  // The handler to pass to Watch. The log must outlive the watch handle.
  WatchHandler Handler() {
    return [this](const WatchEvent& e) {
      absl::MutexLock lock(&mu_);
      events_.push_back(e);
    };
  }

  // Waits until `done(events)` holds; false after kEventDeadline.
  bool WaitUntil(const std::function<bool(const std::vector<WatchEvent>&)>& done) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done(events_); };
    return mu_.AwaitWithTimeout(absl::Condition(&ready), kEventDeadline);
  }
  bool WaitForCount(size_t n) {
    return WaitUntil([n](const std::vector<WatchEvent>& e) { return e.size() >= n; });
  }
  // Waits for an event about object `name` of type `type`.
  bool WaitFor(WatchEventType type, std::string_view name) {
    return WaitUntil([&](const std::vector<WatchEvent>& events) {
      for (const auto& e : events) {
        if (e.type == type && NameOf(e.object()) == name) return true;
      }
      return false;
    });
  }

  std::vector<WatchEvent> Events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  size_t Count() const {
    absl::MutexLock lock(&mu_);
    return events_.size();
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<WatchEvent> events_ ABSL_GUARDED_BY(mu_);
};

// "ADDED a", "MODIFIED b", ... for readable expectations.
inline std::vector<std::string> Describe(const std::vector<WatchEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events)
    out.push_back(std::string(ToString(e.type)) + " " + NameOf(e.object()));
  return out;
}

}  // namespace clusterd::store::testing
