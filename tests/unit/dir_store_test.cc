// What the dir backend adds to the shared contract: the on-disk layout, changes made by other
// processes, bad files, and several stores sharing one directory.

#include "store/dir/dir_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/json_util.h"
#include "common/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store_test_util.h"

namespace clusterd::store {
namespace dir_store_test {

namespace fs = std::filesystem;
using testing::ConfigMap;
using testing::Describe;
using ::testing::ElementsAre;
using testing::EventLog;
using ::testing::HasSubstr;
using testing::Node;
using ::testing::Not;
using testing::TempDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What another process does: write a dotfile in the same directory, then rename it into place.
void WriteExternally(const std::string& path, std::string_view text) {
  fs::path p(path);
  fs::create_directories(p.parent_path());
  std::string temp = (p.parent_path() / ("." + p.filename().string() + ".editor-tmp")).string();
  {
    std::ofstream out(temp, std::ios::trunc);
    out << text;
  }
  fs::rename(temp, path);
}

std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

ObjectKey CmKey(std::string ns, std::string name) {
  return ObjectKey{std::string(kConfigMaps), std::move(ns), std::move(name)};
}

uint64_t BadFiles(std::string_view reason) { return DirStore::BadFilesCounter(reason).Value(); }

// A writer holding a FIFO open, so that a reader's open(2) of it returns at once: what a test
// uses to free a store stuck opening one. Held until the store is gone (a writer's close is
// another inotify event, which would send a stuck watcher back into open).
class FifoWriter {
 public:
  FifoWriter() = default;
  FifoWriter(const FifoWriter&) = delete;
  FifoWriter& operator=(const FifoWriter&) = delete;
  ~FifoWriter() {
    if (fd_ >= 0) close(fd_);
  }
  // Succeeds only while a reader has the FIFO open (or is blocked opening it).
  void Open(const std::string& fifo) {
    if (fd_ < 0) fd_ = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  }

 private:
  int fd_ = -1;
};

class DirStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = Open(); }

  std::unique_ptr<DirStore> Open(DirStore::Options options = {}) {
    auto store = DirStore::Open(root_, options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  // The files adopted at start-up are rewritten by the store's watcher thread after Open.
  bool AwaitDeferredAdoptions(DirStore& store) {
    const absl::Time deadline = absl::Now() + testing::kEventDeadline;
    while (store.DeferredAdoptions() > 0) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  std::unique_ptr<WatchHandle> Watch(ObjectStore& store, std::string_view resource, EventLog& log) {
    auto handle = store.Watch(resource, {}, log.Handler());
    EXPECT_TRUE(handle.ok()) << handle.status();
    return handle.ok() ? *std::move(handle) : nullptr;
  }

  std::string CmPath(std::string_view ns, std::string_view name) {
    return root_ + "/configmaps/" + std::string(ns) + "/" + std::string(name) + ".json";
  }

  // Writes a good file after whatever a test did; once its event arrives, every earlier
  // change to the directory has been processed (inotify events are handled in order).
  void Barrier(EventLog& log, std::string_view name = "barrier") {
    WriteExternally(CmPath("default", name), R"({"apiVersion": "v1", "kind": "ConfigMap"})");
    ASSERT_TRUE(log.WaitFor(WatchEventType::kAdded, name));
  }

  TempDir tmp_;
  std::string root_ = tmp_.path() + "/state";
  FifoWriter fifo_writer_;  // closed after store_ is destroyed
  std::unique_ptr<DirStore> store_;
};

TEST_F(DirStoreTest, FilesFollowTheDocumentedLayout) {
  store_.reset();
  ManualClock clock;
  store_ = Open(DirStore::Options{.clock = &clock});
  // Field order is the writer's: uid given before the labels, data keys not sorted.
  Object cm = Object::parse(R"({"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"name": "job-a", "namespace": "team-1",
                   "uid": "11111111-2222-4333-8444-555555555555", "labels": {"app": "x"}},
      "data": {"b": "2", "a": "1"}})");
  ASSERT_TRUE(store_->Create(kConfigMaps, cm).ok());
  ASSERT_TRUE(store_->Create(kNodes, Node("node-1")).ok());

  EXPECT_THAT(Entries(root_), ::testing::UnorderedElementsAre(".lock", ".resource-version", ".tmp",
                                                              "configmaps", "nodes"));
  // Temp files are written outside the watched directories and renamed into place.
  EXPECT_THAT(Entries(root_ + "/.tmp"), ::testing::IsEmpty());
  EXPECT_THAT(Entries(root_ + "/configmaps"), ElementsAre("team-1"));
  EXPECT_THAT(Entries(root_ + "/configmaps/team-1"), ElementsAre("job-a.json"));
  EXPECT_THAT(Entries(root_ + "/nodes"), ElementsAre("node-1.json"));
  EXPECT_EQ(ReadFile(root_ + "/.resource-version"), "2\n");
  EXPECT_EQ(ReadFile(root_ + "/configmaps/team-1/job-a.json"), R"({
  "apiVersion": "v1",
  "kind": "ConfigMap",
  "metadata": {
    "name": "job-a",
    "namespace": "team-1",
    "uid": "11111111-2222-4333-8444-555555555555",
    "resourceVersion": "1",
    "creationTimestamp": "2024-06-10T06:13:20Z",
    "labels": {
      "app": "x"
    }
  },
  "data": {
    "b": "2",
    "a": "1"
  }
}
)");
  Object node = Object::parse(ReadFile(root_ + "/nodes/node-1.json"));
  EXPECT_EQ(ResourceVersionOf(node), "2");
  EXPECT_FALSE(node["metadata"].contains("namespace"));
  EXPECT_EQ(store_->PathOf(ObjectKey{"nodes", "", "node-1"}), root_ + "/nodes/node-1.json");
}

