// The behaviour every ObjectStore backend shares, run against each backend. A new backend
// (kube) is one more entry in kBackends.

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube_fixture.h"
#include "store/dir/dir_store.h"
#include "store/kube/kube_store.h"
#include "store/memory/memory_store.h"
#include "store/object_store.h"
#include "store_test_util.h"

namespace clusterd::store {
namespace store_conformance_test {

using testing::ConfigMap;
using testing::Describe;
using ::testing::ElementsAre;
using testing::EventLog;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Node;
using testing::Pod;
using testing::TempDir;
using ::testing::UnorderedElementsAre;

// History kept by the stores under test: small, so that "too old" is cheap to reach.
constexpr size_t kHistoryLimit = 50;

struct Backend {
  std::string name;
  // Opens a fresh store; `dir` is an empty temporary directory the backend may use.
  std::function<absl::StatusOr<std::unique_ptr<ObjectStore>>(const std::string& dir)> open;
  // Kubernetes assigns metadata.uid itself and ignores one given to Create.
  bool server_assigns_uid = false;
};

// A kube store together with the API server behind it (tests/fixtures: the fixture, or the real
// kube-apiserver with CLUSTERD_KUBE_SERVER=real), which lives as long as the store. A real
// server has objects of its own from the start (kube-system's extension-apiserver-
// authentication ConfigMap, its identity Leases): the store hides the objects that were there
// when it opened, so that each test starts from an empty store as it does on the others.
class KubeFixtureStore final : public ObjectStore {
 public:
  static absl::StatusOr<std::unique_ptr<ObjectStore>> Open() {
    clusterd::testing::KubeFixture::Options fixture_options;
    fixture_options.bookmark_interval_s = 1;
    auto fixture = clusterd::testing::KubeFixture::Start(fixture_options);
    if (!fixture.ok()) return fixture.status();
    kube::KubeStore::Options options;
    options.config = (*fixture)->Config();
    options.history_limit = kHistoryLimit;
    options.sync_timeout = absl::Seconds(30);
    // Cached from the start, so that a watch from any version the test wrote is in history.
    for (std::string_view r : {kConfigMaps, kPods, kNodes}) options.eager_resources.emplace_back(r);
    auto store = kube::KubeStore::Open(std::move(options));
    if (!store.ok()) return store.status();
    auto owner = std::make_unique<KubeFixtureStore>();
    owner->fixture_ = *std::move(fixture);
    owner->store_ = *std::move(store);
    for (std::string_view r : {kConfigMaps, kPods, kNodes, kLeases}) {
      auto there = owner->store_->List(r, {});
      if (!there.ok()) return there.status();
      for (const Object& o : there->items) owner->hidden_.insert(KeyOf(r, o));
    }
    return std::unique_ptr<ObjectStore>(std::move(owner));
  }

  absl::StatusOr<Object> Get(const ObjectKey& key) override { return store_->Get(key); }
  absl::StatusOr<ObjectList> List(std::string_view r, const ListOptions& o) override {
    auto list = store_->List(r, o);
    if (list.ok()) {
      std::erase_if(list->items, [&](const Object& item) { return Hidden(r, item); });
    }
    return list;
  }
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view r, const WatchOptions& o,
                                                     WatchHandler h) override {
    if (hidden_.empty()) return store_->Watch(r, o, std::move(h));
    return store_->Watch(r, o, [this, resource = std::string(r), h](const WatchEvent& e) {
      if (!Hidden(resource, e.object())) h(e);
    });
  }
  absl::StatusOr<Object> Create(std::string_view r, Object o) override {
    return store_->Create(r, std::move(o));
  }
  absl::StatusOr<Object> Update(std::string_view r, Object o) override {
    return store_->Update(r, std::move(o));
  }
  absl::StatusOr<Object> Patch(const ObjectKey& k, const Object& p) override {
    return store_->Patch(k, p);
  }
  absl::Status Delete(const ObjectKey& k, std::string_view rv) override {
    return store_->Delete(k, rv);
  }

 private:
  bool Hidden(std::string_view resource, const Object& o) const {
    return hidden_.contains(KeyOf(resource, o));
  }

  std::unique_ptr<clusterd::testing::KubeFixture> fixture_;  // outlives store_
  std::unique_ptr<kube::KubeStore> store_;
  std::set<ObjectKey> hidden_;  // written before the store opened (the server's own)
};

const Backend kBackends[] = {
    {"memory",
     [](const std::string&) -> absl::StatusOr<std::unique_ptr<ObjectStore>> {
       return std::make_unique<MemoryStore>(MemoryStore::Options{.history_limit = kHistoryLimit});
     }},
    {"dir",
     [](const std::string& dir) -> absl::StatusOr<std::unique_ptr<ObjectStore>> {
       auto store =
           DirStore::Open(dir + "/state", DirStore::Options{.history_limit = kHistoryLimit});
       if (!store.ok()) return store.status();
       return std::unique_ptr<ObjectStore>(*std::move(store));
     }},
    {"kube",
     [](const std::string&) -> absl::StatusOr<std::unique_ptr<ObjectStore>> {
       return KubeFixtureStore::Open();
     },
     /*server_assigns_uid=*/true},
};

class StoreConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    auto store = GetParam().open(dir_.path());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  Object MustCreate(std::string_view resource, Object o) {
    auto created = store_->Create(resource, std::move(o));
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? *created : Object();
  }

