#include "store/dir/dir_store.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "common/background_thread.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/parallel_for.h"
#include "common/thread_name.h"
#include "store/admission.h"
#include "store/dir/dir_files.h"
#include "store/strings.h"

namespace clusterd::store {

using dir_files::ErrnoError;
using dir_files::FileLock;
using dir_files::FsyncDir;
using dir_files::IsIgnoredName;
using dir_files::IsStoreTempName;
using dir_files::IsSymlinkToDir;
using dir_files::JoinPath;
using dir_files::kJsonSuffix;
using dir_files::kMaxFileObjectName;
using dir_files::MakeDir;
using dir_files::ObjectNameOf;
using dir_files::Serialize;
using dir_files::SerializeExactly;
using dir_files::SymlinkError;
using dir_files::WriteFileAtomically;

namespace {

constexpr std::string_view kDirStoreLog = "store";

// Bad-file reasons, the `reason` label of clusterd_store_bad_files_total.
constexpr std::string_view kReasonUnreadable = "unreadable";
constexpr std::string_view kReasonTooLarge = "too_large";
constexpr std::string_view kReasonMalformed = "malformed";
constexpr std::string_view kReasonNotObject = "not_object";
constexpr std::string_view kReasonPathMismatch = "path_mismatch";
constexpr std::string_view kReasonInvalid = "invalid";
constexpr std::string_view kReasonSymlink = "symlink";

void CloseIfOpen(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

// The outcome of reading one object file.
struct DirStore::FileRead {
  enum Kind { kAbsent, kBad, kGood } kind = kAbsent;
  std::string reason;  // kBad: the metric label
  std::string detail;  // kBad: for the log line
  Object object;       // kGood: name/namespace filled in from the path
  FileSignature signature;
  std::string path;
  // kGood: what Sync asks of every object, found where the file was read (on the loading
  // threads at start-up): its resourceVersion, when it is a number, and whether it has a uid.
  std::optional<uint64_t> version;
  bool has_uid = false;
};

Counter& DirStore::BadFilesCounter(std::string_view reason) {
  return MetricsRegistry::Default().GetCounter(
      kBadFilesMetric, "Files in a dir store that were skipped because they are not valid objects.",
      {{"reason", std::string(reason)}});
}

Counter& AdoptedFilesCounter(std::string_view when) {
  return MetricsRegistry::Default().GetCounter(
      DirStore::kAdoptedFilesMetric,
      "Files written outside a dir store that it adopted (gave a resourceVersion, and a uid if "
      "missing), by when: startup (rewritten in the background once the store is open) or "
      "watch.",
      {{"when", std::string(when)}});
}

Counter& DirStore::TempFilesRemovedCounter() {
  return MetricsRegistry::Default().GetCounter(
      kTempFilesRemovedMetric,
      "Temp files of writers that died mid-write, removed from a dir store at start-up.");
}

absl::StatusOr<std::unique_ptr<DirStore>> DirStore::Open(std::string path) {
  return Open(std::move(path), Options{});
}

absl::StatusOr<std::unique_ptr<DirStore>> DirStore::Open(std::string path, Options options) {
  if (path.empty()) return absl::InvalidArgumentError("dir store: empty path");
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  std::error_code ec;
  if (auto absolute = std::filesystem::absolute(path, ec); !ec) path = absolute.string();
  std::unique_ptr<DirStore> store(new DirStore(std::move(path), options));
  if (absl::Status s = store->Init(); !s.ok()) return s;
  return store;
}

DirStore::DirStore(std::string root, Options options)
    : root_(std::move(root)),
      temp_dir_(JoinPath(root_, kTempDir)),
      options_(options),
      cache_(options.history_limit) {}

DirStore::~DirStore() {
  closing_.Notify();
  if (adopt_thread_.joinable()) adopt_thread_.join();
  if (watch_thread_.joinable()) {
    uint64_t one = 1;
    while (write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
    watch_thread_.join();
  }
  cache_.StopWatches();
  CloseIfOpen(wake_fd_);
  CloseIfOpen(inotify_fd_);
  CloseIfOpen(version_fd_);
  CloseIfOpen(lock_fd_);
}

absl::Status DirStore::Init() {
  std::error_code ec;
  std::filesystem::create_directories(root_, ec);
  if (ec) return ErrnoError(ec.value(), root_, "cannot create directory");
  struct stat st {};
  if (stat(root_.c_str(), &st) != 0) return ErrnoError(errno, root_, "cannot stat");
  if (!S_ISDIR(st.st_mode)) return ErrnoError(ENOTDIR, root_, "cannot use as store directory");
  if (access(root_.c_str(), W_OK | X_OK) != 0) return ErrnoError(errno, root_, "not writable");
  if (absl::StatusOr<bool> made = MakeDir(temp_dir_); !made.ok()) {
    return made.status();
  }
  std::string lock_path = JoinPath(root_, kLockFile);
  lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return ErrnoError(errno, lock_path, "cannot open lock file");
  std::string version_path = JoinPath(root_, kVersionFile);
  version_fd_ = open(version_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (version_fd_ < 0) return ErrnoError(errno, version_path, "cannot open version file");
  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) return ErrnoError(errno, root_, "inotify_init1 failed");
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return ErrnoError(errno, root_, "eventfd failed");
  {
    absl::MutexLock lock(&write_mu_);
    FileLock flock(lock_fd_);
    if (absl::Status s = flock.status(root_); !s.ok()) return s;
    if (!WatchDir(WatchedDir{root_, "", std::nullopt})) {
      return ErrnoError(errno, root_, "cannot watch directory");
    }
    RemoveStaleTempFiles();
    KeySet keys;
    ScanAll(&keys);
    Sync(keys, /*loading=*/true);
  }
  watch_thread_ = std::thread([this] {
    SetCurrentThreadName("dir-inotify");
    MarkCurrentThreadBackground();
    WatchLoop();
  });
  StartAdoptionThread();
  return absl::OkStatus();
}

std::string DirStore::PathOf(const ObjectKey& key) const {
  std::string dir = JoinPath(root_, key.resource);
  if (!key.ns.empty()) dir = JoinPath(dir, key.ns);
  return JoinPath(dir, Cat(key.name, kJsonSuffix));
}

std::string DirStore::SymlinkedDirOf(const ObjectKey& key) const {
  std::string dir = JoinPath(root_, key.resource);
  if (IsSymlinkToDir(dir)) return dir;
  if (key.ns.empty()) return "";
  dir = JoinPath(dir, key.ns);
  return IsSymlinkToDir(dir) ? dir : "";
}

void DirStore::ReportSymlink(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return;  // gone already
  FileSignature signature{st.st_ino, st.st_size, st.st_mtim};
  auto it = bad_files_.find(path);
  if (it != bad_files_.end() && it->second == signature) return;  // already reported
  bad_files_[path] = signature;
  LogWarn(kDirStoreLog, "skipping symbolic link to a directory",
          {{"path", path},
           {"reason", kReasonSymlink},
           {"detail", "the store does not follow links out of its directory"}});
  BadFilesCounter(kReasonSymlink).Increment();
}

absl::Status DirStore::CheckWritable(const ObjectKey& key) {
  if (key.name.size() > kMaxFileObjectName) {
    return absl::InvalidArgumentError(
        Cat(key.ToString(), ": a name of ", key.name.size(),
            " characters has no file in a dir store (names of at most ", kMaxFileObjectName,
            " characters: the file name, with \".json\", is limited to ", NAME_MAX, " bytes)"));
  }
  if (std::string link = SymlinkedDirOf(key); !link.empty()) {
    ReportSymlink(link);
    return SymlinkError(link);
  }
  return absl::OkStatus();
}

void DirStore::RemoveStaleTempFiles() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(temp_dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (!IsStoreTempName(name) || !entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
    std::string path = entry.path().string();
    if (unlink(path.c_str()) != 0) {
      LogWarn(kDirStoreLog, "cannot remove a stale temp file",
              {{"path", path}, {"error", std::strerror(errno)}});
      continue;
    }
    LogWarn(kDirStoreLog, "removed a temp file left by a writer that died mid-write",
            {{"path", path}});
    TempFilesRemovedCounter().Increment();
  }
}

// --- Reads -----------------------------------------------------------------------------------

absl::StatusOr<Object> DirStore::Get(const ObjectKey& key) { return cache_.Get(key); }

absl::StatusOr<ObjectList> DirStore::List(std::string_view resource, const ListOptions& options) {
  if (absl::Status s = CheckReadFilter(resource, options.ns, options.fields); !s.ok()) return s;
  return cache_.List(resource, options);
}

absl::StatusOr<SharedObjectList> DirStore::ListShared(std::string_view resource,
                                                      const ListOptions& options) {
  if (absl::Status s = CheckReadFilter(resource, options.ns, options.fields); !s.ok()) return s;
  return cache_.ListShared(resource, options);
}

absl::StatusOr<std::unique_ptr<WatchHandle>> DirStore::Watch(std::string_view resource,
                                                             const WatchOptions& options,
                                                             WatchHandler handler) {
  return cache_.Watch(resource, options, std::move(handler));
}

// --- Writes ----------------------------------------------------------------------------------

absl::StatusOr<Object> DirStore::Write(const ObjectKey& key, Decide decide) {
  absl::MutexLock lock(&write_mu_);
  if (absl::Status s = CheckWritable(key); !s.ok()) return s;
  FileLock flock(lock_fd_);
  if (absl::Status s = flock.status(root_); !s.ok()) return s;
  CatchUp(key);
  auto stored = cache_.Find(key);
  absl::StatusOr<Object> next = decide(stored.get());
  if (!next.ok()) return next.status();
  // A no-op update or patch: no new version, no file write, no event (admission.h).
  if (stored != nullptr && ChangesNothing(*stored, *next)) return *stored;
  absl::StatusOr<uint64_t> version = NextVersion();
  if (!version.ok()) return version.status();
  SetResourceVersion(*next, *version);
  if (absl::Status s = EnsureDirs(key); !s.ok()) return s;
  absl::StatusOr<Object> written = WriteObjectFile(key, *std::move(next));
  if (!written.ok()) return written.status();
  return *cache_.Put(key, *std::move(written), *version);
}

absl::StatusOr<Object> DirStore::Create(std::string_view resource, Object object) {
  auto admitted = AdmitCreate(resource, std::move(object), options_.clock->Now());
  if (!admitted.ok()) return admitted.status();
  ObjectKey key = KeyOf(resource, *admitted);
  return Write(key, [&](const Object* stored) -> absl::StatusOr<Object> {
    if (stored != nullptr) return AlreadyExistsError(key);
    return *std::move(admitted);
  });
}

absl::StatusOr<Object> DirStore::Update(std::string_view resource, Object object) {
  if (absl::Status s = ValidateObject(resource, object); !s.ok()) return s;
  ObjectKey key = KeyOf(resource, object);
  return Write(key, [&](const Object* stored) -> absl::StatusOr<Object> {
    if (stored == nullptr) return NotFoundError(key);
    return AdmitUpdate(resource, *stored, std::move(object));
  });
}

absl::StatusOr<Object> DirStore::Patch(const ObjectKey& key, const Object& merge_patch) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  return Write(key, [&](const Object* stored) -> absl::StatusOr<Object> {
    if (stored == nullptr) return NotFoundError(key);
    return AdmitPatch(key, *stored, merge_patch);
  });
}

absl::Status DirStore::Delete(const ObjectKey& key, std::string_view resource_version) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  absl::MutexLock lock(&write_mu_);
  if (absl::Status s = CheckWritable(key); !s.ok()) return s;
  FileLock flock(lock_fd_);
  if (absl::Status s = flock.status(root_); !s.ok()) return s;
  CatchUp(key);
  auto stored = cache_.Find(key);
  if (stored == nullptr) return NotFoundError(key);
  if (absl::Status s = AdmitDelete(key, *stored, resource_version); !s.ok()) return s;
  absl::StatusOr<uint64_t> version = NextVersion();
  if (!version.ok()) return version.status();
  std::string path = PathOf(key);
  known_files_.erase(path);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(errno, path, "cannot delete");
  }
  if (absl::Status s = FsyncDir(std::filesystem::path(path).parent_path()); !s.ok()) return s;
  cache_.Remove(key, *version);
  return absl::OkStatus();
}

absl::Status DirStore::EnsureDirs(const ObjectKey& key) {
  std::string resource_dir = JoinPath(root_, key.resource);
  absl::StatusOr<bool> created = MakeDir(resource_dir);
  if (!created.ok()) return created.status();
  if (*created) {
    if (absl::Status s = FsyncDir(root_); !s.ok()) return s;
  }
  // Watching here (not only on IN_CREATE) so that no later change in it can be missed.
  WatchDir(WatchedDir{resource_dir, key.resource, std::nullopt});
  if (key.ns.empty()) return absl::OkStatus();
  std::string ns_dir = JoinPath(resource_dir, key.ns);
  created = MakeDir(ns_dir);
  if (!created.ok()) return created.status();
  if (*created) {
    if (absl::Status s = FsyncDir(resource_dir); !s.ok()) return s;
  }
  WatchDir(WatchedDir{ns_dir, key.resource, key.ns});
  return absl::OkStatus();
}

absl::StatusOr<Object> DirStore::WriteObjectFile(const ObjectKey& key, Object object) {
  std::optional<std::string> exact = SerializeExactly(object);
  std::string text = exact.has_value() ? *std::move(exact) : Serialize(object);
  if (text.size() > kMaxFileSize) {
    return absl::InvalidArgumentError(Cat(key.ToString(), ": ", text.size(),
                                          " bytes as a file; a dir store file holds at most ",
                                          kMaxFileSize, " bytes"));
  }
  std::filesystem::path path(PathOf(key));
  struct stat written {};
  if (absl::Status s = WriteFileAtomically(temp_dir_, path.parent_path().string(),
                                           path.filename().string(), text, &written);
      !s.ok()) {
    known_files_.erase(path.string());
    return s;
  }
  known_files_[path.string()] = FileSignature{written.st_ino, written.st_size, written.st_mtim};
  // The text says exactly the object unless a string had bytes that are not UTF-8: only then
  // is it read back. Reading back every write cost as much as the write itself, under the
  // store's lock (about 10 ms for a 650 KB cluster-info shard at 50,000 nodes), while the
  // watcher waited to pass on the next device-info change.
  if (exact.has_value()) return object;
  return Object::parse(text);
}

// --- Version counter -------------------------------------------------------------------------

uint64_t DirStore::ReadCounter() {
  char buf[64];
  ssize_t n;
  do {
    n = pread(version_fd_, buf, sizeof(buf) - 1, 0);
  } while (n < 0 && errno == EINTR);
  uint64_t value = 0;
  if (n > 0) {
    std::string_view text = Trim(std::string_view(buf, static_cast<size_t>(n)));
    if (auto v = ParseResourceVersion(text); v) {
      value = *v;
    } else if (!text.empty()) {
      LogWarn(kDirStoreLog, "version counter file is not a number, using the cached version",
              {{"path", JoinPath(root_, kVersionFile)}});
    }
  } else if (n < 0) {
    LogWarn(kDirStoreLog, "cannot read version counter file",
            {{"path", JoinPath(root_, kVersionFile)}, {"error", std::strerror(errno)}});
  }
  // Never go back: the counter file may have been lost or damaged.
  return std::max(value, cache_.LastResourceVersion());
}

absl::Status DirStore::WriteCounter(uint64_t value) {
  std::string path = JoinPath(root_, kVersionFile);
  std::string text = Cat(value, "\n");
  ssize_t n;
  do {
    n = pwrite(version_fd_, text.data(), text.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(text.size())) {
    return ErrnoError(n < 0 ? errno : EIO, path, "cannot write version counter");
  }
  struct stat st {};
  if (fstat(version_fd_, &st) == 0 && st.st_size > static_cast<off_t>(text.size())) {
    if (ftruncate(version_fd_, static_cast<off_t>(text.size())) != 0) {
      return ErrnoError(errno, path, "cannot truncate version counter");
    }
  }
  // Not synced: the object file written next is, and after a power loss the counter is taken as
  // at least the newest version of any object file (ReadCounter, Init), so versions never go
  // back below an object that exists. What a power loss may reuse is the version of a deletion,
  // which no surviving watcher or object holds. One sync fewer per write.
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> DirStore::NextVersion() {
  uint64_t next = ReadCounter() + 1;
  if (absl::Status s = WriteCounter(next); !s.ok()) return s;
  return next;
}

// --- Reading files ---------------------------------------------------------------------------

DirStore::FileRead DirStore::ReadObjectFile(const ObjectKey& key, bool links_checked) const {
  FileRead read;
  read.path = PathOf(key);
  const std::string& path = read.path;
  auto bad = [&](std::string_view reason, std::string detail) {
    read.kind = FileRead::kBad;
    read.reason = std::string(reason);
    read.detail = std::move(detail);
    return std::move(read);
  };
  // Below a linked directory nothing exists for the store (see SymlinkedDirOf); this catches a
  // directory replaced by a link while the store runs.
  if (!links_checked && !SymlinkedDirOf(key).empty()) return read;  // kAbsent
  // O_NONBLOCK: opening a FIFO (or a device) named like an object file must not wait for a
  // writer; such a file is skipped below as not regular.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return read;  // kAbsent
    return bad(kReasonUnreadable, std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return bad(kReasonUnreadable, std::strerror(err));
  }
  read.signature = FileSignature{st.st_ino, st.st_size, st.st_mtim};
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return bad(kReasonUnreadable, "not a regular file");
  }
  if (static_cast<size_t>(st.st_size) > kMaxFileSize) {
    close(fd);
    return bad(kReasonTooLarge, Cat(st.st_size, " bytes, the limit is ", kMaxFileSize, " bytes"));
  }
  std::string text;
  text.resize(static_cast<size_t>(st.st_size) + 1);
  size_t got = 0;
  for (;;) {
    if (got == text.size()) text.resize(text.size() * 2);
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return bad(kReasonUnreadable, std::strerror(err));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
    if (got > kMaxFileSize) {
      close(fd);
      return bad(kReasonTooLarge, Cat("more than ", kMaxFileSize, " bytes"));
    }
  }
  close(fd);
  text.resize(got);

  // ParseJson: simdjson first (opening the store reads every file), nlohmann for what it
  // refuses, and the nesting bound every walk of the object relies on.
  absl::StatusOr<Object> parsed = ParseJson(text, "the file", kMaxFileSize);
  if (!parsed.ok()) return bad(kReasonMalformed, std::string(parsed.status().message()));
  Object object = *std::move(parsed);
  if (!object.is_object()) {
    return bad(kReasonNotObject, Cat("a JSON ", object.type_name(), ", not an object"));
  }
  // Name and namespace may be left out: the path says them.
  auto meta = object.find("metadata");
  if (meta != object.end() && !meta->is_object()) {
    return bad(kReasonInvalid, "metadata is not an object");
  }
  std::string name = NameOf(object);
  if (!name.empty() && name != key.name) {
    return bad(kReasonPathMismatch,
               Cat("metadata.name \"", name, "\" but the file is for \"", key.name, "\""));
  }
  if (meta == object.end() || !meta->contains("name")) SetMetadataField(object, "name", key.name);
  if (!key.ns.empty()) {
    std::string ns = NamespaceOf(object);
    if (!ns.empty() && ns != key.ns) {
      return bad(kReasonPathMismatch,
                 Cat("metadata.namespace \"", ns, "\" but the file is in \"", key.ns, "\""));
    }
    if (ns.empty()) SetMetadataField(object, "namespace", key.ns);
  }
  if (absl::Status s = ValidateObject(key.resource, object); !s.ok()) {
    return bad(kReasonInvalid, std::string(s.message()));
  }
  read.kind = FileRead::kGood;
  read.version = ParseResourceVersion(ResourceVersionOf(object));
  read.has_uid = !UidOf(object).empty();
  read.object = std::move(object);
  return read;
}

std::vector<DirStore::FileRead> DirStore::ReadObjectFiles(
    const std::vector<const ObjectKey*>& keys) const {
  std::vector<FileRead> reads(keys.size());
  // The keys come sorted by resource and namespace: one check per directory.
  std::vector<const ObjectKey*> readable;
  std::vector<size_t> slot;
  readable.reserve(keys.size());
  slot.reserve(keys.size());
  const ObjectKey* last_dir = nullptr;
  bool linked = false;
  for (size_t i = 0; i < keys.size(); ++i) {
    const ObjectKey& key = *keys[i];
    if (last_dir == nullptr || last_dir->resource != key.resource || last_dir->ns != key.ns) {
      linked = !SymlinkedDirOf(key).empty();
      last_dir = &key;
    }
    if (linked) continue;  // kAbsent: below a linked directory nothing exists for the store
    readable.push_back(&key);
    slot.push_back(i);
  }
  // Below a few thousand files one thread is as quick as starting more.
  constexpr size_t kFilesPerThread = 2048;
  ParallelFor(readable.size(), kFilesPerThread, "dir-load", [&](size_t j) {
    reads[slot[j]] = ReadObjectFile(*readable[j], /*links_checked=*/true);
  });
  return reads;
}

void DirStore::ReportBadFile(const std::string& path, const FileRead& read) {
  auto it = bad_files_.find(path);
  if (it != bad_files_.end() && it->second == read.signature) return;  // already reported
  bad_files_[path] = read.signature;
  LogWarn(kDirStoreLog, "skipping bad object file",
          {{"path", path}, {"reason", read.reason}, {"detail", read.detail}});
  BadFilesCounter(read.reason).Increment();
}

// --- Keeping the cache in step with the directory --------------------------------------------

void DirStore::CatchUp(const ObjectKey& key) {
  KeySet dirty;
  ReadEvents(&dirty);
  dirty.insert(key);
  Sync(dirty, /*loading=*/false);
}

bool DirStore::Unchanged(const ObjectKey& key, const std::string& path) {
  auto it = known_files_.find(path);
  if (it == known_files_.end()) return false;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  return it->second == FileSignature{st.st_ino, st.st_size, st.st_mtim} &&
         cache_.Find(key) != nullptr;
}

bool DirStore::NeedsSync(const KeySet& keys) {
  for (const ObjectKey& key : keys) {
    if (Unchanged(key, PathOf(key))) continue;
    FileRead read = ReadObjectFile(key);
    auto cached = cache_.Find(key);
    switch (read.kind) {
      case FileRead::kAbsent:
        if (cached != nullptr) return true;
        break;
      case FileRead::kBad: {
        auto it = bad_files_.find(PathOf(key));
        if (it == bad_files_.end() || !(it->second == read.signature)) return true;
        break;
      }
      case FileRead::kGood:
        if (cached == nullptr || *cached != read.object) return true;
        break;
    }
  }
  return false;
}

void DirStore::Sync(const KeySet& keys, bool loading) {
  struct Found {
    const ObjectKey* key;  // in `keys`
    Object object;
    uint64_t version = 0;
  };
  std::vector<Found> accepted;  // carry a version from a well-behaved writer
  std::vector<Found> adopt;     // need a fresh version (and maybe a uid)
  std::vector<ObjectKey> gone;
  uint64_t last = cache_.LastResourceVersion();
  uint64_t counter = ReadCounter();
  uint64_t counter_on_disk = counter;

  // At load every file is read, so they are read up front, in parallel; later syncs first
  // skip the files this process wrote itself (a stat, not a read).
  std::vector<FileRead> loaded;
  if (loading) {
    std::vector<const ObjectKey*> order;
    order.reserve(keys.size());
    for (const ObjectKey& key : keys) order.push_back(&key);
    loaded = ReadObjectFiles(order);
  }
  size_t index = 0;
  if (loading) known_files_.reserve(known_files_.size() + keys.size());
  for (const ObjectKey& key : keys) {
    FileRead read;
    if (loading) {
      read = std::move(loaded[index++]);
    } else {
      if (Unchanged(key, PathOf(key))) continue;  // e.g. the echo of our own write
      read = ReadObjectFile(key);
    }
    if (read.kind != FileRead::kBad && !bad_files_.empty()) bad_files_.erase(read.path);
    if (read.kind == FileRead::kGood) {
      known_files_.insert_or_assign(std::move(read.path), read.signature);
    } else {
      known_files_.erase(read.path);
    }
    // Loading (Init) fills an empty cache: nothing is cached to compare with.
    std::shared_ptr<const Object> cached = loading ? nullptr : cache_.Find(key);
    if (read.kind == FileRead::kAbsent) {
      if (cached != nullptr) gone.push_back(key);
      continue;
    }
    if (read.kind == FileRead::kBad) {
      ReportBadFile(read.path, read);  // the last good version (if any) stays
      continue;
    }
    if (cached != nullptr && *cached == read.object) continue;  // e.g. the echo of our write
    if (read.version && read.has_uid) {
      accepted.push_back(Found{&key, std::move(read.object), *read.version});
    } else {
      adopt.push_back(Found{&key, std::move(read.object), 0});
    }
  }

  if (loading) {
    // A lost or damaged counter file must not force every object to a new version.
    for (const Found& f : accepted) counter = std::max(counter, f.version);
  }
  // A version is kept only if it is new to us and was allocated from the counter: anything
  // else (a copied file, a hand edit that kept the old version) would break the order of the
  // event stream. `accepted` is in key order; the check walks it in version order.
  std::vector<size_t> by_version(accepted.size());
  for (size_t i = 0; i < by_version.size(); ++i) by_version[i] = i;
  std::stable_sort(by_version.begin(), by_version.end(), [&accepted](size_t a, size_t b) {
    return accepted[a].version < accepted[b].version;
  });
  std::vector<bool> kept(accepted.size(), false);
  uint64_t previous = last;
  for (size_t i : by_version) {
    Found& f = accepted[i];
    if (f.version <= previous || f.version > counter) {
      adopt.push_back(Found{f.key, std::move(f.object), 0});
      continue;
    }
    previous = f.version;
    kept[i] = true;
    // Watchers see the changes in version order; the cache loads quickest in key order.
    if (!loading) cache_.Put(*f.key, std::move(f.object), f.version);
  }
  if (loading) {
    for (size_t i = 0; i < accepted.size(); ++i) {
      if (kept[i]) cache_.Load(*accepted[i].key, std::move(accepted[i].object));
    }
  }

  uint64_t next = counter;
  if (!adopt.empty() || !gone.empty() || counter != counter_on_disk) {
    uint64_t target = counter + adopt.size() + gone.size();
    if (absl::Status s = WriteCounter(target); !s.ok()) {
      LogError(kDirStoreLog, "cannot allocate resource versions; changes stay pending",
               {{"error", s}});
      adopt.clear();
      gone.clear();
      target = counter;
    }
    std::sort(adopt.begin(), adopt.end(),
              [](const Found& a, const Found& b) { return *a.key < *b.key; });
    size_t adopted_at_load = 0;
    for (Found& f : adopt) {
      uint64_t version = ++next;
      auto cached = cache_.Find(*f.key);
      if (UidOf(f.object).empty()) {
        // Same name, same identity: an agent rewriting its file keeps the object's uid.
        SetMetadataField(f.object, "uid", cached != nullptr ? UidOf(*cached) : NewUid());
      }
      if (f.object["metadata"].find("creationTimestamp") == f.object["metadata"].end()) {
        std::string created;
        if (cached != nullptr) {
          const auto& m = (*cached)["metadata"];
          if (auto it = m.find("creationTimestamp"); it != m.end())
            created = it->get<std::string>();
        }
        if (created.empty()) created = FormatTimestamp(options_.clock->Now());
        SetMetadataField(f.object, "creationTimestamp", created);
      }
      SetResourceVersion(f.object, version);
      if (loading) {
        // Start-up reads each file once and writes none: the identity is the cache's at once,
        // and the file gets it from the watcher thread once the store is open.
        deferred_adoptions_.push_back(*f.key);
        cache_.Load(*f.key, std::move(f.object));
        ++adopted_at_load;
        continue;
      }
      absl::StatusOr<Object> written = WriteObjectFile(*f.key, std::move(f.object));
      if (!written.ok()) {
        LogError(kDirStoreLog, "cannot adopt file",
                 {{"path", PathOf(*f.key)}, {"error", written.status()}});
        continue;
      }
      AdoptedFilesCounter("watch").Increment();
      LogDebug(kDirStoreLog, "adopted file written outside the store",
               {{"path", PathOf(*f.key)}, {"resourceVersion", version}});
      cache_.Put(*f.key, *std::move(written), version);
    }
    if (adopted_at_load > 0) {
      deferred_total_ += adopted_at_load;
      AdoptedFilesCounter("startup").Increment(adopted_at_load);
      LogInfo(kDirStoreLog, "adopted files written outside the store",
              {{"files", adopted_at_load},
               {"path", root_},
               {"note", "in use now; rewritten with their identity in the background"}});
    }
    for (const ObjectKey& key : gone) cache_.Remove(key, ++next);
    next = target;
  }
  if (loading) cache_.Reset(next);
}

}  // namespace clusterd::store