TEST_F(DirStoreTest, WritesGoOnWhenTheTempDirectoryIsRemoved) {
  ASSERT_TRUE(store_->Create(kNodes, Node("node-1")).ok());
  std::filesystem::remove_all(root_ + "/.tmp");
  ASSERT_TRUE(store_->Create(kNodes, Node("node-2")).ok());
  EXPECT_THAT(Entries(root_ + "/nodes"), ElementsAre("node-1.json", "node-2.json"));
  EXPECT_THAT(Entries(root_ + "/.tmp"), ::testing::IsEmpty());
}

TEST_F(DirStoreTest, AFileWrittenByAnotherProcessIsAddedWithUidAndVersion) {
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  WriteExternally(CmPath("default", "from-agent"),
                  R"({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}})");
  ASSERT_TRUE(log.WaitFor(WatchEventType::kAdded, "from-agent"));
  const Object added = log.Events()[0].object();
  EXPECT_EQ(NamespaceOf(added), "default");
  EXPECT_FALSE(UidOf(added).empty());
  EXPECT_FALSE(ResourceVersionOf(added).empty());
  EXPECT_EQ(added["data"]["k"], "v");
  // The file was adopted: rewritten with the assigned identity.
  Object on_disk = Object::parse(ReadFile(CmPath("default", "from-agent")));
  EXPECT_EQ(on_disk, added);
  EXPECT_EQ(*store_->Get(CmKey("default", "from-agent")), added);
}

TEST_F(DirStoreTest, FilesInNewDirectoriesArePickedUp) {
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  EventLog nodes;
  auto nodes_handle = Watch(*store_, kNodes, nodes);
  // Directories and files appear together, as with `cp -r` or `mkdir -p && cat >`.
  for (int i = 0; i < 5; ++i) {
    WriteExternally(CmPath("ns-" + std::to_string(i), "cm"), "{}");
  }
  WriteExternally(root_ + "/nodes/node-1.json", R"({"kind": "Node"})");
  ASSERT_TRUE(log.WaitForCount(5));
  ASSERT_TRUE(nodes.WaitFor(WatchEventType::kAdded, "node-1"));
  std::set<std::string> namespaces;
  for (const auto& e : log.Events()) namespaces.insert(NamespaceOf(e.object()));
  EXPECT_EQ(namespaces.size(), 5u);
}

TEST_F(DirStoreTest, AHandEditKeepingTheVersionGetsANewVersion) {
  Object created = *store_->Create(kConfigMaps, ConfigMap("default", "a", {}, {{"k", "1"}}));
  EventLog log;
  WatchOptions from_now;
  from_now.resource_version = ResourceVersionOf(created);
  auto handle = *store_->Watch(kConfigMaps, from_now, log.Handler());

  Object edited = Object::parse(ReadFile(CmPath("default", "a")));
  edited["data"]["k"] = "2";  // resourceVersion left as it was
  WriteExternally(CmPath("default", "a"), edited.dump(2));
  ASSERT_TRUE(log.WaitFor(WatchEventType::kModified, "a"));
  Object seen = log.Events()[0].object();
  EXPECT_EQ(seen["data"]["k"], "2");
  EXPECT_EQ(UidOf(seen), UidOf(created));
  EXPECT_GT(std::stoull(ResourceVersionOf(seen)), std::stoull(ResourceVersionOf(created)));
  EXPECT_EQ(ResourceVersionOf(Object::parse(ReadFile(CmPath("default", "a")))),
            ResourceVersionOf(seen));

  // An editor that rewrites the file in place is seen as well.
  edited = Object::parse(ReadFile(CmPath("default", "a")));
  edited["data"]["k"] = "3";
  {
    std::ofstream out(CmPath("default", "a"), std::ios::trunc);
    out << edited.dump(2);
  }
  ASSERT_TRUE(log.WaitUntil([](const std::vector<WatchEvent>& events) {
    return events.size() >= 2 && events[1].object()["data"]["k"] == "3";
  }));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("MODIFIED a", "MODIFIED a"));
}

