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
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_name.h"
#include "store/admission.h"
#include "store/strings.h"

namespace clusterd::store {
namespace {

constexpr std::string_view kComponent = "store";
constexpr std::string_view kJsonSuffix = ".json";
constexpr uint32_t kDirMask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE |
                              IN_DELETE_SELF | IN_ONLYDIR;

// Bad-file reasons, the `reason` label of clusterd_store_bad_files_total.
constexpr std::string_view kReasonUnreadable = "unreadable";
constexpr std::string_view kReasonTooLarge = "too_large";
constexpr std::string_view kReasonMalformed = "malformed";
constexpr std::string_view kReasonNotObject = "not_object";
constexpr std::string_view kReasonPathMismatch = "path_mismatch";
constexpr std::string_view kReasonInvalid = "invalid";
constexpr std::string_view kReasonSymlink = "symlink";

// The longest object name with a file: NAME_MAX less ".json".
constexpr size_t kMaxFileObjectName = NAME_MAX - kJsonSuffix.size();
// How much of the object's file name a temp file's name keeps (for an operator looking into
// PATH/.tmp), leaving room for pid, sequence and suffix within NAME_MAX.
constexpr size_t kTempNameKeep = 128;
constexpr std::string_view kTempSuffix = ".tmp";

absl::Status ErrnoError(int err, std::string_view path, std::string_view what) {
  return absl::ErrnoToStatus(err, Cat("dir store ", path, ": ", what));
}

std::string JoinPath(std::string_view a, std::string_view b) { return Cat(a, "/", b); }

bool IsIgnoredName(std::string_view name) { return name.empty() || name.front() == '.'; }

// The object name of a file name, or nullopt if the file is not an object file.
std::optional<std::string> ObjectNameOf(std::string_view file_name) {
  if (IsIgnoredName(file_name) || !file_name.ends_with(kJsonSuffix) ||
      file_name.size() == kJsonSuffix.size()) {
    return std::nullopt;
  }
  return std::string(file_name.substr(0, file_name.size() - kJsonSuffix.size()));
}

// The bytes a store writes for an object: kubectl-like, 2-space indent, newline-terminated.
std::string Serialize(const Object& object) {
  return object.dump(2, ' ', false, Object::error_handler_t::replace) + "\n";
}

absl::Status FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, dir, "cannot open directory");
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  if (rc != 0) return ErrnoError(err, dir, "fsync of directory failed");
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, path, "write failed");
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Whether `digits` is a non-empty run of decimal digits.
bool AllDigits(std::string_view digits) {
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// A temp file name as WriteFileAtomically makes them: ".<file name, shortened>.<pid>.<n>.tmp".
// Older versions kept the whole file name, which the pattern covers too.
bool IsStoreTempName(std::string_view name) {
  if (name.size() < 2 || name.front() != '.' || !name.ends_with(kTempSuffix)) return false;
  name.remove_suffix(kTempSuffix.size());
  for (int part = 0; part < 2; ++part) {  // <n>, then <pid>
    size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || !AllDigits(name.substr(dot + 1))) return false;
    name = name.substr(0, dot);
  }
  return !name.empty();  // the leading dot remains
}