  std::unique_ptr<WatchHandle> MustWatch(std::string_view resource, WatchOptions options,
                                         WatchHandler handler) {
    auto handle = store_->Watch(resource, options, std::move(handler));
    EXPECT_TRUE(handle.ok()) << handle.status();
    return handle.ok() ? *std::move(handle) : nullptr;
  }

  static uint64_t Version(const Object& o) { return std::stoull(ResourceVersionOf(o)); }

  TempDir dir_;
  std::unique_ptr<ObjectStore> store_;
};

ObjectKey CmKey(std::string ns, std::string name) {
  return ObjectKey{std::string(kConfigMaps), std::move(ns), std::move(name)};
}

// --- Create / Get ----------------------------------------------------------------------------

TEST_P(StoreConformance, CreateAssignsUidResourceVersionAndCreationTimestamp) {
  Object created = MustCreate(kConfigMaps, ConfigMap("default", "a"));
  EXPECT_THAT(UidOf(created),
              ::testing::MatchesRegex(
                  "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_THAT(ResourceVersionOf(created), ::testing::MatchesRegex("[1-9][0-9]*"));
  EXPECT_THAT(created["metadata"]["creationTimestamp"].get<std::string>(),
              ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"));
  auto got = store_->Get(CmKey("default", "a"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, created);
}

TEST_P(StoreConformance, CreateKeepsAGivenUidAndTheFieldOrder) {
  // (With data: a Kubernetes API server leaves an empty map out, as Go's omitempty does.)
  Object cm = ConfigMap("default", "a", {}, {{"k", "v"}});
  cm["metadata"]["uid"] = "11111111-2222-4333-8444-555555555555";
  Object created = MustCreate(kConfigMaps, cm);
  if (GetParam().server_assigns_uid) {
    EXPECT_NE(UidOf(created), "11111111-2222-4333-8444-555555555555");
  } else {
    EXPECT_EQ(UidOf(created), "11111111-2222-4333-8444-555555555555");
  }
  std::vector<std::string> keys;
  for (const auto& [k, v] : created.items()) keys.push_back(k);
  EXPECT_THAT(keys, ElementsAre("apiVersion", "kind", "metadata", "data"));
}

TEST_P(StoreConformance, CreateOfAnExistingNameIsAlreadyExists) {
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  auto again = store_->Create(kConfigMaps, ConfigMap("default", "a"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr("configmaps/default/a"));
  // Same name in another namespace is another object.
  MustCreate(kConfigMaps, ConfigMap("other", "a"));
}

TEST_P(StoreConformance, CreateRejectsInvalidObjects) {
  Object bad_name = ConfigMap("default", "Not_A_Name");
  EXPECT_EQ(store_->Create(kConfigMaps, bad_name).status().code(),
            absl::StatusCode::kInvalidArgument);
  Object no_ns = ConfigMap("default", "a");
  no_ns["metadata"].erase("namespace");
  EXPECT_EQ(store_->Create(kConfigMaps, no_ns).status().code(), absl::StatusCode::kInvalidArgument);
  Object label_not_string = ConfigMap("default", "a", {{"n", 1}});
  EXPECT_EQ(store_->Create(kConfigMaps, label_not_string).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Create(kConfigMaps, Object::array()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Create("widgets", ConfigMap("default", "a")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Get(CmKey("default", "a")).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreConformance, AConfigMapOverOneMebibyteIsRefusedAndOneAtTheLimitKept) {
  // Kubernetes counts the values (not the keys): 1 MiB and one byte of values is over.
  Object big = ConfigMap("default", "big");
  big["data"] = {{"a", std::string(size_t{1} << 20, 'x')}, {"b", "y"}};
  auto refused = store_->Create(kConfigMaps, big);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_EQ(store_->Get(CmKey("default", "big")).status().code(), absl::StatusCode::kNotFound);
  // At the limit, with JSON text as the value (each quote is escaped in a file).
  big["data"] = {{"a", std::string(size_t{1} << 20, '"')}};
  MustCreate(kConfigMaps, big);
  auto got = store_->Get(CmKey("default", "big"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["data"]["a"].get_ref<const std::string&>().size(), size_t{1} << 20);
  // An update over the limit is refused too and leaves the stored object.
  Object update = *got;
  update["data"]["b"] = "y";
  EXPECT_EQ(store_->Update(kConfigMaps, update).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreConformance, GetOfAMissingObjectIsNotFound) {
  auto got = store_->Get(CmKey("default", "missing"));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr("configmaps/default/missing"));
}

TEST_P(StoreConformance, ResourceVersionIsStoreWideAndIncreasing) {
  uint64_t a = Version(MustCreate(kConfigMaps, ConfigMap("default", "a")));
  uint64_t b = Version(MustCreate(kPods, Pod("default", "b")));
  uint64_t c = Version(MustCreate(kNodes, Node("c")));
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  auto list = store_->List(kConfigMaps, {});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->resource_version, std::to_string(c));
}

// --- List ------------------------------------------------------------------------------------

TEST_P(StoreConformance, ListFiltersByNamespaceAndLabelSelector) {
  MustCreate(kConfigMaps, ConfigMap("ns1", "a", {{"app", "x"}, {"tier", "1"}}));
  MustCreate(kConfigMaps, ConfigMap("ns1", "b", {{"app", "y"}}));
  MustCreate(kConfigMaps, ConfigMap("ns2", "c", {{"app", "x"}}));
  MustCreate(kConfigMaps, ConfigMap("ns2", "d"));
  MustCreate(kPods, Pod("ns1", "not-a-configmap", "", "", {{"app", "x"}}));

  auto names = [&](std::string ns, std::string selector) {
    ListOptions options;
    options.ns = ns;
    options.selector = *LabelSelector::Parse(selector);
    auto list = store_->List(kConfigMaps, options);
    EXPECT_TRUE(list.ok()) << list.status();
    std::vector<std::string> out;
    for (const auto& o : list->items) out.push_back(NamespaceOf(o) + "/" + NameOf(o));
    return out;
  };
  EXPECT_THAT(names("", ""), ElementsAre("ns1/a", "ns1/b", "ns2/c", "ns2/d"));
  EXPECT_THAT(names("ns1", ""), ElementsAre("ns1/a", "ns1/b"));
  EXPECT_THAT(names("", "app=x"), ElementsAre("ns1/a", "ns2/c"));
  EXPECT_THAT(names("", "app==x,tier"), ElementsAre("ns1/a"));
  EXPECT_THAT(names("", "app!=x"), ElementsAre("ns1/b", "ns2/d"));
  EXPECT_THAT(names("", "!app"), ElementsAre("ns2/d"));
  EXPECT_THAT(names("ns2", "app"), ElementsAre("ns2/c"));
  EXPECT_THAT(names("ns3", ""), IsEmpty());
}

TEST_P(StoreConformance, ListFiltersByFieldSelector) {
  MustCreate(kPods, Pod("ns1", "a", "node-1", "Running"));
  MustCreate(kPods, Pod("ns1", "b", "node-2", "Running"));
  MustCreate(kPods, Pod("ns1", "c", "", "Pending"));
  MustCreate(kPods, Pod("ns2", "d", "node-1", "Succeeded"));
  MustCreate(kConfigMaps, ConfigMap("ns1", "a"));
  MustCreate(kConfigMaps, ConfigMap("ns2", "a"));

  auto names = [&](std::string_view resource, std::string ns, std::string fields,
                   std::string labels = "") {
    ListOptions options;
    options.ns = ns;
    options.selector = *LabelSelector::Parse(labels);
    options.fields = *FieldSelector::Parse(fields);
    auto list = store_->List(resource, options);
    EXPECT_TRUE(list.ok()) << fields << ": " << list.status();
    std::vector<std::string> out;
    if (list.ok()) {
      for (const auto& o : list->items) out.push_back(NamespaceOf(o) + "/" + NameOf(o));
    }
    return out;
  };
  EXPECT_THAT(names(kPods, "", "spec.nodeName=node-1"), ElementsAre("ns1/a", "ns2/d"));
  EXPECT_THAT(names(kPods, "ns1", "spec.nodeName=node-1"), ElementsAre("ns1/a"));
  EXPECT_THAT(names(kPods, "", "spec.nodeName!=node-1"), ElementsAre("ns1/b", "ns1/c"));
  EXPECT_THAT(names(kPods, "", "spec.nodeName="), ElementsAre("ns1/c"));
  EXPECT_THAT(names(kPods, "", "status.phase=Running"), ElementsAre("ns1/a", "ns1/b"));
  EXPECT_THAT(names(kPods, "", "spec.nodeName=node-1,status.phase!=Succeeded"),
              ElementsAre("ns1/a"));
  EXPECT_THAT(names(kPods, "", "metadata.namespace=ns2"), ElementsAre("ns2/d"));
  EXPECT_THAT(names(kPods, "", "spec.nodeName=node-3"), IsEmpty());
  EXPECT_THAT(names(kConfigMaps, "", "metadata.name=a"), ElementsAre("ns1/a", "ns2/a"));
  EXPECT_THAT(names(kConfigMaps, "ns2", "metadata.name==a"), ElementsAre("ns2/a"));
  EXPECT_THAT(names(kConfigMaps, "", "metadata.name=a,metadata.namespace!=ns1"),
              ElementsAre("ns2/a"));
}

TEST_P(StoreConformance, ListAndWatchRefuseAFieldTheResourceCannotBeSelectedBy) {
  ListOptions list;
  list.fields = *FieldSelector::Parse("spec.nodeName=node-1");
  auto listed = store_->List(kConfigMaps, list);
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(listed.status().message(), HasSubstr("field label not supported: spec.nodeName"));
  WatchOptions watch;
  watch.fields = *FieldSelector::Parse("spec.hostname=h");
  auto watched = store_->Watch(kPods, watch, [](const WatchEvent&) {});
  EXPECT_EQ(watched.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(watched.status().message(), HasSubstr("field label not supported: spec.hostname"));
  list.fields = *FieldSelector::Parse("metadata.namespace=default");
  EXPECT_EQ(store_->List(kNodes, list).status().code(), absl::StatusCode::kInvalidArgument);
}

// --- Update ----------------------------------------------------------------------------------

TEST_P(StoreConformance, UpdateReplacesTheObjectAndKeepsUidAndCreationTimestamp) {
  Object created = MustCreate(kConfigMaps, ConfigMap("default", "a", {}, {{"k", "1"}}));
  Object next = ConfigMap("default", "a", {}, {{"k", "2"}});
  next["metadata"]["resourceVersion"] = ResourceVersionOf(created);
  auto updated = store_->Update(kConfigMaps, next);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["data"]["k"], "2");
  EXPECT_EQ(UidOf(*updated), UidOf(created));
  EXPECT_EQ((*updated)["metadata"]["creationTimestamp"], created["metadata"]["creationTimestamp"]);
  EXPECT_GT(Version(*updated), Version(created));
  EXPECT_EQ(*store_->Get(CmKey("default", "a")), *updated);
}

TEST_P(StoreConformance, UpdateWithAStaleResourceVersionIsAborted) {
  Object created = MustCreate(kConfigMaps, ConfigMap("default", "a"));
  Object first = created;
  first["data"]["k"] = "1";
  ASSERT_TRUE(store_->Update(kConfigMaps, first).ok());
  Object stale = created;
  stale["data"]["k"] = "2";
  auto result = store_->Update(kConfigMaps, stale);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(result.status().message(), HasSubstr("configmaps/default/a"));
  EXPECT_THAT(result.status().message(), HasSubstr("\"" + ResourceVersionOf(created) + "\""));
  EXPECT_THAT(result.status().message(),
              HasSubstr("\"" + ResourceVersionOf(*store_->Get(CmKey("default", "a"))) + "\""));
  EXPECT_EQ((*store_->Get(CmKey("default", "a")))["data"]["k"], "1");
}

TEST_P(StoreConformance, UpdateWithoutResourceVersionIsUnconditional) {
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  ASSERT_TRUE(store_->Update(kConfigMaps, ConfigMap("default", "a", {}, {{"k", "1"}})).ok());
  ASSERT_TRUE(store_->Update(kConfigMaps, ConfigMap("default", "a", {}, {{"k", "2"}})).ok());
  EXPECT_EQ((*store_->Get(CmKey("default", "a")))["data"]["k"], "2");
}

TEST_P(StoreConformance, AnUpdateOrPatchThatChangesNothingIsNotCommitted) {
  // The API server's no-op write: the stored object comes back at its own version, and no
  // watch event follows. A restart that decides every job again then writes nothing.
  Object created = MustCreate(kConfigMaps, ConfigMap("default", "a", {{"app", "x"}}, {{"k", "1"}}));
  EventLog log;
  WatchOptions options;
  options.resource_version = ResourceVersionOf(created);
  auto handle = MustWatch(kConfigMaps, options, log.Handler());
  // An unconditional update, one with the current version, and a patch, all to what is stored.
  auto same = store_->Update(kConfigMaps, ConfigMap("default", "a", {{"app", "x"}}, {{"k", "1"}}));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, created);
  Object with_version = created;
  auto again = store_->Update(kConfigMaps, with_version);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, created);
  auto patched = store_->Patch(CmKey("default", "a"), {{"data", {{"k", "1"}}}});
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ(*patched, created);
  EXPECT_EQ(*store_->Get(CmKey("default", "a")), created);
  // A stale version is still refused, even for a write that would change nothing.
  ASSERT_TRUE(store_->Patch(CmKey("default", "a"), {{"data", {{"k", "2"}}}}).ok());
  auto stale = store_->Update(kConfigMaps, created);
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kAborted);
  // The one real change is the only event.
  ASSERT_TRUE(log.WaitForCount(1));
  MustCreate(kConfigMaps, ConfigMap("default", "b"));
  ASSERT_TRUE(log.WaitForCount(2));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("MODIFIED a", "ADDED b"));
}

TEST_P(StoreConformance, UpdateOfAMissingObjectIsNotFound) {
  EXPECT_EQ(store_->Update(kConfigMaps, ConfigMap("default", "a")).status().code(),
            absl::StatusCode::kNotFound);
}

// --- Patch -----------------------------------------------------------------------------------

TEST_P(StoreConformance, PatchMergesAndNullDeletes) {
  MustCreate(kConfigMaps,
             ConfigMap("default", "a", {{"keep", "1"}, {"drop", "1"}}, {{"x", "1"}, {"y", "1"}}));
  Object patch = {{"metadata", {{"labels", {{"drop", nullptr}, {"new", "1"}}}}},
                  {"data", {{"y", nullptr}, {"z", "2"}}}};
  auto patched = store_->Patch(CmKey("default", "a"), patch);
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ((*patched)["metadata"]["labels"], Object({{"keep", "1"}, {"new", "1"}}));
  EXPECT_EQ((*patched)["data"], Object({{"x", "1"}, {"z", "2"}}));
  EXPECT_EQ(*store_->Get(CmKey("default", "a")), *patched);
}

TEST_P(StoreConformance, PatchWithAStaleResourceVersionIsAborted) {
  Object created = MustCreate(kConfigMaps, ConfigMap("default", "a"));
  ASSERT_TRUE(store_->Patch(CmKey("default", "a"), {{"data", {{"k", "1"}}}}).ok());
  Object patch = {{"metadata", {{"resourceVersion", ResourceVersionOf(created)}}},
                  {"data", {{"k", "2"}}}};
  auto result = store_->Patch(CmKey("default", "a"), patch);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(result.status().message(), HasSubstr("configmaps/default/a"));
  // With the current version the same patch applies.
  patch["metadata"]["resourceVersion"] = ResourceVersionOf(*store_->Get(CmKey("default", "a")));
  EXPECT_TRUE(store_->Patch(CmKey("default", "a"), patch).ok());
}

TEST_P(StoreConformance, PatchCannotChangeIdentity) {
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  EXPECT_EQ(store_->Patch(CmKey("default", "a"), {{"metadata", {{"name", "b"}}}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Patch(CmKey("default", "a"), {{"metadata", {{"uid", "x"}}}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Patch(CmKey("default", "missing"), {{"data", {}}}).status().code(),
            absl::StatusCode::kNotFound);
}

// --- Delete ----------------------------------------------------------------------------------

TEST_P(StoreConformance, DeleteRemovesTheObject) {
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  ASSERT_TRUE(store_->Delete(CmKey("default", "a")).ok());
  EXPECT_EQ(store_->Get(CmKey("default", "a")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->Delete(CmKey("default", "a")).code(), absl::StatusCode::kNotFound);
  // The name can be used again, by a new object.
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
}

TEST_P(StoreConformance, DeleteWithAStaleResourceVersionIsAborted) {
  Object created = MustCreate(kConfigMaps, ConfigMap("default", "a"));
  Object updated = *store_->Patch(CmKey("default", "a"), {{"data", {{"k", "1"}}}});
  absl::Status stale = store_->Delete(CmKey("default", "a"), ResourceVersionOf(created));
  EXPECT_EQ(stale.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(stale.message(), HasSubstr("configmaps/default/a"));
  EXPECT_TRUE(store_->Get(CmKey("default", "a")).ok());
  EXPECT_TRUE(store_->Delete(CmKey("default", "a"), ResourceVersionOf(updated)).ok());
}

// --- Cluster-scoped --------------------------------------------------------------------------

TEST_P(StoreConformance, NodesAreClusterScoped) {
  Object node = MustCreate(kNodes, Node("node-1", {{"role", "npu"}}));
  EXPECT_FALSE(node["metadata"].contains("namespace"));
  ObjectKey key{std::string(kNodes), "", "node-1"};
  ASSERT_TRUE(store_->Get(key).ok());
  EXPECT_EQ(store_->Get(ObjectKey{std::string(kNodes), "default", "node-1"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Object namespaced = Node("node-2");
  namespaced["metadata"]["namespace"] = "default";
  EXPECT_EQ(store_->Create(kNodes, namespaced).status().code(), absl::StatusCode::kInvalidArgument);
  ListOptions by_label;
  by_label.selector = *LabelSelector::Parse("role=npu");
  EXPECT_EQ(store_->List(kNodes, by_label)->items.size(), 1u);
  EXPECT_TRUE(store_->Patch(key, {{"status", {{"ready", true}}}}).ok());
  EXPECT_TRUE(store_->Delete(key).ok());
  EXPECT_EQ(store_->Get(key).status().code(), absl::StatusCode::kNotFound);
}

// --- Watch -----------------------------------------------------------------------------------

TEST_P(StoreConformance, WatchFromEmptyVersionDeliversExistingObjectsThenChanges) {
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  MustCreate(kConfigMaps, ConfigMap("default", "b"));
  EventLog log;
  auto handle = MustWatch(kConfigMaps, {}, log.Handler());
  ASSERT_TRUE(log.WaitForCount(2));
  MustCreate(kConfigMaps, ConfigMap("default", "c"));
  ASSERT_TRUE(store_->Patch(CmKey("default", "a"), {{"data", {{"k", "1"}}}}).ok());
  ASSERT_TRUE(store_->Delete(CmKey("default", "b")).ok());
  ASSERT_TRUE(log.WaitForCount(5));
  EXPECT_THAT(Describe(log.Events()),
              ElementsAre("ADDED a", "ADDED b", "ADDED c", "MODIFIED a", "DELETED b"));
}

TEST_P(StoreConformance, WatchEventsCarryIncreasingVersionsAndDeletedCarriesTheLastState) {
  EventLog log;
  auto handle = MustWatch(kConfigMaps, {}, log.Handler());
  Object a = MustCreate(kConfigMaps, ConfigMap("default", "a", {{"app", "x"}}));
  ASSERT_TRUE(store_->Delete(CmKey("default", "a")).ok());
  ASSERT_TRUE(log.WaitForCount(2));
  auto events = log.Events();
  EXPECT_EQ(events[0].object(), a);
  EXPECT_EQ(events[1].type, WatchEventType::kDeleted);
  EXPECT_EQ(events[1].object()["metadata"]["labels"]["app"], "x");
  EXPECT_GT(Version(events[1].object()), Version(events[0].object()));
}

TEST_P(StoreConformance, WatchFromAVersionDeliversOnlyLaterChanges) {
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  Object b = MustCreate(kConfigMaps, ConfigMap("default", "b"));
  MustCreate(kConfigMaps, ConfigMap("default", "c"));
  ASSERT_TRUE(store_->Delete(CmKey("default", "a")).ok());
  EventLog log;
  WatchOptions options;
  options.resource_version = ResourceVersionOf(b);
  auto handle = MustWatch(kConfigMaps, options, log.Handler());
  MustCreate(kConfigMaps, ConfigMap("default", "d"));
  ASSERT_TRUE(log.WaitForCount(3));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED c", "DELETED a", "ADDED d"));
}

TEST_P(StoreConformance, WatchFromTheListVersionMissesNothing) {
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  auto list = store_->List(kConfigMaps, {});
  ASSERT_TRUE(list.ok());
  MustCreate(kConfigMaps, ConfigMap("default", "b"));
  EventLog log;
  WatchOptions options;
  options.resource_version = list->resource_version;
  auto handle = MustWatch(kConfigMaps, options, log.Handler());
  ASSERT_TRUE(log.WaitForCount(1));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED b"));
}

TEST_P(StoreConformance, WatchFromAVersionOlderThanTheHistoryIsOutOfRange) {
  Object first = MustCreate(kConfigMaps, ConfigMap("default", "a"));
  for (size_t i = 0; i < kHistoryLimit + 5; ++i) {
    ASSERT_TRUE(store_->Patch(CmKey("default", "a"), {{"data", {{"i", std::to_string(i)}}}}).ok());
  }
  WatchOptions options;
  options.resource_version = ResourceVersionOf(first);
  auto handle = store_->Watch(kConfigMaps, options, [](const WatchEvent&) {});
  EXPECT_EQ(handle.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(handle.status().message(), HasSubstr("410 Gone"));
  options.resource_version = "not-a-number";
  EXPECT_EQ(store_->Watch(kConfigMaps, options, [](const WatchEvent&) {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreConformance, WatchFiltersByNamespaceAndLabelSelector) {
  EventLog log;
  WatchOptions options;
  options.ns = "ns1";
  options.selector = *LabelSelector::Parse("app=x");
  auto handle = MustWatch(kConfigMaps, options, log.Handler());
  MustCreate(kConfigMaps, ConfigMap("ns2", "other-namespace", {{"app", "x"}}));
  MustCreate(kConfigMaps, ConfigMap("ns1", "other-label", {{"app", "y"}}));
  MustCreate(kPods, Pod("ns1", "other-resource", "", "", {{"app", "x"}}));
  MustCreate(kConfigMaps, ConfigMap("ns1", "match", {{"app", "x"}}));
  ASSERT_TRUE(log.WaitForCount(1));
  // Events are delivered in order: once "last" arrives nothing else can still be pending.
  MustCreate(kConfigMaps, ConfigMap("ns1", "last", {{"app", "x"}}));
  ASSERT_TRUE(log.WaitForCount(2));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED match", "ADDED last"));
}

TEST_P(StoreConformance, WatchSeesObjectsEnterAndLeaveTheSelector) {
  MustCreate(kConfigMaps, ConfigMap("default", "a", {{"app", "y"}}));
  EventLog log;
  WatchOptions options;
  options.selector = *LabelSelector::Parse("app=x");
  auto handle = MustWatch(kConfigMaps, options, log.Handler());
  auto relabel = [&](std::string value) {
    ASSERT_TRUE(
        store_->Patch(CmKey("default", "a"), {{"metadata", {{"labels", {{"app", value}}}}}}).ok());
  };
  relabel("x");  // enters: ADDED
  ASSERT_TRUE(store_->Patch(CmKey("default", "a"), {{"data", {{"k", "1"}}}}).ok());  // MODIFIED
  relabel("z");  // leaves: DELETED
  ASSERT_TRUE(store_->Patch(CmKey("default", "a"), {{"data", {{"k", "2"}}}}).ok());  // unseen
  relabel("x");                                                                      // ADDED again
  ASSERT_TRUE(log.WaitForCount(4));
  auto events = log.Events();
  EXPECT_THAT(Describe(events), ElementsAre("ADDED a", "MODIFIED a", "DELETED a", "ADDED a"));
  // The DELETED shows the state that matched, at the version of the change that unmatched it.
  EXPECT_EQ(events[2].object()["metadata"]["labels"]["app"], "x");
  EXPECT_GT(Version(events[2].object()), Version(events[1].object()));
  EXPECT_LT(Version(events[2].object()), Version(events[3].object()));
}

TEST_P(StoreConformance, WatchFiltersByFieldSelector) {
  MustCreate(kPods, Pod("ns1", "existing", "node-1", "Running"));
  MustCreate(kPods, Pod("ns1", "elsewhere", "node-2", "Running"));
  EventLog log;
  WatchOptions options;
  options.ns = "ns1";
  options.fields = *FieldSelector::Parse("spec.nodeName=node-1");
  auto handle = MustWatch(kPods, options, log.Handler());
  ASSERT_TRUE(log.WaitForCount(1));
  MustCreate(kPods, Pod("ns2", "other-namespace", "node-1", "Running"));
  MustCreate(kPods, Pod("ns1", "other-node", "node-2", "Running"));
  MustCreate(kPods, Pod("ns1", "unbound", "", "Pending"));
  MustCreate(kConfigMaps, ConfigMap("ns1", "other-resource"));
  MustCreate(kPods, Pod("ns1", "match", "node-1", "Pending"));
  ASSERT_TRUE(store_->Delete(ObjectKey{std::string(kPods), "ns1", "elsewhere"}).ok());
  // Events are delivered in order: once "last" arrives nothing else can still be pending.
  MustCreate(kPods, Pod("ns1", "last", "node-1", "Pending"));
  ASSERT_TRUE(log.WaitForCount(3));
  EXPECT_THAT(Describe(log.Events()), ElementsAre("ADDED existing", "ADDED match", "ADDED last"));
}

TEST_P(StoreConformance, WatchSeesPodsEnterAndLeaveAFieldSelector) {
  const ObjectKey key{std::string(kPods), "default", "a"};
  MustCreate(kPods, Pod("default", "a", "node-1", "Pending"));
  EventLog log;
  WatchOptions options;
  options.fields = *FieldSelector::Parse("spec.nodeName=node-1,status.phase=Running");
  auto handle = MustWatch(kPods, options, log.Handler());
  auto phase = [&](std::string value) {
    ASSERT_TRUE(store_->Patch(key, {{"status", {{"phase", value}}}}).ok());
  };
  phase("Running");  // enters: ADDED
  ASSERT_TRUE(store_->Patch(key, {{"metadata", {{"labels", {{"k", "1"}}}}}}).ok());  // MODIFIED
  phase("Succeeded");  // leaves: DELETED
  ASSERT_TRUE(store_->Patch(key, {{"metadata", {{"labels", {{"k", "2"}}}}}}).ok());  // unseen
  phase("Running");                                                                  // ADDED again
  ASSERT_TRUE(log.WaitForCount(4));
  auto events = log.Events();
  EXPECT_THAT(Describe(events), ElementsAre("ADDED a", "MODIFIED a", "DELETED a", "ADDED a"));
  // The DELETED shows the state that matched, at the version of the change that unmatched it.
  EXPECT_EQ(events[2].object()["status"]["phase"], "Running");
  EXPECT_GT(Version(events[2].object()), Version(events[1].object()));
  EXPECT_LT(Version(events[2].object()), Version(events[3].object()));
}

TEST_P(StoreConformance, WatchHandlerMayCallTheStore) {
  EventLog copies;
  auto copies_handle = MustWatch(kPods, {}, copies.Handler());
  // For every configmap, the handler reads it back and creates a pod of the same name.
  auto handle = MustWatch(kConfigMaps, {}, [&](const WatchEvent& e) {
    if (e.type != WatchEventType::kAdded) return;
    auto got = store_->Get(KeyOf(kConfigMaps, e.object()));
    if (!got.ok()) return;
    store_->Create(kPods, Pod(NamespaceOf(*got), NameOf(*got))).IgnoreError();
  });
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  MustCreate(kConfigMaps, ConfigMap("default", "b"));
  ASSERT_TRUE(copies.WaitForCount(2));
  EXPECT_THAT(Describe(copies.Events()), UnorderedElementsAre("ADDED a", "ADDED b"));
}

TEST_P(StoreConformance, DestroyingTheHandleStopsDelivery) {
  std::atomic<bool> destroyed{false};
  std::atomic<int> late_calls{0};
  auto handle = MustWatch(kConfigMaps, {}, [&](const WatchEvent&) {
    if (destroyed.load()) late_calls.fetch_add(1);
  });
  for (int i = 0; i < 20; ++i)
    MustCreate(kConfigMaps, ConfigMap("default", "a" + std::to_string(i)));
  handle.reset();
  destroyed.store(true);
  EventLog barrier;
  auto barrier_handle = MustWatch(kConfigMaps, {}, barrier.Handler());
  MustCreate(kConfigMaps, ConfigMap("default", "after"));
  ASSERT_TRUE(barrier.WaitFor(WatchEventType::kAdded, "after"));
  EXPECT_EQ(late_calls.load(), 0);
}

TEST_P(StoreConformance, DestroyingTheHandleWaitsForARunningHandler) {
  absl::Notification in_handler;
  absl::Notification release;
  std::atomic<bool> destroyed{false};
  std::atomic<int> late_calls{0};
  auto handle = MustWatch(kConfigMaps, {}, [&](const WatchEvent&) {
    if (destroyed.load()) late_calls.fetch_add(1);
    if (!in_handler.HasBeenNotified()) {
      in_handler.Notify();
      release.WaitForNotification();
    }
  });
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  MustCreate(kConfigMaps, ConfigMap("default", "b"));
  ASSERT_TRUE(in_handler.WaitForNotificationWithTimeout(testing::kEventDeadline));
  std::thread destroyer([&] {
    handle.reset();
    destroyed.store(true);
  });
  // The destructor cannot return while the handler runs.
  EXPECT_FALSE(destroyed.load());
  release.Notify();
  destroyer.join();
  EXPECT_TRUE(destroyed.load());
  MustCreate(kConfigMaps, ConfigMap("default", "c"));
  EXPECT_EQ(late_calls.load(), 0);
}

TEST_P(StoreConformance, AHandlerMayDestroyItsOwnHandle) {
  std::unique_ptr<WatchHandle> handle;
  absl::Mutex mu;
  int calls = 0;
  absl::Notification destroyed;
  handle = MustWatch(kConfigMaps, {}, [&](const WatchEvent&) {
    absl::MutexLock lock(&mu);
    ++calls;
    handle.reset();  // from its own delivery thread: must not deadlock
    destroyed.Notify();
  });
  // No object exists yet, so the handler cannot run before `handle` is set.
  MustCreate(kConfigMaps, ConfigMap("default", "a"));
  MustCreate(kConfigMaps, ConfigMap("default", "b"));
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(testing::kEventDeadline));
  EventLog barrier;
  auto barrier_handle = MustWatch(kConfigMaps, {}, barrier.Handler());
  MustCreate(kConfigMaps, ConfigMap("default", "c"));
  ASSERT_TRUE(barrier.WaitFor(WatchEventType::kAdded, "c"));
  absl::MutexLock check(&mu);
  EXPECT_EQ(calls, 1);
}

TEST_P(StoreConformance, ConcurrentWritersAreSeenInVersionOrderAndLoseNothing) {
  MustCreate(kConfigMaps, ConfigMap("default", "counter", {}, {{"n", "0"}}));
  EventLog log;
  auto handle = MustWatch(kConfigMaps, {}, log.Handler());
  constexpr int kThreads = 3;
  constexpr int kIncrements = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements;) {
        Object cm = *store_->Get(CmKey("default", "counter"));
        cm["data"]["n"] = std::to_string(std::stoi(cm["data"]["n"].get<std::string>()) + 1);
        auto r = store_->Update(kConfigMaps, cm);
        if (r.ok()) {
          ++i;
        } else {
          ASSERT_EQ(r.status().code(), absl::StatusCode::kAborted) << r.status();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ((*store_->Get(CmKey("default", "counter")))["data"]["n"],
            std::to_string(kThreads * kIncrements));
  ASSERT_TRUE(log.WaitForCount(1 + kThreads * kIncrements));
  auto events = log.Events();
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_LT(Version(events[i - 1].object()), Version(events[i].object())) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformance, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param.name;
                         });

}  // namespace store_conformance_test
}  // namespace clusterd::store