TEST_F(DirStoreTest, ADeletedFileIsADeletedEvent) {
  Object created = *store_->Create(kConfigMaps, ConfigMap("default", "a"));
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  ASSERT_TRUE(log.WaitForCount(1));
  fs::remove(CmPath("default", "a"));
  ASSERT_TRUE(log.WaitFor(WatchEventType::kDeleted, "a"));
  EXPECT_EQ(UidOf(log.Events()[1].object()), UidOf(created));
  EXPECT_GT(std::stoull(ResourceVersionOf(log.Events()[1].object())),
            std::stoull(ResourceVersionOf(created)));
  EXPECT_EQ(store_->Get(CmKey("default", "a")).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DirStoreTest, RemovingANamespaceDirectoryDeletesItsObjects) {
  ASSERT_TRUE(store_->Create(kConfigMaps, ConfigMap("gone", "a")).ok());
  ASSERT_TRUE(store_->Create(kConfigMaps, ConfigMap("gone", "b")).ok());
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  fs::remove_all(root_ + "/configmaps/gone");
  ASSERT_TRUE(log.WaitForCount(4));
  auto events = Describe(log.Events());
  EXPECT_THAT(std::vector<std::string>(events.begin(), events.begin() + 2),
              ElementsAre("ADDED a", "ADDED b"));
  EXPECT_THAT(std::vector<std::string>(events.begin() + 2, events.end()),
              ::testing::UnorderedElementsAre("DELETED a", "DELETED b"));
  // The namespace can come back.
  ASSERT_TRUE(store_->Create(kConfigMaps, ConfigMap("gone", "c")).ok());
  WriteExternally(CmPath("gone", "d"), "{}");
  ASSERT_TRUE(log.WaitFor(WatchEventType::kAdded, "d"));
}

TEST_F(DirStoreTest, OwnWritesAreNotEchoedByInotify) {
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  Object a = *store_->Create(kConfigMaps, ConfigMap("default", "a"));
  ASSERT_TRUE(store_->Patch(CmKey("default", "a"), {{"data", {{"k", "1"}}}}).ok());
  ASSERT_TRUE(store_->Create(kConfigMaps, ConfigMap("default", "b")).ok());
  ASSERT_TRUE(store_->Delete(CmKey("default", "b")).ok());
  Barrier(log);
  EXPECT_THAT(Describe(log.Events()),
              ElementsAre("ADDED a", "MODIFIED a", "ADDED b", "DELETED b", "ADDED barrier"));
}

TEST_F(DirStoreTest, BadFilesAreSkippedCountedAndDoNotDisturbOtherObjects) {
  Object kept = *store_->Create(kConfigMaps, ConfigMap("default", "kept", {}, {{"k", "good"}}));
  EventLog log;
  WatchOptions from_now;
  from_now.resource_version = ResourceVersionOf(kept);
  auto handle = *store_->Watch(kConfigMaps, from_now, log.Handler());
  uint64_t malformed = BadFiles("malformed");
  uint64_t too_large = BadFiles("too_large");
  uint64_t not_object = BadFiles("not_object");
  uint64_t mismatch = BadFiles("path_mismatch");
  uint64_t invalid = BadFiles("invalid");

  WriteExternally(CmPath("default", "kept"), "{ this is not json");  // a broken edit
  WriteExternally(CmPath("default", "huge"),
                  R"({"data": {"blob": ")" + std::string(DirStore::kMaxFileSize, 'x') + "\"}}");
  WriteExternally(CmPath("default", "list"), "[1, 2, 3]");
  WriteExternally(CmPath("default", "moved"), R"({"metadata": {"name": "elsewhere"}})");
  WriteExternally(CmPath("default", "bad-labels"), R"({"metadata": {"labels": {"a": 1}}})");
  WriteExternally(CmPath("default", "Bad_Name"), "{}");
  Barrier(log);

  EXPECT_EQ(BadFiles("malformed"), malformed + 1);
  EXPECT_EQ(BadFiles("too_large"), too_large + 1);
  EXPECT_EQ(BadFiles("not_object"), not_object + 1);
  EXPECT_EQ(BadFiles("path_mismatch"), mismatch + 1);
  EXPECT_EQ(BadFiles("invalid"), invalid + 2);
  EXPECT_THAT(MetricsRegistry::Default().RenderPrometheus(),
              HasSubstr("clusterd_store_bad_files_total{reason=\"malformed\"}"));
  // No event for any of them; the last good version of "kept" is still served.
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED barrier"));
  EXPECT_EQ((*store_->Get(CmKey("default", "kept")))["data"]["k"], "good");
  auto list = store_->List(kConfigMaps, {});
  EXPECT_EQ(list->items.size(), 2u);  // kept, barrier

  // Fixing the file brings the object back to life.
  Object fixed = kept;
  fixed["data"]["k"] = "fixed";
  WriteExternally(CmPath("default", "kept"), fixed.dump(2));
  ASSERT_TRUE(log.WaitFor(WatchEventType::kModified, "kept"));
  EXPECT_EQ((*store_->Get(CmKey("default", "kept")))["data"]["k"], "fixed");
}

