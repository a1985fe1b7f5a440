#pragma once

// The file-system primitives of the dir store: its file layout (object files, ignored names,
// temp files), durable writes (temp file, fsync, rename, fsync of the directory) and the
// refusal of symbolic links. Used by DirStore (dir_store.cc) and its directory watcher
// (dir_store_inotify.cc) only.
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/object_store.h"

namespace clusterd::store::dir_files {

inline constexpr std::string_view kJsonSuffix = ".json";
inline constexpr std::string_view kTempSuffix = ".tmp";
// The longest object name with a file: NAME_MAX less ".json".
inline constexpr size_t kMaxFileObjectName = NAME_MAX - kJsonSuffix.size();
// How much of the object's file name a temp file's name keeps (for an operator looking into
// PATH/.tmp), leaving room for pid, sequence and suffix within NAME_MAX.
inline constexpr size_t kTempNameKeep = 128;

// "dir store PATH: WHAT: <strerror>" with the errno's status code.
absl::Status ErrnoError(int err, std::string_view path, std::string_view what);
std::string JoinPath(std::string_view a, std::string_view b);
// Names the layout skips: empty and hidden ones (.lock, .tmp, editors' files).
bool IsIgnoredName(std::string_view name);
// The object name of a file name, or nullopt if the file is not an object file.
std::optional<std::string> ObjectNameOf(std::string_view file_name);
// One name in a directory, and whether it is a directory (a link is followed).
struct DirEntry {
  std::string name;
  bool is_dir = false;
};
// The names in `path` but "." and "..", in no particular order; empty when it cannot be read
// (gone meanwhile, or not a directory). readdir's file types spare a stat for every name.
std::vector<DirEntry> ListDirectory(const std::string& path);
// The bytes a store writes for an object: kubectl-like, 2-space indent, newline-terminated.
// A string that is not valid UTF-8 is written with U+FFFD in place of its bad bytes.
std::string Serialize(const Object& object);
// Serialize, when the text says exactly the object (every string valid UTF-8); else nullopt.
std::optional<std::string> SerializeExactly(const Object& object);
absl::Status FsyncDir(const std::string& dir);
// A temp file name as WriteFileAtomically makes them: ".<file name, shortened>.<pid>.<n>.tmp".
// Older versions kept the whole file name, which the pattern covers too.
bool IsStoreTempName(std::string_view name);
// The first half of WriteFileAtomically: `text` in a new temp file of `temp_dir` named after
// `name` (with this process's pid and a sequence number, so no writer of this process meets
// it), fsynced when `sync`; returns its path. `written` receives its stat. Without the flock
// (the background rewrite of adopted files), another process's start may remove it as stale:
// the caller's rename then fails and the caller gives up on that file.
absl::StatusOr<std::string> WriteTempFile(const std::string& temp_dir, std::string_view name,
                                          std::string_view text, bool sync, struct stat* written);
// Replaces dir/name atomically: a temp file in `temp_dir` (same file system, not watched),
// fsync, rename, fsync of the directory. `written` receives the file's stat (the inode survives
// the rename). The caller holds the writers' flock, so a temp file of the same name can only be
// one left by a writer that died (a pid is reused, e.g. pid 1 in a container): it is replaced.
absl::Status WriteFileAtomically(const std::string& temp_dir, const std::string& dir,
                                 std::string_view name, std::string_view text,
                                 struct stat* written);
// Whether `path` is a symbolic link that leads to a directory (one the layout would otherwise
// descend into).
bool IsSymlinkToDir(const std::string& path);
absl::Status SymlinkError(const std::string& path);
// mkdir that tolerates an existing directory; true if it created one. A symbolic link is
// refused, even to a directory (see DirStore::SymlinkedDirOf).
absl::StatusOr<bool> MakeDir(const std::string& path);

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

}  // namespace clusterd::store::dir_files
