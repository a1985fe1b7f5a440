// SharedInformer and InformerFactory over the memory store: one watch per resource, the cache
// and its indexes, handler registration (late, filtered, dropped from inside), relists.

#include "store/informer.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "forwarding_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/memory/memory_store.h"
#include "store_test_util.h"

namespace clusterd::store {
namespace informer_test {

using testing::ConfigMap;
using testing::Describe;
using ::testing::ElementsAre;
using testing::EventLog;
using ::testing::IsEmpty;
using testing::kEventDeadline;

// Counts the lists and watches that reach the store; the first `fail_watches` watches fail with
// OutOfRange after `between` ran (a write between the list and the watch).
class CountingStore final : public clusterd::testing::ForwardingStore {
 public:
  explicit CountingStore(ObjectStore& inner) : ForwardingStore(inner) {}

  absl::StatusOr<ObjectList> List(std::string_view resource, const ListOptions& options) override {
    ++lists[std::string(resource)];
    return ForwardingStore::List(resource, options);
  }
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view resource,
                                                     const WatchOptions& options,
                                                     WatchHandler handler) override {
    ++watches[std::string(resource)];
    if (between) between();
    if (fail_watches > 0) {
      --fail_watches;
      return absl::OutOfRangeError("410 Gone: too old");
    }
    return ForwardingStore::Watch(resource, options, std::move(handler));
  }

  std::map<std::string, int> lists;
  std::map<std::string, int> watches;
  int fail_watches = 0;
  std::function<void()> between;
};

std::vector<std::string> Names(const std::vector<std::shared_ptr<const Object>>& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects) out.push_back(NameOf(*o));
  return out;
}

class InformerTest : public ::testing::Test {
 protected:
  // Writes and returns the new resourceVersion.
  std::string Put(std::string_view name, const Object& labels = Object::object()) {
    Object cm = ConfigMap("ns", name, labels);
    auto existing = memory_.Get({std::string(kConfigMaps), "ns", std::string(name)});
    auto written =
        existing.ok() ? memory_.Update(kConfigMaps, cm) : memory_.Create(kConfigMaps, cm);
    EXPECT_TRUE(written.ok()) << written.status();
    return written.ok() ? ResourceVersionOf(*written) : "";
  }
  std::string Remove(std::string_view name) {
    EXPECT_TRUE(memory_.Delete({std::string(kConfigMaps), "ns", std::string(name)}).ok());
    // The deletion's version is the store's next one: write a marker elsewhere to learn it.
    auto marker = memory_.Create(kNodes, testing::Node(Marker()));
    return marker.ok() ? std::to_string(std::stoull(ResourceVersionOf(*marker)) - 1) : "";
  }
  std::string Marker() { return "marker-" + std::to_string(++markers_); }
  void Await(SharedInformer& informer, const std::string& version) {
    ASSERT_TRUE(informer.WaitForVersion(version, kEventDeadline)) << "version " << version;
  }

  MemoryStore memory_;
  CountingStore store_{memory_};
  InformerFactory factory_{store_};
  int markers_ = 0;
};

TEST_F(InformerTest, OneStoreWatchPerResourceHoweverManyHandlers) {
  SharedInformer& cms = factory_.For(kConfigMaps);
  EXPECT_EQ(&factory_.For(kConfigMaps), &cms);
  SharedInformer& nodes = factory_.For(kNodes);
  EventLog a, b, c;
  auto ra = cms.AddHandler({.on_event = a.Handler()});
  auto rb = cms.AddHandler({.filter = {.ns = "ns"}, .on_event = b.Handler()});
  ASSERT_TRUE(factory_.Start().ok());
  auto rc = cms.AddHandler({.on_event = c.Handler()});
  ASSERT_TRUE(cms.Start().ok());  // idempotent
  EXPECT_TRUE(cms.HasSynced());
  EXPECT_TRUE(nodes.HasSynced());
  Await(cms, Put("one"));
  EXPECT_EQ(store_.watches[std::string(kConfigMaps)], 1);
  EXPECT_EQ(store_.lists[std::string(kConfigMaps)], 1);
  EXPECT_EQ(store_.watches[std::string(kNodes)], 1);
  for (EventLog* log : {&a, &b, &c}) {
    ASSERT_TRUE(log->WaitFor(WatchEventType::kAdded, "one"));
  }
}