// Replaces dir/name atomically: a temp file in `temp_dir` (same file system, not watched),
// fsync, rename, fsync of the directory. `written` receives the file's stat (the inode survives
// the rename). The caller holds the writers' flock, so a temp file of the same name can only be
// one left by a writer that died (a pid is reused, e.g. pid 1 in a container): it is replaced.
absl::Status WriteFileAtomically(const std::string& temp_dir, const std::string& dir,
                                 std::string_view name, std::string_view text,
                                 struct stat* written) {
  static std::atomic<uint64_t> sequence{0};
  std::string final_path = JoinPath(dir, name);
  // Not the whole name: a 250-character object name is a 255-byte file name already.
  std::string temp_path = JoinPath(temp_dir, Cat(".", name.substr(0, kTempNameKeep), ".", getpid(),
                                                 ".", sequence.fetch_add(1), kTempSuffix));
  auto create = [&] {
    return open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  };
  int fd = create();
  if (fd < 0 && errno == ENOENT && mkdir(temp_dir.c_str(), 0755) == 0) {
    // Someone removed the temp directory while the store ran: make it again.
    fd = create();
  }
  if (fd < 0 && errno == EEXIST && unlink(temp_path.c_str()) == 0) fd = create();
  if (fd < 0) return ErrnoError(errno, temp_path, "cannot create");
  absl::Status status = WriteAll(fd, text, temp_path);
  if (status.ok() && fsync(fd) != 0) status = ErrnoError(errno, temp_path, "fsync failed");
  if (status.ok() && fstat(fd, written) != 0) status = ErrnoError(errno, temp_path, "fstat failed");
  if (close(fd) != 0 && status.ok()) status = ErrnoError(errno, temp_path, "close failed");
  if (status.ok() && rename(temp_path.c_str(), final_path.c_str()) != 0) {
    status = ErrnoError(errno, final_path, "rename failed");
  }
  if (!status.ok()) {
    unlink(temp_path.c_str());
    return status;
  }
  return FsyncDir(dir);
}

// Whether `path` is a symbolic link that leads to a directory (one the layout would otherwise
// descend into).
bool IsSymlinkToDir(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return false;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::Status SymlinkError(const std::string& path) {
  return absl::FailedPreconditionError(
      Cat("dir store ", path,
          ": is a symbolic link; the store does not follow links out of its directory"));
}

// mkdir that tolerates an existing directory; true if it created one.
// A symbolic link is refused, even to a directory (see DirStore::SymlinkedDirOf).
absl::StatusOr<bool> MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) == 0) return true;
  if (errno != EEXIST) return ErrnoError(errno, path, "cannot create directory");
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return ErrnoError(errno, path, "cannot stat");
  if (S_ISLNK(st.st_mode)) return SymlinkError(path);
  if (!S_ISDIR(st.st_mode)) return ErrnoError(ENOTDIR, path, "cannot create directory");
  return false;
}

// Holds the cross-process writer lock (flock on PATH/.lock) for its lifetime.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        error_ = errno;
        return;
      }
    }
    locked_ = true;
  }
  ~FileLock() {
    if (locked_) flock(fd_, LOCK_UN);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  absl::Status status(std::string_view root) const {
    if (locked_) return absl::OkStatus();
    return ErrnoError(error_, root, "cannot lock .lock");
  }

 private:
  int fd_;
  bool locked_ = false;
  int error_ = 0;
};

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
};

Counter& DirStore::BadFilesCounter(std::string_view reason) {
  return MetricsRegistry::Default().GetCounter(
      kBadFilesMetric, "Files in a dir store that were skipped because they are not valid objects.",
      {{"reason", std::string(reason)}});
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
    WatchLoop();
  });
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
  LogWarn(kComponent, "skipping symbolic link to a directory",
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
      LogWarn(kComponent, "cannot remove a stale temp file",
              {{"path", path}, {"error", std::strerror(errno)}});
      continue;
    }
    LogWarn(kComponent, "removed a temp file left by a writer that died mid-write",
            {{"path", path}});
    TempFilesRemovedCounter().Increment();
  }
}

// --- Reads -----------------------------------------------------------------------------------

absl::StatusOr<Object> DirStore::Get(const ObjectKey& key) { return cache_.Get(key); }

