// The dir store's rewrite of the files adopted at start-up: files written by an outside
// program carry no uid or resourceVersion; opening the store gives them one in the cache and
// reads each file once, and this thread (`dir-adopt`) then writes each file again with that
// identity, so that the next start finds it.
//
// The rewrite is background work and must not hold up the store's own. It used to run on the
// watcher thread, 256 durable writes (two fsyncs each) per pass under the writers' lock: on disk
// a pass took seconds, during which a changed device-info waited for the watcher and every write
// of the brain (job summaries, cluster-info) waited for the lock. Now a pass writes its temp
// files without any lock, flushes them with one syncfs, and takes the locks only for the
// renames.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/background_thread.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "store/dir/dir_files.h"
#include "store/dir/dir_store.h"

namespace clusterd::store {

using dir_files::FileLock;

namespace {

constexpr std::string_view kDirStoreAdoptionLog = "store";

// One file of a pass: the object as the cache held it when the pass began, and its temp file.
struct AdoptedFile {
  ObjectKey key;
  std::shared_ptr<const Object> object;
  std::string path;
  std::string temp_path;
  struct stat written {};
};

}  // namespace

size_t DirStore::DeferredAdoptions() {
  absl::MutexLock lock(&write_mu_);
  return deferred_adoptions_.size() + adoptions_in_flight_;
}

void DirStore::StartAdoptionThread() {
  {
    absl::MutexLock lock(&write_mu_);
    if (deferred_adoptions_.empty()) return;
  }
  adopt_thread_ = std::thread([this] {
    SetCurrentThreadName("dir-adopt");
    MarkCurrentThreadBackground();
    AdoptionLoop();
  });
}

void DirStore::AdoptionLoop() {
  for (;;) {
    const absl::Time begin = absl::Now();
    if (!WriteDeferredAdoptions()) return;
    const absl::Duration pass = absl::Now() - begin;
    if (closing_.WaitForNotificationWithTimeout(std::max(pass, absl::Milliseconds(1)))) return;
  }
}

bool DirStore::WriteDeferredAdoptions() {
  std::vector<AdoptedFile> pass;
  {
    absl::MutexLock lock(&write_mu_);
    while (pass.size() < kDeferredAdoptionBatch && !deferred_adoptions_.empty()) {
      ObjectKey key = std::move(deferred_adoptions_.back());
      deferred_adoptions_.pop_back();
      std::shared_ptr<const Object> cached = cache_.Find(key);
      if (cached == nullptr) continue;  // deleted since: nothing to rewrite
      std::string path = PathOf(key);
      pass.push_back(AdoptedFile{std::move(key), std::move(cached), std::move(path), "", {}});
    }
    adoptions_in_flight_ = pass.size();
  }
  // Without the locks: the text and the temp files (their names are this process's own).
  for (AdoptedFile& f : pass) {
    std::optional<std::string> exact = dir_files::SerializeExactly(*f.object);
    const std::string text =
        exact.has_value() ? *std::move(exact) : dir_files::Serialize(*f.object);
    if (text.size() > kMaxFileSize) continue;  // read from a file, so it fits; but never grow one
    absl::StatusOr<std::string> temp =
        dir_files::WriteTempFile(temp_dir_, std::filesystem::path(f.path).filename().string(), text,
                                 /*sync=*/false, &f.written);
    if (!temp.ok()) {
      LogWarn(kDirStoreAdoptionLog,
              "cannot rewrite an adopted file; it is adopted again at the next start",
              {{"path", f.path}, {"error", temp.status()}});
      continue;
    }
    f.temp_path = *std::move(temp);
  }
  // One flush for the pass: a rename must never land before its file's content does. The
  // renames themselves need no flush: a rename lost in a crash leaves the old file, with the
  // same object, adopted again at the next start.
  if (syncfs(lock_fd_) != 0) {
    LogWarn(kDirStoreAdoptionLog, "syncfs failed; adopted files are rewritten at the next start",
            {{"path", root_}, {"error", std::strerror(errno)}});
    for (const AdoptedFile& f : pass) {
      if (!f.temp_path.empty()) unlink(f.temp_path.c_str());
    }
    absl::MutexLock lock(&write_mu_);
    deferred_adoptions_.clear();
    adoptions_in_flight_ = 0;
    return false;
  }
  if (options_.adoption_pass_hook) options_.adoption_pass_hook();
  absl::MutexLock lock(&write_mu_);
  FileLock flock(lock_fd_);
  const bool locked = flock.status(root_).ok();
  for (const AdoptedFile& f : pass) {
    if (f.temp_path.empty()) continue;
    // Changed or removed since the pass began: the watcher has it (or will) as a change of
    // its own, and the cache's object is no longer the one in the temp file.
    const bool current = locked && cache_.Find(f.key) == f.object && Unchanged(f.key, f.path);
    if (!current || rename(f.temp_path.c_str(), f.path.c_str()) != 0) {
      unlink(f.temp_path.c_str());
      continue;
    }
    known_files_[f.path] = FileSignature{f.written.st_ino, f.written.st_size, f.written.st_mtim};
  }
  adoptions_in_flight_ = 0;
  if (!locked) {
    // Their identity stays the cache's; the files are adopted again at the next start.
    LogError(kDirStoreAdoptionLog, "cannot take the store lock; adopted files are not rewritten",
             {{"files", deferred_adoptions_.size()}, {"path", root_}});
    deferred_adoptions_.clear();
    return false;
  }
  if (!deferred_adoptions_.empty()) return true;
  LogInfo(kDirStoreAdoptionLog, "adopted files rewritten with their identity",
          {{"files", deferred_total_}, {"path", root_}});
  return false;
}

}  // namespace clusterd::store
