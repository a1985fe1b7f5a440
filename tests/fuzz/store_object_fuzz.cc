// Feeds one object file of the `dir:` store (docs/store-layout.md; written by agents, tools and
// operators' editors as well as by clusterd) to the store: placed as a namespaced ConfigMap and
// as a cluster-scoped Node, the store opens the directory (reads, validates and adopts the
// files), lists both resources, and reads, patches and updates what it accepted. It also holds
// the store's file text (dir_files::SerializeExactly, written by hand for speed) to nlohmann's
// dump byte for byte, for the input parsed as JSON and for the input as one string of any bytes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "fuzz_util.h"
#include "store/dir/dir_files.h"
#include "store/dir/dir_store.h"

using namespace clusterd;
namespace fs = std::filesystem;

namespace {

// A scratch directory of this process, on tmpfs when there is one: every input is a fresh store.
const fs::path& Scratch() {
  static const fs::path dir = [] {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    return base / ("clusterd-fuzz-store-" + std::to_string(getpid()));
  }();
  return dir;
}

void WriteFile(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

void Exercise(store::ObjectStore& s, const store::ObjectKey& key) {
  absl::StatusOr<store::Object> got = s.Get(key);
  if (!got.ok()) return;
  (void)s.Patch(key, store::Object{{"metadata", {{"labels", {{"fuzz", "1"}}}}}});
  absl::StatusOr<store::Object> again = s.Get(key);
  if (again.ok()) (void)s.Update(key.resource, *again);
}

void CheckFileText(const store::Object& object) {
  std::optional<std::string> reference;
  try {
    reference = object.dump(2, ' ', false, store::Object::error_handler_t::strict) + "\n";
  } catch (const store::Object::type_error&) {
  }
  if (store::dir_files::SerializeExactly(object) != reference) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  CheckFileText(store::Object{{"data", {{"k", std::string(text)}}}});
  const store::Object parsed = store::Object::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded()) CheckFileText(parsed);
  const fs::path& root = Scratch();
  std::error_code ec;
  fs::remove_all(root, ec);
  WriteFile(root / "configmaps" / "default" / "obj.json", text);
  WriteFile(root / "nodes" / "obj.json", text);

  absl::StatusOr<std::unique_ptr<store::DirStore>> s = store::DirStore::Open(root.string());
  if (s.ok()) {
    store::ListOptions all;
    (void)(*s)->List("configmaps", all);
    (void)(*s)->List("nodes", all);
    Exercise(**s, store::ObjectKey{"configmaps", "default", "obj"});
    Exercise(**s, store::ObjectKey{"nodes", "", "obj"});
    s->reset();
  }
  fs::remove_all(root, ec);
  return 0;
}
