// The dir store's watcher: one inotify instance on the store's directory tree and one thread
// (`dir-inotify`) that turns its events into re-reads of the changed files, so that changes
// made by other processes reach this process's cache and watches.
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "common/log.h"
#include "store/admission.h"
#include "store/dir/dir_files.h"
#include "store/dir/dir_store.h"
#include "store/strings.h"

namespace clusterd::store {

using dir_files::DirEntry;
using dir_files::FileLock;
using dir_files::IsIgnoredName;
using dir_files::IsSymlinkToDir;
using dir_files::JoinPath;
using dir_files::ListDirectory;
using dir_files::ObjectNameOf;

namespace {

constexpr std::string_view kDirStoreInotifyLog = "store";
constexpr uint32_t kDirMask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE |
                              IN_DELETE_SELF | IN_ONLYDIR;

}  // namespace

bool DirStore::WatchDir(WatchedDir dir) {
  int wd = inotify_add_watch(inotify_fd_, dir.path.c_str(), kDirMask);
  if (wd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      LogWarn(kDirStoreInotifyLog, "cannot watch directory",
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

namespace {

// Adds the keys of one directory's objects: sorted first, each goes in next to the last, so
// that a directory of 50,000 files costs no search of the set per file.
void InsertDirectoryKeys(const std::string& resource, const std::string& ns,
                         std::vector<std::string> names, std::set<ObjectKey>* dirty) {
  if (names.empty()) return;
  std::sort(names.begin(), names.end());
  auto hint = dirty->lower_bound(ObjectKey{resource, ns, names.front()});
  for (std::string& name : names) {
    hint = std::next(dirty->emplace_hint(hint, ObjectKey{resource, ns, std::move(name)}));
  }
}

}  // namespace

void DirStore::ScanResourceDir(const std::string& resource, KeySet* dirty) {
  std::string path = JoinPath(root_, resource);
  if (IsSymlinkToDir(path)) return ReportSymlink(path);
  // Watch first, then list: a file landing in between is seen twice, never missed.
  if (!WatchDir(WatchedDir{path, resource, std::nullopt})) return;
  const bool cluster_scoped = IsClusterScoped(resource);
  std::vector<std::string> names;
  for (DirEntry& entry : ListDirectory(path)) {
    if (IsIgnoredName(entry.name)) continue;
    if (cluster_scoped) {
      if (auto object_name = ObjectNameOf(entry.name)) names.push_back(*std::move(object_name));
    } else if (entry.is_dir) {  // follows links: ScanNamespaceDir refuses them
      ScanNamespaceDir(resource, entry.name, dirty);
    }
  }
  InsertDirectoryKeys(resource, "", std::move(names), dirty);
}

void DirStore::ScanNamespaceDir(const std::string& resource, const std::string& ns, KeySet* dirty) {
  std::string path = JoinPath(JoinPath(root_, resource), ns);
  if (IsSymlinkToDir(path)) return ReportSymlink(path);
  if (!WatchDir(WatchedDir{path, resource, ns})) return;
  std::vector<std::string> names;
  for (const DirEntry& entry : ListDirectory(path)) {
    if (auto object_name = ObjectNameOf(entry.name)) names.push_back(*std::move(object_name));
  }
  InsertDirectoryKeys(resource, ns, std::move(names), dirty);
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
        LogError(kDirStoreInotifyLog, "reading inotify events failed",
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
    LogWarn(kDirStoreInotifyLog, "inotify queue overflowed, rescanning", {{"path", root_}});
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
    LogError(kDirStoreInotifyLog, "cannot take the store lock; changes stay pending",
             {{"error", s}});
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
      LogError(kDirStoreInotifyLog, "poll failed, no longer watching the directory",
               {{"path", root_}, {"error", std::strerror(errno)}});
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) ProcessEvents();
  }
}

}  // namespace clusterd::store