absl::StatusOr<ObjectList> DirStore::List(std::string_view resource, const ListOptions& options) {
  if (absl::Status s = CheckNamespaceFilter(resource, options.ns); !s.ok()) return s;
  return cache_.List(resource, options);
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
  absl::StatusOr<uint64_t> version = NextVersion();
  if (!version.ok()) return version.status();
  SetResourceVersion(*next, *version);
  if (absl::Status s = EnsureDirs(key); !s.ok()) return s;
  absl::StatusOr<Object> written = WriteObjectFile(key, *next);
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

absl::StatusOr<Object> DirStore::WriteObjectFile(const ObjectKey& key, const Object& object) {
  std::string text = Serialize(object);
  std::filesystem::path path(PathOf(key));
  struct stat written {};
  if (absl::Status s = WriteFileAtomically(temp_dir_, path.parent_path().string(),
                                           path.filename().string(), text, &written);
      !s.ok()) {
    known_files_.erase(path.string());
    return s;
  }
  known_files_[path.string()] = FileSignature{written.st_ino, written.st_size, written.st_mtim};
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
      LogWarn(kComponent, "version counter file is not a number, using the cached version",
              {{"path", JoinPath(root_, kVersionFile)}});
    }
  } else if (n < 0) {
    LogWarn(kComponent, "cannot read version counter file",
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

DirStore::FileRead DirStore::ReadObjectFile(const ObjectKey& key) const {
  FileRead read;
  std::string path = PathOf(key);
  auto bad = [&](std::string_view reason, std::string detail) {
    read.kind = FileRead::kBad;
    read.reason = std::string(reason);
    read.detail = std::move(detail);
    return std::move(read);
  };
  // Below a linked directory nothing exists for the store (see SymlinkedDirOf); this catches a
  // directory replaced by a link while the store runs.
  if (!SymlinkedDirOf(key).empty()) return read;  // kAbsent
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

  Object object = Object::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return bad(kReasonMalformed, "not valid JSON");
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
  read.object = std::move(object);
  return read;
}

void DirStore::ReportBadFile(const std::string& path, const FileRead& read) {
  auto it = bad_files_.find(path);
  if (it != bad_files_.end() && it->second == read.signature) return;  // already reported
  bad_files_[path] = read.signature;
  LogWarn(kComponent, "skipping bad object file",
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
    ObjectKey key;
    Object object;
    uint64_t version = 0;
  };
  std::vector<Found> accepted;  // carry a version from a well-behaved writer
  std::vector<Found> adopt;     // need a fresh version (and maybe a uid)
  std::vector<ObjectKey> gone;
  uint64_t last = cache_.LastResourceVersion();
  uint64_t counter = ReadCounter();
  uint64_t counter_on_disk = counter;

  for (const ObjectKey& key : keys) {
    std::string path = PathOf(key);
    if (!loading && Unchanged(key, path)) continue;  // e.g. the echo of our own write
    FileRead read = ReadObjectFile(key);
    if (read.kind != FileRead::kBad) bad_files_.erase(path);
    if (read.kind == FileRead::kGood) {
      known_files_[path] = read.signature;
    } else {
      known_files_.erase(path);
    }
    auto cached = cache_.Find(key);
    if (read.kind == FileRead::kAbsent) {
      if (cached != nullptr) gone.push_back(key);
      continue;
    }
    if (read.kind == FileRead::kBad) {
      ReportBadFile(path, read);  // the last good version (if any) stays
      continue;
    }
    if (cached != nullptr && *cached == read.object) continue;  // e.g. the echo of our write
    std::optional<uint64_t> version = ParseResourceVersion(ResourceVersionOf(read.object));
    if (version && !UidOf(read.object).empty()) {
      accepted.push_back(Found{key, std::move(read.object), *version});
    } else {
      adopt.push_back(Found{key, std::move(read.object), 0});
    }
  }

  if (loading) {
    // A lost or damaged counter file must not force every object to a new version.
    for (const Found& f : accepted) counter = std::max(counter, f.version);
  }
  // A version is kept only if it is new to us and was allocated from the counter: anything
  // else (a copied file, a hand edit that kept the old version) would break the order of the
  // event stream.
  std::stable_sort(accepted.begin(), accepted.end(),
                   [](const Found& a, const Found& b) { return a.version < b.version; });
  uint64_t previous = last;
  for (Found& f : accepted) {
    if (f.version <= previous || f.version > counter) {
      adopt.push_back(Found{f.key, std::move(f.object), 0});
      continue;
    }
    previous = f.version;
    if (loading) {
      cache_.Load(f.key, std::move(f.object));
    } else {
      cache_.Put(f.key, std::move(f.object), f.version);
    }
  }

  uint64_t next = counter;
  if (!adopt.empty() || !gone.empty() || counter != counter_on_disk) {
    uint64_t target = counter + adopt.size() + gone.size();
    if (absl::Status s = WriteCounter(target); !s.ok()) {
      LogError(kComponent, "cannot allocate resource versions; changes stay pending",
               {{"error", s}});
      adopt.clear();
      gone.clear();
      target = counter;
    }
    std::sort(adopt.begin(), adopt.end(),
              [](const Found& a, const Found& b) { return a.key < b.key; });
    for (Found& f : adopt) {
      uint64_t version = ++next;
      auto cached = cache_.Find(f.key);
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
      absl::StatusOr<Object> written = WriteObjectFile(f.key, f.object);
      if (!written.ok()) {
        LogError(kComponent, "cannot adopt file",
                 {{"path", PathOf(f.key)}, {"error", written.status()}});
        continue;
      }
      LogInfo(kComponent, "adopted file written outside the store",
              {{"path", PathOf(f.key)}, {"resourceVersion", version}});
      if (loading) {
        cache_.Load(f.key, *std::move(written));
      } else {
        cache_.Put(f.key, *std::move(written), version);
      }
    }
    for (const ObjectKey& key : gone) cache_.Remove(key, ++next);
    next = target;
  }
  if (loading) cache_.Reset(next);
}

// --- inotify ---------------------------------------------------------------------------------

bool DirStore::WatchDir(WatchedDir dir) {
  int wd = inotify_add_watch(inotify_fd_, dir.path.c_str(), kDirMask);
  if (wd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      LogWarn(kComponent, "cannot watch directory",
              {{"path", dir.path}, {"error", std::strerror(errno)}});
    }
    return false;
  }
  dirs_[wd] = std::move(dir);
  return true;
}

void DirStore::UnwatchTree(const std::string& path) {
  std::string prefix = path + "/";
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    auto current = it++;
    if (current->second.path == path || current->second.path.starts_with(prefix)) {
      inotify_rm_watch(inotify_fd_, current->first);  // fails harmlessly if already gone
      dirs_.erase(current);
    }
  }
}

