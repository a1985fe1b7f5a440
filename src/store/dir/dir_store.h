#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "store/object_cache.h"
#include "store/object_store.h"

namespace clusterd::store {

// The `dir:PATH` backend: one JSON file per object in a documented, stable layout
// (docs/store-layout.md):
//
//   PATH/<resource>/<namespace>/<name>.json   namespaced objects
//   PATH/<resource>/<name>.json               cluster-scoped objects (nodes)
//   PATH/.lock                                flock(2)ed by every writer
//   PATH/.resource-version                    store-wide version counter (decimal)
//   PATH/.tmp/                                temp files, renamed into place
//   PATH/.clusterd.lock                       flock(2)ed by clusterd alone (kClusterdLockFile)
//
// Several processes may share PATH. Writers serialise on the flock, allocate versions from the
// counter file under it, re-read the object under it before checking a precondition, and
// replace files atomically (dotfile temp, fsync, rename, fsync of the directory).
//
// Reads are served from an in-memory cache kept current by inotify. Changes made by others
// (other stores, agents, an operator's editor) become watch events; a file without
// uid/resourceVersion, or edited without changing its resourceVersion, is adopted: rewritten
// under the lock with a fresh resourceVersion. Bad files are skipped, logged and counted in
// clusterd_store_bad_files_total{reason}.
class DirStore final : public ObjectStore {
 public:
  struct Options {
    // Events kept for Watch from a resourceVersion; older versions get OutOfRange.
    size_t history_limit = 10000;
    const Clock* clock = &Clock::Real();
    // Tests: called in each pass of the rewrite of adopted files (dir_store_adoption.cc) after
    // its temp files are written and before its renames, with no lock held.
    std::function<void()> adoption_pass_hook = nullptr;
  };

  static constexpr std::string_view kLockFile = ".lock";
  static constexpr std::string_view kVersionFile = ".resource-version";
  // clusterd's claim on the directory (one clusterd per store; never taken by the store
  // itself, nor by the agents and tools that share the directory): see InstanceLock.
  static constexpr std::string_view kClusterdLockFile = ".clusterd.lock";
  // Where the store writes an object file before renaming it into place: outside every watched
  // directory, so that a write shows a watcher one rename instead of a create, a close and two
  // renames.
  static constexpr std::string_view kTempDir = ".tmp";
  // Larger files are skipped as bad, and larger objects are not written. Room for a full 1 MiB
  // ConfigMap whose values are JSON text: each quote in a value takes two bytes in the file.
  static constexpr size_t kMaxFileSize = 4 << 20;
  static constexpr std::string_view kBadFilesMetric = "clusterd_store_bad_files_total";
  static constexpr std::string_view kTempFilesRemovedMetric =
      "clusterd_store_temp_files_removed_total";
  static constexpr std::string_view kAdoptedFilesMetric = "clusterd_store_adopted_files_total";
  // Files adopted at start-up are rewritten with their identity after the store is open, on a
  // thread of their own (`dir-adopt`), this many per pass: their temp files are written
  // without the locks and flushed with one syncfs, and only the renames take the locks (about a
  // millisecond a pass), so that the store's own writes and the watcher never wait behind them.
  static constexpr size_t kDeferredAdoptionBatch = 64;

  // Files adopted at start-up whose rewrite is still to come (tests, benchmarks).
  size_t DeferredAdoptions();

  // Creates PATH if missing. Fails (one line naming PATH and the errno text) if it cannot be
  // created or written.
  static absl::StatusOr<std::unique_ptr<DirStore>> Open(std::string path);
  static absl::StatusOr<std::unique_ptr<DirStore>> Open(std::string path, Options options);
  ~DirStore() override;

  absl::StatusOr<Object> Get(const ObjectKey& key) override;
  absl::StatusOr<ObjectList> List(std::string_view resource, const ListOptions& options) override;
  absl::StatusOr<SharedObjectList> ListShared(std::string_view resource,
                                              const ListOptions& options) override;
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view resource,
                                                     const WatchOptions& options,
                                                     WatchHandler handler) override;
  absl::StatusOr<Object> Create(std::string_view resource, Object object) override;
  absl::StatusOr<Object> Update(std::string_view resource, Object object) override;
  absl::StatusOr<Object> Patch(const ObjectKey& key, const Object& merge_patch) override;
  absl::Status Delete(const ObjectKey& key, std::string_view resource_version = "") override;

  const std::string& root() const { return root_; }
  // The file of `key` in the layout.
  std::string PathOf(const ObjectKey& key) const;

  // The Counter of bad files skipped for `reason` (malformed, too_large, not_object,
  // path_mismatch, invalid, unreadable, symlink).
  static Counter& BadFilesCounter(std::string_view reason);
  // The Counter of temp files left in kTempDir by a writer that died, removed at start-up.
  static Counter& TempFilesRemovedCounter();

 private:
  // What a directory under watch is: the root, a resource directory or a namespace directory.
  struct WatchedDir {
    std::string path;
    std::string resource;           // empty for the root
    std::optional<std::string> ns;  // set for namespace directories
  };
  // Identifies one version of a file (a bad file is reported once per version).
  struct FileSignature {
    ino_t inode = 0;
    off_t size = 0;
    timespec mtime{};
    bool operator==(const FileSignature& o) const {
      return inode == o.inode && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
             mtime.tv_nsec == o.mtime.tv_nsec;
    }
  };
  struct FileRead;
  using KeySet = std::set<ObjectKey>;
  // Decides the object to write given the stored one (null if none).
  using Decide = absl::FunctionRef<absl::StatusOr<Object>(const Object* stored)>;