TEST_F(DirStoreTest, BadFilesAtStartupAreSkippedAndCounted) {
  store_.reset();
  uint64_t malformed = BadFiles("malformed");
  WriteExternally(CmPath("default", "broken"), "{");
  WriteExternally(CmPath("default", "fine"), "{}");
  store_ = Open();
  EXPECT_EQ(BadFiles("malformed"), malformed + 1);
  EXPECT_EQ(store_->Get(CmKey("default", "broken")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->Get(CmKey("default", "fine")).ok());
  // A store over a broken file can still create the object, replacing the file.
  EXPECT_TRUE(store_->Create(kConfigMaps, ConfigMap("default", "broken")).ok());
}

// Every walk of a parsed object recurses (copies, serialisation, canonical JSON): a file nested
// deeper than kMaxJsonDepth is refused like any other JSON input, and says where.
TEST_F(DirStoreTest, AFileNestedDeeperThanTheJsonLimitIsSkippedAsMalformed) {
  store_.reset();
  uint64_t malformed = BadFiles("malformed");
  const int depth = kMaxJsonDepth + 1;
  WriteExternally(CmPath("default", "deep"),
                  R"({"data": {"k": )" + std::string(depth, '[') + std::string(depth, ']') + "}}");
  WriteExternally(CmPath("default", "fine"), "{}");
  store_ = Open();
  EXPECT_EQ(BadFiles("malformed"), malformed + 1);
  EXPECT_EQ(store_->Get(CmKey("default", "deep")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->Get(CmKey("default", "fine")).ok());
}

TEST_F(DirStoreTest, ManyFilesAtStartUpAreEachLoadedOnceWhateverThreadReadsThem) {
  // Enough files that start-up reads them on several threads (ReadObjectFiles), with bad
  // files spread among the good ones: each good file is loaded under its own key, each bad one
  // is counted once, and the versions stay distinct.
  store_.reset();
  uint64_t malformed = BadFiles("malformed");
  constexpr int kFiles = 6000;
  for (int i = 0; i < kFiles; ++i) {
    std::string name = "cm-" + std::to_string(i);
    if (i % 1000 == 999) {
      WriteExternally(CmPath("ns-" + std::to_string(i % 7), name), "{\"data\":");
    } else {
      WriteExternally(CmPath("ns-" + std::to_string(i % 7), name),
                      R"({"data":{"index":")" + std::to_string(i) + R"("}})");
    }
  }
  store_ = Open();
  EXPECT_EQ(BadFiles("malformed"), malformed + kFiles / 1000);
  auto list = store_->List(kConfigMaps, {});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), static_cast<size_t>(kFiles - kFiles / 1000));
  std::set<std::string> versions;
  for (const Object& cm : list->items) {
    const std::string name = NameOf(cm);
    const int index = std::stoi(name.substr(3));
    EXPECT_EQ(cm["data"]["index"], std::to_string(index)) << name;
    EXPECT_EQ(NamespaceOf(cm), "ns-" + std::to_string(index % 7)) << name;
    versions.insert(ResourceVersionOf(cm));
  }
  EXPECT_EQ(versions.size(), list->items.size());
}