void DirStore::ScanAll(KeySet* dirty) {
  for (std::string_view resource : kKnownResources) {
    ScanResourceDir(std::string(resource), dirty);
    for (ObjectKey& key : cache_.Keys(resource)) dirty->insert(std::move(key));
  }
}

void DirStore::ScanResourceDir(const std::string& resource, KeySet* dirty) {
  std::string path = JoinPath(root_, resource);
  if (IsSymlinkToDir(path)) return ReportSymlink(path);
  // Watch first, then list: a file landing in between is seen twice, never missed.
  if (!WatchDir(WatchedDir{path, resource, std::nullopt})) return;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    std::string name = entry.path().filename().string();
    if (IsIgnoredName(name)) continue;
    if (IsClusterScoped(resource)) {
      if (auto object_name = ObjectNameOf(name)) {
        dirty->insert(ObjectKey{resource, "", *object_name});
      }
    } else if (entry.is_directory(ec)) {  // follows links: ScanNamespaceDir refuses them
      ScanNamespaceDir(resource, name, dirty);
    }
  }
}

void DirStore::ScanNamespaceDir(const std::string& resource, const std::string& ns, KeySet* dirty) {
  std::string path = JoinPath(JoinPath(root_, resource), ns);
  if (IsSymlinkToDir(path)) return ReportSymlink(path);
  if (!WatchDir(WatchedDir{path, resource, ns})) return;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (auto object_name = ObjectNameOf(entry.path().filename().string())) {
      dirty->insert(ObjectKey{resource, ns, *object_name});
    }
  }
}

