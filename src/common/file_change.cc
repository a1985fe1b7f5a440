#include "common/file_change.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace clusterd {

bool FileChange::Changed() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  if (seen_ && now < next_look_) return false;
  next_look_ = now + period_;
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) return false;  // gone: keep what we have
  const int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (seen_ && st.st_ino == inode_ && st.st_size == size_ && mtime_ns == mtime_ns_) return false;
  seen_ = true;
  inode_ = st.st_ino;
  size_ = st.st_size;
  mtime_ns_ = mtime_ns;
  return true;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace clusterd