TEST_F(DirStoreTest, WhatAWriteReturnsIsWhatAReaderOfTheFileGets) {
  // Most objects are written exactly and kept as they are; a string with bytes that are not
  // UTF-8 is written with U+FFFD in their place, and the store then holds that too, so that
  // the object does not change at the next start.
  Object exact = ConfigMap("default", "exact");
  exact["data"] = {{"text", "ascii and \xc3\xa9"}, {"ratio", "0.1"}};
  Object bad = ConfigMap("default", "bad");
  bad["data"] = {{"text", std::string("a\xff") + "b"}};
  auto written_exact = store_->Create(kConfigMaps, exact);
  auto written_bad = store_->Create(kConfigMaps, bad);
  ASSERT_TRUE(written_exact.ok()) << written_exact.status();
  ASSERT_TRUE(written_bad.ok()) << written_bad.status();
  EXPECT_EQ((*written_exact)["data"]["text"], "ascii and \xc3\xa9");
  EXPECT_EQ((*written_bad)["data"]["text"],
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(*store_->Get(CmKey("default", "bad")), *written_bad);
  store_.reset();
  store_ = Open();
  EXPECT_EQ(*store_->Get(CmKey("default", "exact")), *written_exact);
  EXPECT_EQ(*store_->Get(CmKey("default", "bad")), *written_bad);
}

TEST_F(DirStoreTest, DotfilesAndOtherFilesAreIgnored) {
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  uint64_t bad_before = BadFiles("malformed") + BadFiles("invalid");
  WriteExternally(CmPath("default", ".hidden"), "{}");
  WriteExternally(root_ + "/configmaps/default/notes.txt", "not json");
  WriteExternally(root_ + "/configmaps/default/a.json.swp", "not json");
  WriteExternally(root_ + "/configmaps/misplaced.json", "{}");
  WriteExternally(root_ + "/widgets/default/w.json", "{}");
  Barrier(log);
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED barrier"));
  EXPECT_EQ(BadFiles("malformed") + BadFiles("invalid"), bad_before);
}

TEST_F(DirStoreTest, AnotherStoreOnTheDirectorySeesTheSameObjects) {
  auto other = Open();
  EventLog log;
  auto handle = Watch(*other, kConfigMaps, log);
  Object created = *store_->Create(kConfigMaps, ConfigMap("default", "a"));
  ASSERT_TRUE(log.WaitFor(WatchEventType::kAdded, "a"));
  EXPECT_EQ(log.Events()[0].object(), created);
  EXPECT_EQ(*other->Get(CmKey("default", "a")), created);
  Object patched = *store_->Patch(CmKey("default", "a"), {{"data", {{"k", "1"}}}});
  ASSERT_TRUE(store_->Delete(CmKey("default", "a")).ok());
  ASSERT_TRUE(log.WaitFor(WatchEventType::kDeleted, "a"));
  auto events = log.Events();
  // The other store may see the patch or only the delete, never a different version.
  EXPECT_EQ(events.back().type, WatchEventType::kDeleted);
  for (const auto& e : events) {
    if (e.type == WatchEventType::kModified) {
      EXPECT_EQ(e.object(), patched);
    }
  }
}

TEST_F(DirStoreTest, AStaleWriterInAnotherStoreIsAborted) {
  auto other = Open();
  Object created = *store_->Create(kConfigMaps, ConfigMap("default", "a", {}, {{"k", "0"}}));
  Object mine = created;
  mine["data"]["k"] = "mine";
  ASSERT_TRUE(store_->Update(kConfigMaps, mine).ok());
  // Right away, before the other store's inotify thread may have caught up: it re-reads the
  // file under the lock instead of trusting its cache.
  Object theirs = created;
  theirs["data"]["k"] = "theirs";
  auto result = other->Update(kConfigMaps, theirs);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kAborted) << result.status();
  EXPECT_EQ(other->Delete(CmKey("default", "a"), ResourceVersionOf(created)).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ((*other->Get(CmKey("default", "a")))["data"]["k"], "mine");
}

TEST_F(DirStoreTest, TwoStoresIncrementingOneCounterLoseNothing) {
  auto other = Open();
  ASSERT_TRUE(store_->Create(kConfigMaps, ConfigMap("default", "counter", {}, {{"n", "0"}})).ok());
  {
    EventLog other_log;  // reads are served from each store's cache: let `other` see it first
    auto h = Watch(*other, kConfigMaps, other_log);
    ASSERT_TRUE(other_log.WaitFor(WatchEventType::kAdded, "counter"));
  }
  constexpr int kIncrements = 200;
  auto increment = [&](ObjectStore* store, int* conflicts) {
    for (int done = 0; done < kIncrements;) {
      auto cm = store->Get(CmKey("default", "counter"));
      ASSERT_TRUE(cm.ok()) << cm.status();
      (*cm)["data"]["n"] = std::to_string(std::stoi((*cm)["data"]["n"].get<std::string>()) + 1);
      auto result = store->Update(kConfigMaps, *cm);
      if (result.ok()) {
        ++done;
      } else {
        ASSERT_EQ(result.status().code(), absl::StatusCode::kAborted) << result.status();
        ++*conflicts;
      }
    }
  };
  int conflicts_a = 0;
  int conflicts_b = 0;
  std::thread a(increment, store_.get(), &conflicts_a);
  std::thread b(increment, other.get(), &conflicts_b);
  a.join();
  b.join();
  Object on_disk = Object::parse(ReadFile(CmPath("default", "counter")));
  EXPECT_EQ(on_disk["data"]["n"], std::to_string(2 * kIncrements));
  // Each store's cache catches up with the other's last write.
  for (DirStore* store : {store_.get(), other.get()}) {
    EventLog seen;
    auto h = Watch(*store, kConfigMaps, seen);
    ASSERT_TRUE(seen.WaitUntil([](const std::vector<WatchEvent>& events) {
      for (const auto& e : events) {
        if (e.object()["data"]["n"] == std::to_string(2 * kIncrements)) return true;
      }
      return false;
    }));
  }
  RecordProperty("conflicts", conflicts_a + conflicts_b);
}

TEST_F(DirStoreTest, ReopeningKeepsObjectsAndTheVersionCounter) {
  Object a = *store_->Create(kConfigMaps, ConfigMap("default", "a"));
  ASSERT_TRUE(store_->Create(kConfigMaps, ConfigMap("default", "b")).ok());
  ASSERT_TRUE(store_->Delete(CmKey("default", "b")).ok());
  std::string version = store_->List(kConfigMaps, {})->resource_version;
  store_.reset();
  store_ = Open();
  EXPECT_EQ(*store_->Get(CmKey("default", "a")), a);
  EXPECT_EQ(store_->List(kConfigMaps, {})->resource_version, version);
  Object c = *store_->Create(kConfigMaps, ConfigMap("default", "c"));
  EXPECT_EQ(std::stoull(ResourceVersionOf(c)), std::stoull(version) + 1);
  // History does not survive a restart: watching from before it is "410 Gone".
  WatchOptions old;
  old.resource_version = ResourceVersionOf(a);
  EXPECT_EQ(store_->Watch(kConfigMaps, old, [](const WatchEvent&) {}).status().code(),
            absl::StatusCode::kOutOfRange);
  old.resource_version = version;
  EventLog log;
  auto handle = *store_->Watch(kConfigMaps, old, log.Handler());
  ASSERT_TRUE(log.WaitForCount(1));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED c"));
}

TEST_F(DirStoreTest, AFullConfigMapOfJsonTextIsReadBackAfterARestart) {
  // Each quote of the value takes two bytes in the file: the file is twice the data.
  Object cm = ConfigMap("default", "full", {}, {{"a", std::string((size_t{1} << 20) - 1, '"')}});
  ASSERT_TRUE(store_->Create(kConfigMaps, cm).ok());
  const uint64_t too_large = BadFiles("too_large");
  store_.reset();
  store_ = Open();
  auto got = store_->Get(CmKey("default", "full"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["data"]["a"], cm["data"]["a"]);
  EXPECT_EQ(BadFiles("too_large"), too_large);
}

TEST_F(DirStoreTest, AnObjectLargerThanAFileMayBeIsRefusedNotWritten) {
  Object pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", "p"},
                  {"namespace", "default"},
                  {"annotations", {{"a", std::string(DirStore::kMaxFileSize, 'x')}}}}}};
  auto refused = store_->Create(kPods, pod);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("a dir store file holds at most"));
  EXPECT_EQ(store_->Get({std::string(kPods), "default", "p"}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(root_ + "/pods/default/p.json"));
}