TEST_F(InformerTest, IndexesFollowAddsChangesAndDeletes) {
  SharedInformer& cms = factory_.For(kConfigMaps);
  auto by_node = [](const Object& o) -> std::vector<std::string> {
    auto node = o.value(Object::json_pointer("/metadata/labels/node"), std::string());
    if (node.empty()) return {};
    return {node};
  };
  ASSERT_TRUE(cms.AddIndex("node", by_node).ok());
  EXPECT_EQ(cms.AddIndex("node", by_node).code(), absl::StatusCode::kAlreadyExists);
  Put("before", {{"node", "n1"}});
  ASSERT_TRUE(cms.Start().ok());
  EXPECT_THAT(Names(cms.ByIndex("node", "n1")), ElementsAre("before"));

  Await(cms, Put("a", {{"node", "n1"}}));
  Await(cms, Put("b", {{"node", "n2"}}));
  Await(cms, Put("loose"));
  EXPECT_THAT(Names(cms.ByIndex("node", "n1")), ElementsAre("a", "before"));
  EXPECT_THAT(Names(cms.ByIndex("node", "n2")), ElementsAre("b"));
  EXPECT_THAT(Names(cms.List()), ElementsAre("a", "b", "before", "loose"));

  Await(cms, Put("a", {{"node", "n2"}}));  // moves
  EXPECT_THAT(Names(cms.ByIndex("node", "n1")), ElementsAre("before"));
  EXPECT_THAT(Names(cms.ByIndex("node", "n2")), ElementsAre("a", "b"));
  ASSERT_NE(cms.Get("ns", "a"), nullptr);
  EXPECT_EQ((*cms.Get("ns", "a"))["metadata"]["labels"]["node"], "n2");

  Await(cms, Remove("b"));
  EXPECT_THAT(Names(cms.ByIndex("node", "n2")), ElementsAre("a"));
  EXPECT_EQ(cms.Get("ns", "b"), nullptr);
  EXPECT_THAT(cms.ByIndex("node", "n9"), IsEmpty());
  EXPECT_THAT(cms.ByIndex("no-such-index", "n1"), IsEmpty());

  // An index added late is built over what is cached.
  ASSERT_TRUE(
      cms.AddIndex("name", [](const Object& o) -> std::vector<std::string> { return {NameOf(o)}; })
          .ok());
  EXPECT_THAT(Names(cms.ByIndex("name", "loose")), ElementsAre("loose"));
  EXPECT_EQ(cms.Size(), 3u);
}

TEST_F(InformerTest, AHandlerRegisteredAfterTheStartGetsTheExistingObjectsFirst) {
  SharedInformer& cms = factory_.For(kConfigMaps);
  Put("a");
  ASSERT_TRUE(cms.Start().ok());
  Await(cms, Put("b"));
  std::vector<std::string> seen;  // the replay runs inside AddHandler: no wait needed
  auto r = cms.AddHandler({.on_event = [&seen](const WatchEvent& e) {
    seen.push_back(std::string(ToString(e.type)) + " " + NameOf(e.object()));
  }});
  EXPECT_THAT(seen, ElementsAre("ADDED a", "ADDED b"));
  EventLog later;
  auto r2 = cms.AddHandler({.on_event = later.Handler()});
  Put("a", {{"x", "y"}});
  ASSERT_TRUE(later.WaitFor(WatchEventType::kModified, "a"));
  EXPECT_THAT(Describe(later.Events()), ElementsAre("ADDED a", "ADDED b", "MODIFIED a"));

  // With on_replay, the existing objects go there and only the changes to on_event.
  EventLog replayed, changes;
  auto r3 = cms.AddHandler({.on_event = changes.Handler(), .on_replay = replayed.Handler()});
  EXPECT_THAT(Describe(replayed.Events()), ElementsAre("ADDED a", "ADDED b"));
  Await(cms, Put("c"));
  EXPECT_THAT(Describe(changes.Events()), ElementsAre("ADDED c"));
  EXPECT_EQ(replayed.Count(), 2u);
}

TEST_F(InformerTest, AFilterSeesObjectsEnterAndLeaveItAsAddedAndDeleted) {
  SharedInformer& cms = factory_.For(kConfigMaps);
  ASSERT_TRUE(cms.Start().ok());
  EventLog log;
  auto r = cms.AddHandler({.filter = {.ns = "ns", .selector = *LabelSelector::Parse("app=x")},
                           .on_event = log.Handler()});
  EventLog odd;
  auto r2 = cms.AddHandler(
      {.filter = {.predicate = [](const Object& o) { return NameOf(o).starts_with("odd-"); }},
       .on_event = odd.Handler()});
  Await(cms, Put("c"));                               // outside
  Await(cms, Put("c", {{"app", "x"}}));               // enters
  Await(cms, Put("c", {{"app", "x"}, {"v", "2"}}));   // stays
  const std::string left = Put("c", {{"app", "y"}});  // leaves
  Await(cms, left);
  Await(cms, Remove("c"));  // deleted while outside: nothing
  Await(cms, Put("odd-1"));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED c", "MODIFIED c", "DELETED c"));
  const WatchEvent gone = log.Events().back();
  EXPECT_EQ(gone.object()["metadata"]["labels"]["app"], "x");  // the last content that matched
  EXPECT_EQ(ResourceVersionOf(gone.object()), left);
  EXPECT_THAT(Describe(odd.Events()), ElementsAre("ADDED odd-1"));
}