bool DirStore::ReadEvents(KeySet* dirty) {
  alignas(inotify_event) char buf[64 * 1024];
  bool any = false;
  bool overflow = false;
  for (;;) {
    ssize_t n = read(inotify_fd_, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) {
        LogError(kComponent, "reading inotify events failed",
                 {{"path", root_}, {"error", std::strerror(errno)}});
      }
      break;
    }
    if (n == 0) break;
    any = true;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        overflow = true;
        continue;
      }
      auto it = dirs_.find(ev->wd);
      if (it == dirs_.end()) continue;
      const WatchedDir dir = it->second;  // copy: the handlers below may change dirs_
      if (ev->mask & IN_IGNORED) {        // the directory is gone
        dirs_.erase(it);
        if (!dir.resource.empty()) {
          for (ObjectKey& key : cache_.Keys(dir.resource, dir.ns)) dirty->insert(std::move(key));
        }
        continue;
      }
      if (ev->len == 0) continue;
      std::string name(ev->name);
      if (IsIgnoredName(name)) continue;
      bool is_root = dir.resource.empty();
      bool is_resource_dir = !is_root && !dir.ns.has_value();
      if (ev->mask & IN_ISDIR) {
        std::string child = JoinPath(dir.path, name);
        if (is_root && !IsKnownResource(name)) continue;
        if (is_resource_dir && IsClusterScoped(dir.resource)) continue;
        if (!is_root && !is_resource_dir) continue;  // nothing lives below namespaces
        if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
          UnwatchTree(child);
          std::optional<std::string_view> ns;
          if (is_resource_dir) ns = name;
          for (ObjectKey& key : cache_.Keys(is_root ? name : dir.resource, ns)) {
            dirty->insert(std::move(key));
          }
        }
        if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
          // Files may have landed before the watch: list the new directory.
          if (is_root) {
            ScanResourceDir(name, dirty);
          } else {
            ScanNamespaceDir(dir.resource, name, dirty);
          }
        }
        continue;
      }
      if (is_root || (is_resource_dir && !IsClusterScoped(dir.resource))) {
        // Not a directory, where the layout has directories: a link to one is reported (and
        // not followed, as at start-up); anything else is ignored.
        if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && (!is_root || IsKnownResource(name))) {
          if (std::string child = JoinPath(dir.path, name); IsSymlinkToDir(child)) {
            ReportSymlink(child);
          }
        }
        continue;
      }
      // A plain IN_CREATE may be a file still being written: wait for its close or rename.
      if (!(ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE))) continue;
      if (auto object_name = ObjectNameOf(name)) {
        dirty->insert(ObjectKey{dir.resource, dir.ns.value_or(""), *object_name});
      }
    }
  }
  if (overflow) {
    LogWarn(kComponent, "inotify queue overflowed, rescanning", {{"path", root_}});
    ScanAll(dirty);
  }
  return any;
}

void DirStore::ProcessEvents() {
  absl::MutexLock lock(&write_mu_);
  KeySet dirty;
  if (!ReadEvents(&dirty) || dirty.empty()) return;
  // Most events are echoes of this process's own writes: settle those without the flock.
  if (!NeedsSync(dirty)) return;
  FileLock flock(lock_fd_);
  if (absl::Status s = flock.status(root_); !s.ok()) {
    LogError(kComponent, "cannot take the store lock; changes stay pending", {{"error", s}});
    return;
  }
  ReadEvents(&dirty);  // whatever completed before we got the lock
  Sync(dirty, /*loading=*/false);
}

void DirStore::WatchLoop() {
  pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  for (;;) {
    int n = poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      LogError(kComponent, "poll failed, no longer watching the directory",
               {{"path", root_}, {"error", std::strerror(errno)}});
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) ProcessEvents();
  }
}

}  // namespace clusterd::store