TEST_F(DirStoreTest, FilesWithoutIdentityAreAdoptedAtStartup) {
  store_.reset();
  WriteExternally(CmPath("default", "seed"), R"({"data": {"k": "v"}})");
  WriteExternally(root_ + "/nodes/node-1.json", "{}");
  store_ = Open();
  auto seed = store_->Get(CmKey("default", "seed"));
  ASSERT_TRUE(seed.ok()) << seed.status();
  EXPECT_FALSE(UidOf(*seed).empty());
  ASSERT_TRUE(AwaitDeferredAdoptions(*store_));
  EXPECT_EQ(Object::parse(ReadFile(CmPath("default", "seed"))), *seed);
  EXPECT_TRUE(store_->Get(ObjectKey{"nodes", "", "node-1"}).ok());
  EXPECT_EQ(ReadFile(root_ + "/.resource-version"),
            store_->List(kNodes, {})->resource_version + "\n");
}

// Start-up reads each file once and writes none: the identity a file without one is given is
// the cache's as soon as the store is open, the file gets it afterwards (with the same uid and
// version, so no watch sees a change), and one line says how many files were adopted.
TEST_F(DirStoreTest, StartUpAdoptsInMemoryAndRewritesTheFilesAfterwards) {
  store_.reset();
  constexpr int kFiles = 600;  // more than one rewrite pass
  for (int i = 0; i < kFiles; ++i) {
    WriteExternally(CmPath("default", "cm-" + std::to_string(i)), R"({"data": {"k": "v"}})");
  }
  Counter& adopted = MetricsRegistry::Default().GetCounter(
      std::string(DirStore::kAdoptedFilesMetric), "", {{"when", "startup"}});
  const uint64_t before = adopted.Value();
  store_ = Open();
  EXPECT_EQ(adopted.Value() - before, static_cast<uint64_t>(kFiles));
  absl::StatusOr<ObjectList> listed = store_->List(kConfigMaps, {});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), static_cast<size_t>(kFiles));
  EventLog log;
  WatchOptions from_list;
  from_list.resource_version = listed->resource_version;
  auto handle = store_->Watch(kConfigMaps, from_list, log.Handler());
  ASSERT_TRUE(handle.ok());
  ASSERT_TRUE(AwaitDeferredAdoptions(*store_));
  for (const Object& o : listed->items) {
    EXPECT_EQ(Object::parse(ReadFile(CmPath("default", NameOf(o)))), o) << NameOf(o);
  }
  // The rewrites are not changes: a write after them is the first event.
  ASSERT_TRUE(store_->Create(kConfigMaps, ConfigMap("default", "after")).ok());
  ASSERT_TRUE(log.WaitFor(WatchEventType::kAdded, "after"));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED after"));
}

// The rewrite of adopted files is background work: while one of its passes is held midway
// (its temp files written, its renames to come), a write of the store completes and a change
// made by another program reaches a watch. It once ran on the watcher thread under the writers'
// lock, 256 durable writes a pass: on disk a pass took seconds, and a changed device-info
// waited for it (a first start of 20,000 nodes lost 17 of 40 faults).
// Holds the first pass of the background rewrite of adopted files until `release`, once it has
// begun (`in_pass`): Options() gives the store the hook.
struct HeldPass {
  absl::Notification in_pass;
  absl::Notification release;
  std::atomic<int> passes{0};

  DirStore::Options Options() {
    DirStore::Options options;
    options.adoption_pass_hook = [this] {
      if (passes.fetch_add(1) > 0) return;
      in_pass.Notify();
      release.WaitForNotification();
    };
    return options;
  }
};