TEST_F(InformerTest, AHandlerMayDropItsOwnRegistrationFromInsideIt) {
  SharedInformer& cms = factory_.For(kConfigMaps);
  ASSERT_TRUE(cms.Start().ok());
  std::unique_ptr<InformerRegistration> self;
  std::atomic<int> calls{0};
  self = cms.AddHandler({.on_event = [&](const WatchEvent&) {
    ++calls;
    self.reset();  // unregisters from the delivery thread
  }});
  EventLog other;
  auto r = cms.AddHandler({.on_event = other.Handler()});
  Await(cms, Put("a"));
  Await(cms, Put("b"));
  ASSERT_TRUE(other.WaitForCount(2));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(self, nullptr);

  // Registering from inside a handler: the new handler's replay runs there and then.
  std::unique_ptr<InformerRegistration> inner;
  EventLog inner_log;
  std::atomic<bool> registered{false};
  auto outer = cms.AddHandler({.on_event = [&](const WatchEvent& e) {
    if (NameOf(e.object()) == "c" && !registered.exchange(true)) {
      inner = cms.AddHandler({.on_event = inner_log.Handler()});
    }
  }});
  Await(cms, Put("c"));
  EXPECT_THAT(Describe(inner_log.Events()), ElementsAre("ADDED a", "ADDED b", "ADDED c"));
}

TEST_F(InformerTest, AWatchFromATooOldVersionListsAgainAndDeliversTheDifference) {
  SharedInformer& cms = factory_.For(kConfigMaps);
  Put("a");
  Put("b");
  EventLog log;
  auto r = cms.AddHandler({.on_event = log.Handler()});
  store_.fail_watches = 1;
  int writes = 0;
  store_.between = [&] {
    if (writes++ > 0) return;
    // Between the first list and its watch: the watch is refused (410), the new list shows it.
    Put("c");
    Put("a", {{"v", "2"}});
    ASSERT_TRUE(memory_.Delete({std::string(kConfigMaps), "ns", "b"}).ok());
  };
  ASSERT_TRUE(cms.Start().ok());
  EXPECT_EQ(store_.lists[std::string(kConfigMaps)], 2);
  EXPECT_EQ(store_.watches[std::string(kConfigMaps)], 2);
  EXPECT_THAT(Names(cms.List()), ElementsAre("a", "c"));
  EXPECT_THAT(Describe(log.Events()),
              ElementsAre("ADDED a", "ADDED b", "MODIFIED a", "ADDED c", "DELETED b"));
  // Then the stream.
  Await(cms, Put("d"));
  ASSERT_TRUE(log.WaitFor(WatchEventType::kAdded, "d"));
}

TEST_F(InformerTest, AStartAfterStopDeliversWhatChangedMeanwhile) {
  SharedInformer& cms = factory_.For(kConfigMaps);
  Put("a");
  Put("b");
  EventLog log;
  auto r = cms.AddHandler({.on_event = log.Handler()});
  ASSERT_TRUE(factory_.Start().ok());
  factory_.Stop();
  Put("c");
  ASSERT_TRUE(memory_.Delete({std::string(kConfigMaps), "ns", "a"}).ok());
  EXPECT_EQ(log.Count(), 2u);  // stopped: nothing delivered
  ASSERT_TRUE(cms.Start().ok());
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED a", "ADDED b", "ADDED c", "DELETED a"));
}

TEST_F(InformerTest, StartFailsWhenTheWatchCannotBeOpened) {
  SharedInformer& cms = factory_.For(kConfigMaps);
  store_.fail_watches = 100;
  absl::Status s = cms.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("informer configmaps"));
  EXPECT_EQ(store_.watches[std::string(kConfigMaps)], 5);
}

// The informer keeps the store's own objects, not copies: one copy of each object in the
// process however many rooms read it (the memory and dir stores hand theirs out through
// ListShared and the watch events).
// A store whose lists come in reverse order.
class ReversingStore final : public clusterd::testing::ForwardingStore {
 public:
  explicit ReversingStore(ObjectStore& inner) : ForwardingStore(inner) {}
  absl::StatusOr<ObjectList> List(std::string_view resource, const ListOptions& options) override {
    absl::StatusOr<ObjectList> list = ForwardingStore::List(resource, options);
    if (list.ok()) std::reverse(list->items.begin(), list->items.end());
    return list;
  }
};