  DirStore(std::string root, Options options);
  absl::Status Init();

  // Create/Update/Patch: under the locks, catch up with the directory, decide, write (a no-op
  // update or patch writes nothing and returns the stored object).
  absl::StatusOr<Object> Write(const ObjectKey& key, Decide decide);

  // Brings the cache up to date with every change queued by inotify, plus `key`. Requires the
  // flock, so that the directory is quiescent for well-behaved writers.
  void CatchUp(const ObjectKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Compares the files of `keys` with the cache and commits the differences, in version order;
  // adopts files that need a fresh version. `loading`: initial scan, nothing is published.
  void Sync(const KeySet& keys, bool loading) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Without the flock: whether any of `keys` differs from the cache (skips own-write echoes).
  bool NeedsSync(const KeySet& keys) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Whether the file of `key` at `path` is, by its signature, the one the cache holds: written
  // or read by this process and not replaced since. A stat instead of a read and a parse, for
  // the keys a write or an inotify batch catches up on, most of which are this process's own
  // earlier writes. A writer that rewrites a file in place with the same size within one
  // timestamp tick is not told apart; well-behaved writers replace files (a new inode).
  bool Unchanged(const ObjectKey& key, const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // `links_checked`: the caller already knows that no directory of `key` is a symbolic link.
  FileRead ReadObjectFile(const ObjectKey& key, bool links_checked = false) const;
  // ReadObjectFile of each key, in order. When there are many (a start-up on a large store:
  // 125,000 files at 50,000 nodes), on several threads: reading and parsing the files is most
  // of a start-up, and each file is independent of the others. The directories are checked
  // for symbolic links once each, not once per file.
  std::vector<FileRead> ReadObjectFiles(const std::vector<const ObjectKey*>& keys) const;
  void ReportBadFile(const std::string& path, const FileRead& read)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The resource or namespace directory of `key` that is a symbolic link to a directory, or
  // "". The store follows such links neither when reading nor when writing: they would put
  // objects outside the writers' flock, the temp directory's file system and the watches.
  std::string SymlinkedDirOf(const ObjectKey& key) const;
  // Logs and counts (reason "symlink") a linked directory, once per version of the link.
  void ReportSymlink(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Before a write of `key`: a name too long for a file, or a linked directory on its path, is
  // refused with the reason.
  absl::Status CheckWritable(const ObjectKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // At start-up, under the flock (so no live writer has a temp file): removes the temp files
  // that writers killed mid-write left in kTempDir.
  void RemoveStaleTempFiles() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  // inotify: the thread, reading the queue, (un)watching directories.
  void WatchLoop();
  void ProcessEvents();
  // The `dir-adopt` thread: passes of WriteDeferredAdoptions until none remain or the store
  // closes, each followed by a pause as long as the pass took (the rewrite is background work:
  // at most half of one core and of the disk's flushes).
  void AdoptionLoop();
  // Starts `dir-adopt` when files adopted at start-up wait for their rewrite.
  void StartAdoptionThread();
  // Rewrites up to kDeferredAdoptionBatch files adopted at start-up with the identity the cache
  // gave them (a file changed since is left to the watcher). Returns whether more remain.
  bool WriteDeferredAdoptions();
  // Reads every queued event; adds the keys they touch to `dirty`. False if there were none.
  bool ReadEvents(KeySet* dirty) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void ScanAll(KeySet* dirty) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void ScanResourceDir(const std::string& resource, KeySet* dirty)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void ScanNamespaceDir(const std::string& resource, const std::string& ns, KeySet* dirty)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  bool WatchDir(WatchedDir dir) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void UnwatchTree(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  // Version counter file, under the flock.
  uint64_t ReadCounter();
  absl::Status WriteCounter(uint64_t value);
  absl::StatusOr<uint64_t> NextVersion();
  // Creates the directories of `key` (watching them) as needed.
  absl::Status EnsureDirs(const ObjectKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Writes `object` atomically as the file of `key`; returns the object as stored: what a
  // reader of the file gets.
  absl::StatusOr<Object> WriteObjectFile(const ObjectKey& key, Object object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const std::string root_;
  const std::string temp_dir_;  // root_/kTempDir
  const Options options_;
  int lock_fd_ = -1;
  int version_fd_ = -1;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;

  // Serialises this process's writers and inotify processing; taken before the flock.
  absl::Mutex write_mu_;
  absl::flat_hash_map<int, WatchedDir> dirs_ ABSL_GUARDED_BY(write_mu_);
  std::map<std::string, FileSignature> bad_files_ ABSL_GUARDED_BY(write_mu_);
  // Path -> signature of the file whose content the cache holds (see Unchanged).
  absl::flat_hash_map<std::string, FileSignature> known_files_ ABSL_GUARDED_BY(write_mu_);
  // Adopted at start-up, in the cache already, their files not yet rewritten (see
  // WriteDeferredAdoptions): the start-up reads each file once and writes none.
  std::vector<ObjectKey> deferred_adoptions_ ABSL_GUARDED_BY(write_mu_);
  size_t deferred_total_ ABSL_GUARDED_BY(write_mu_) = 0;
  // Taken off deferred_adoptions_ by the pass under way, not yet renamed into place.
  size_t adoptions_in_flight_ ABSL_GUARDED_BY(write_mu_) = 0;

  ObjectCache cache_;
  std::thread watch_thread_;
  std::thread adopt_thread_;
  absl::Notification closing_;  // the destructor tells adopt_thread_ to stop
};

}  // namespace clusterd::store