TEST_F(DirStoreTest, TheRewriteOfAdoptedFilesHoldsUpNeitherWritesNorTheWatcher) {
  store_.reset();
  for (int i = 0; i < 200; ++i) {
    WriteExternally(CmPath("default", "cm-" + std::to_string(i)), R"({"data": {"k": "v"}})");
  }
  HeldPass held;
  absl::Cleanup close_store = [&] { store_.reset(); };  // before `held`, which its hook uses
  store_ = Open(held.Options());
  ASSERT_NE(store_, nullptr);
  absl::Notification& in_pass = held.in_pass;
  absl::Notification& release = held.release;
  std::future<bool> written;  // declared before the cleanup: the pass is released first
  absl::Cleanup release_pass = [&] {
    if (!release.HasBeenNotified()) release.Notify();
  };
  ASSERT_TRUE(in_pass.WaitForNotificationWithTimeout(testing::kEventDeadline));
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  ASSERT_NE(handle, nullptr);
  written = std::async(std::launch::async, [&] {
    return store_->Create(kConfigMaps, ConfigMap("default", "written")).ok();
  });
  ASSERT_EQ(written.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(written.get());
  WriteExternally(CmPath("default", "outside"), R"({"data": {"k": "v"}})");
  EXPECT_TRUE(log.WaitFor(WatchEventType::kAdded, "outside"));
  EXPECT_GT(store_->DeferredAdoptions(), 0u);  // the pass was still held
  release.Notify();
  ASSERT_TRUE(AwaitDeferredAdoptions(*store_));
  for (int i = 0; i < 200; ++i) {
    const std::string name = "cm-" + std::to_string(i);
    auto cached = store_->Get(CmKey("default", name));
    ASSERT_TRUE(cached.ok()) << name;
    EXPECT_EQ(Object::parse(ReadFile(CmPath("default", name))), *cached) << name;
  }
}

// A file another program changes while the rewrite's pass holds it (its temp file written, its
// rename to come) keeps that program's content: the pass sees that the cache and the file moved
// on and drops its temp file, and the watcher takes the change.
TEST_F(DirStoreTest, TheRewriteOfAdoptedFilesNeverOverwritesAnOutsideChange) {
  store_.reset();
  for (int i = 0; i < 10; ++i) {  // one pass holds them all
    WriteExternally(CmPath("default", "cm-" + std::to_string(i)), R"({"data": {"k": "v"}})");
  }
  HeldPass held;
  absl::Cleanup close_store = [&] { store_.reset(); };  // before `held`, which its hook uses
  store_ = Open(held.Options());
  ASSERT_NE(store_, nullptr);
  absl::Notification& in_pass = held.in_pass;
  absl::Notification& release = held.release;
  absl::Cleanup release_pass = [&] {
    if (!release.HasBeenNotified()) release.Notify();
  };
  ASSERT_TRUE(in_pass.WaitForNotificationWithTimeout(testing::kEventDeadline));
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  ASSERT_NE(handle, nullptr);
  WriteExternally(CmPath("default", "cm-3"), R"({"data": {"k": "changed outside"}})");
  ASSERT_TRUE(log.WaitFor(WatchEventType::kModified, "cm-3"));
  release.Notify();
  ASSERT_TRUE(AwaitDeferredAdoptions(*store_));
  auto cached = store_->Get(CmKey("default", "cm-3"));
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ((*cached)["data"]["k"], "changed outside");
  EXPECT_EQ(Object::parse(ReadFile(CmPath("default", "cm-3")))["data"]["k"], "changed outside");
  EXPECT_TRUE(Entries(root_ + "/" + std::string(DirStore::kTempDir)).empty())
      << "the pass left a temp file behind";
}

// Opens the store at `root` on another thread, giving up after a while: a store that waits on
// something in the directory must fail the test, not hang it. `unblock` is called on timeout
// so that the opening thread can finish (and the future be destroyed).
absl::StatusOr<std::unique_ptr<DirStore>> OpenWithin(const std::string& root,
                                                     const std::function<void()>& unblock) {
  auto opened = std::async(std::launch::async, [&] { return DirStore::Open(root); });
  if (opened.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    unblock();
    (void)opened.get();
    return absl::DeadlineExceededError("opening the store did not finish within 10 s");
  }
  return opened.get();
}

TEST_F(DirStoreTest, AFifoNamedLikeAnObjectFileIsSkippedAtStartUpNotWaitedFor) {
  store_.reset();
  WriteExternally(CmPath("default", "fine"), "{}");
  std::string fifo = CmPath("default", "pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  uint64_t unreadable = BadFiles("unreadable");
  auto store = OpenWithin(root_, [&] { fifo_writer_.Open(fifo); });
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(BadFiles("unreadable"), unreadable + 1);
  EXPECT_EQ((*store)->Get(CmKey("default", "pipe")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*store)->Get(CmKey("default", "fine")).ok());
}

TEST_F(DirStoreTest, AFifoRenamedIntoPlaceIsSkippedAndWritesGoOn) {
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  uint64_t unreadable = BadFiles("unreadable");
  std::string fifo = CmPath("default", "pipe");
  std::string staged = root_ + "/.tmp/pipe";
  ASSERT_EQ(mkfifo(staged.c_str(), 0644), 0) << std::strerror(errno);
  fs::create_directories(fs::path(fifo).parent_path());
  fs::rename(staged, fifo);  // IN_MOVED_TO: the watcher reads it
  auto written = std::async(std::launch::async, [&] {
    return store_->Create(kConfigMaps, ConfigMap("default", "after")).status();
  });
  if (written.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    fifo_writer_.Open(fifo);
    FAIL() << "a write waited for the watcher, stuck on a FIFO";
  }
  EXPECT_TRUE(written.get().ok());
  Barrier(log);
  EXPECT_EQ(BadFiles("unreadable"), unreadable + 1);
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED after", "ADDED barrier"));
}

// A link out of the state directory would put objects beyond the writers' lock, the temp
// directory's file system and the watches: the store follows it neither way.
TEST_F(DirStoreTest, ASymlinkedNamespaceDirectoryIsRefusedOnReadAndOnWrite) {
  store_.reset();
  std::string elsewhere = tmp_.path() + "/elsewhere";
  WriteExternally(elsewhere + "/outside.json", R"({"apiVersion": "v1", "kind": "ConfigMap"})");
  const std::string outside_text = ReadFile(elsewhere + "/outside.json");
  fs::create_directories(root_ + "/configmaps");
  fs::create_directory_symlink(elsewhere, root_ + "/configmaps/linked");
  uint64_t symlinks = BadFiles("symlink");
  store_ = Open();
  ASSERT_NE(store_, nullptr);

  // Read: skipped at start-up, reported once.
  EXPECT_EQ(store_->Get(CmKey("linked", "outside")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadFile(elsewhere + "/outside.json"), outside_text);  // not adopted through the link
  EXPECT_EQ(BadFiles("symlink"), symlinks + 1);

  // Write: refused, naming the link.
  absl::StatusOr<Object> created = store_->Create(kConfigMaps, ConfigMap("linked", "inside"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(created.status().message()), HasSubstr(root_ + "/configmaps/linked"));
  EXPECT_THAT(std::string(created.status().message()), HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(elsewhere + "/inside.json"));
  EXPECT_FALSE(store_->Patch(CmKey("linked", "outside"), {{"data", {{"k", "v"}}}}).ok());
  EXPECT_EQ(ReadFile(elsewhere + "/outside.json"), outside_text);
  EXPECT_EQ(BadFiles("symlink"), symlinks + 1);  // the same link, reported once

  // A link made while the store runs is treated the same.
  EventLog log;
  auto handle = Watch(*store_, kConfigMaps, log);
  fs::create_directory_symlink(elsewhere, root_ + "/configmaps/late");
  Barrier(log);
  EXPECT_EQ(BadFiles("symlink"), symlinks + 2);
  EXPECT_EQ(store_->Get(CmKey("late", "outside")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->Create(kConfigMaps, ConfigMap("late", "inside")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(elsewhere + "/inside.json"));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED barrier"));
}

TEST_F(DirStoreTest, TempFilesLeftByAKilledWriterAreRemovedAtStartUp) {
  store_.reset();
  // What a store killed between creating its temp file and the rename leaves behind: the file
  // name (shortened if long), the writer's pid, a sequence number.
  std::ofstream(root_ + "/.tmp/.a.json.4242.7.tmp") << "{";
  std::ofstream(root_ + "/.tmp/." + std::string(128, 'b') + ".4242.8.tmp") << "{";
  // Someone else's file (a script staging a rename, docs/store-layout.md) is not the store's.
  std::ofstream(root_ + "/.tmp/.settings.json.tmp") << "{}";
  uint64_t removed = DirStore::TempFilesRemovedCounter().Value();
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_THAT(Entries(root_ + "/.tmp"), ElementsAre(".settings.json.tmp"));
  EXPECT_EQ(DirStore::TempFilesRemovedCounter().Value(), removed + 2);
  ASSERT_TRUE(store_->Create(kNodes, Node("node-1")).ok());
  EXPECT_THAT(Entries(root_ + "/.tmp"), ElementsAre(".settings.json.tmp"));
}

TEST_F(DirStoreTest, ALongNameFitsTheFileSystemsNameLimit) {
  // 250 characters: with ".json" the file name is NAME_MAX (255) exactly.
  const std::string name(250, 'a');
  absl::StatusOr<Object> created = store_->Create(kConfigMaps, ConfigMap("default", name));
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_TRUE(store_->Patch(CmKey("default", name), {{"data", {{"k", "v"}}}}).ok());
  EXPECT_TRUE(fs::exists(CmPath("default", name)));
  store_.reset();
  store_ = Open();
  absl::StatusOr<Object> read = store_->Get(CmKey("default", name));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)["data"]["k"], "v");
  EXPECT_EQ(UidOf(*read), UidOf(*created));

  // Longer names are valid in Kubernetes (253) but have no file: a clear refusal.
  absl::StatusOr<Object> too_long =
      store_->Create(kConfigMaps, ConfigMap("default", std::string(251, 'b')));
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(too_long.status().message()), HasSubstr("at most 250"));
}

TEST_F(DirStoreTest, AMissingDirectoryIsCreated) {
  auto store = DirStore::Open(tmp_.path() + "/a/b/c");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE(fs::is_directory(tmp_.path() + "/a/b/c"));
}

TEST_F(DirStoreTest, AnUnusablePathIsAOneLineErrorNamingIt) {
  std::string file = tmp_.path() + "/plain-file";
  std::ofstream(file) << "x";
  for (const std::string& path : {file + "/state", file}) {
    auto store = DirStore::Open(path);
    ASSERT_FALSE(store.ok()) << path;
    std::string message(store.status().message());
    EXPECT_THAT(message, HasSubstr(path));
    EXPECT_THAT(message, HasSubstr("Not a directory"));
    EXPECT_THAT(message, Not(HasSubstr("\n")));
  }
  if (geteuid() != 0) {  // root may write anywhere
    std::string locked = tmp_.path() + "/locked";
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    auto store = DirStore::Open(locked);
    EXPECT_FALSE(store.ok());
    EXPECT_THAT(std::string(store.status().message()), HasSubstr("Permission denied"));
    auto below = DirStore::Open(locked + "/state");
    EXPECT_FALSE(below.ok());
    fs::permissions(locked, fs::perms::owner_all);
  }
  auto spec = OpenStore("dir:" + file);
  EXPECT_FALSE(spec.ok());
}

}  // namespace dir_store_test
}  // namespace clusterd::store