// The first list fills the cache in one pass, sorted by key ("kube-system/a" before "kube/a",
// though the store orders namespace "kube" first), whatever order the list came in; every object
// reaches the handlers as added and is found by its name.
TEST(InformerFirstList, FillsTheCacheByKeyWhateverTheListsOrder) {
  MemoryStore memory;
  for (const auto& [ns, name] : std::vector<std::pair<std::string, std::string>>{
           {"kube", "b"}, {"kube-system", "a"}, {"kube", "a"}, {"x", "c"}}) {
    ASSERT_TRUE(memory.Create(kConfigMaps, ConfigMap(ns, name, Object::object())).ok());
  }
  ReversingStore store(memory);
  SharedInformer informer(store, kConfigMaps);
  std::vector<std::string> added;
  auto r = informer.AddHandler({.on_event = [&added](const WatchEvent& e) {
    added.push_back(std::string(ToString(e.type)) + " " + NamespaceOf(e.object()) + "/" +
                    NameOf(e.object()));
  }});
  ASSERT_TRUE(informer.Start().ok());
  EXPECT_THAT(added,
              ElementsAre("ADDED kube-system/a", "ADDED kube/a", "ADDED kube/b", "ADDED x/c"));
  std::vector<std::string> cached;
  for (const auto& o : informer.List()) cached.push_back(NamespaceOf(*o) + "/" + NameOf(*o));
  EXPECT_THAT(cached, ElementsAre("kube-system/a", "kube/a", "kube/b", "x/c"));
  EXPECT_EQ(informer.Size(), 4u);
  ASSERT_NE(informer.Get("kube", "b"), nullptr);
  EXPECT_EQ(NameOf(*informer.Get("kube", "b")), "b");
  informer.Stop();
}

TEST(InformerSharing, TheCacheHoldsTheStoresObjectsNotCopies) {
  MemoryStore memory;
  ASSERT_TRUE(memory.Create(kConfigMaps, ConfigMap("ns", "listed")).ok());
  InformerFactory factory(memory);
  SharedInformer& cms = factory.For(kConfigMaps);
  std::vector<std::shared_ptr<const Object>> seen;
  absl::Mutex mu;
  auto r = cms.AddHandler({.on_event = [&](const WatchEvent& e) {
    absl::MutexLock lock(&mu);
    seen.push_back(e.shared_object());
  }});
  ASSERT_TRUE(cms.Start().ok());
  auto stored = [&](std::string_view name) -> std::shared_ptr<const Object> {
    ListOptions in_ns;
    in_ns.ns = "ns";
    absl::StatusOr<SharedObjectList> list = memory.ListShared(kConfigMaps, in_ns);
    EXPECT_TRUE(list.ok());
    for (const auto& o : list->items) {
      if (NameOf(*o) == name) return o;
    }
    return nullptr;
  };
  // From the initial list.
  ASSERT_NE(stored("listed"), nullptr);
  EXPECT_EQ(cms.Get("ns", "listed"), stored("listed"));
  // From the watch.
  auto written = memory.Create(kConfigMaps, ConfigMap("ns", "watched"));
  ASSERT_TRUE(written.ok());
  ASSERT_TRUE(cms.WaitForVersion(ResourceVersionOf(*written), kEventDeadline));
  EXPECT_EQ(cms.Get("ns", "watched"), stored("watched"));
  // And the handlers see the same object.
  absl::MutexLock lock(&mu);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], stored("listed"));
  EXPECT_EQ(seen[1], stored("watched"));
}

TEST(InformerSharing, TwoWatchesOfTheStoreSeeOneObject) {
  MemoryStore memory;
  EventLog a, b;
  auto wa = memory.Watch(kConfigMaps, {}, a.Handler());
  auto wb = memory.Watch(kConfigMaps, {}, b.Handler());
  ASSERT_TRUE(wa.ok() && wb.ok());
  ASSERT_TRUE(memory.Create(kConfigMaps, ConfigMap("ns", "one")).ok());
  ASSERT_TRUE(a.WaitFor(WatchEventType::kAdded, "one"));
  ASSERT_TRUE(b.WaitFor(WatchEventType::kAdded, "one"));
  EXPECT_EQ(a.Events()[0].shared_object(), b.Events()[0].shared_object());
}

}  // namespace informer_test
}  // namespace clusterd::store
