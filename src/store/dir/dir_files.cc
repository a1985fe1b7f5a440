#include "store/dir/dir_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/utf8.h"
#include "store/strings.h"

namespace clusterd::store::dir_files {
namespace {

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

}  // namespace

absl::Status ErrnoError(int err, std::string_view path, std::string_view what) {
  return absl::ErrnoToStatus(err, Cat("dir store ", path, ": ", what));
}

std::string JoinPath(std::string_view a, std::string_view b) { return Cat(a, "/", b); }

std::vector<DirEntry> ListDirectory(const std::string& path) {
  std::vector<DirEntry> entries;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return entries;
  while (const dirent* e = readdir(dir)) {
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {  // what it names, or the file system
      struct stat st {};                                   // did not say
      is_dir = stat(JoinPath(path, name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    entries.push_back(DirEntry{std::string(name), is_dir});
  }
  closedir(dir);
  return entries;
}

bool IsIgnoredName(std::string_view name) { return name.empty() || name.front() == '.'; }

std::optional<std::string> ObjectNameOf(std::string_view file_name) {
  if (IsIgnoredName(file_name) || !file_name.ends_with(kJsonSuffix) ||
      file_name.size() == kJsonSuffix.size()) {
    return std::nullopt;
  }
  return std::string(file_name.substr(0, file_name.size() - kJsonSuffix.size()));
}

std::string Serialize(const Object& object) {
  return object.dump(2, ' ', false, Object::error_handler_t::replace) + "\n";
}

// SerializeExactly writes the bytes of nlohmann's dump(2, ' ', false, strict) itself. The dump
// escaped strings through a UTF-8 state machine and a call per byte: three quarters of writing
// an 800 KiB goodput or cluster-info shard (JSON text full of quotes), all of it under the
// store's write lock, where a report's small writes waited for it (3.6 ms at the median on tmpfs
// beside a writer of such shards, 1.4 ms now: BM_DirStoreSmallWriteBesideALargeWriter).
namespace {

constexpr char kLowerHex[] = "0123456789abcdef";

// What each byte asks of the escaper: nothing, an escape, or a UTF-8 check.
enum ByteClass : unsigned char { kPlain, kEscape, kNonAscii };
constexpr std::array<ByteClass, 256> kByteClass = [] {
  std::array<ByteClass, 256> classes{};
  for (int b = 0; b < 256; ++b) {
    classes[b] = b >= 0x80 ? kNonAscii : (b < 0x20 || b == '"' || b == '\\') ? kEscape : kPlain;
  }
  return classes;
}();

char* WriteEscape(unsigned char b, char* p) {
  *p++ = '\\';
  switch (b) {
    case '"':
      *p++ = '"';
      break;
    case '\\':
      *p++ = '\\';
      break;
    case '\b':
      *p++ = 'b';
      break;
    case '\t':
      *p++ = 't';
      break;
    case '\n':
      *p++ = 'n';
      break;
    case '\f':
      *p++ = 'f';
      break;
    case '\r':
      *p++ = 'r';
      break;
    default:
      *p++ = 'u';
      *p++ = '0';
      *p++ = '0';
      *p++ = kLowerHex[b >> 4];
      *p++ = kLowerHex[b & 0xF];
  }
  return p;
}

// nlohmann's escaping without ensure_ascii: '"', '\\' and the control characters below 0x20
// (\b \t \n \f \r by name, the rest as \u00xx in lower-case hex); everything else as is.
// Written through a pointer into a buffer of the worst case's size (every byte a \u00xx), then
// appended once: a shard's JSON text has a quote every few bytes, and appending piece by piece
// cost more than the escaping itself. Short strings (keys, most values) use the stack; kept out
// of line so that the buffer is not part of every frame of AppendValue's recursion (10,000 deep
// for the deepest object ParseJson accepts).
[[gnu::noinline]] bool AppendEscaped(std::string_view s, std::string* out) {
  constexpr size_t kShort = 256;
  char on_stack[6 * kShort + 2];
  std::unique_ptr<char[]> on_heap;
  char* const start =
      s.size() <= kShort ? on_stack : (on_heap.reset(new char[6 * s.size() + 2]), on_heap.get());
  char* p = start;
  *p++ = '"';
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    switch (kByteClass[b]) {
      case kPlain:
        *p++ = static_cast<char>(b);
        ++i;
        break;
      case kEscape:
        p = WriteEscape(b, p);
        ++i;
        break;
      case kNonAscii: {
        const size_t length = WellFormedUtf8Length(s, i);
        if (length == 0) return false;
        std::memcpy(p, s.data() + i, length);
        p += length;
        i += length;
        break;
      }
    }
  }
  *p++ = '"';
  out->append(start, static_cast<size_t>(p - start));
  return true;
}

// One value at `depth` (its closing bracket indented by 2 * depth), as dump(2) lays it out.
bool AppendValue(const Object& value, size_t depth, std::string* out) {
  switch (value.type()) {
    case Object::value_t::object:
    case Object::value_t::array: {
      const bool is_object = value.is_object();
      if (value.empty()) {
        out->append(is_object ? "{}" : "[]");
        return true;
      }
      out->append(is_object ? "{\n" : "[\n");
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out->append(",\n");
        first = false;
        out->append(2 * (depth + 1), ' ');
        if (is_object) {
          if (!AppendEscaped(it.key(), out)) return false;
          out->append(": ");
        }
        if (!AppendValue(*it, depth + 1, out)) return false;
      }
      out->push_back('\n');
      out->append(2 * depth, ' ');
      out->push_back(is_object ? '}' : ']');
      return true;
    }
    case Object::value_t::string:
      return AppendEscaped(value.get_ref<const std::string&>(), out);
    default:
      // Numbers, booleans, null (and binary, which no store object holds): nlohmann's own text,
      // so that floats keep its shortest round-trip form.
      out->append(value.dump());
      return true;
  }
}

}  // namespace

std::optional<std::string> SerializeExactly(const Object& object) {
  std::string out;
  if (!AppendValue(object, 0, &out)) return std::nullopt;
  out.push_back('\n');
  return out;
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

absl::StatusOr<std::string> WriteTempFile(const std::string& temp_dir, std::string_view name,
                                          std::string_view text, bool sync, struct stat* written) {
  static std::atomic<uint64_t> sequence{0};
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
  if (status.ok() && sync && fsync(fd) != 0) status = ErrnoError(errno, temp_path, "fsync failed");
  if (status.ok() && fstat(fd, written) != 0) status = ErrnoError(errno, temp_path, "fstat failed");
  if (close(fd) != 0 && status.ok()) status = ErrnoError(errno, temp_path, "close failed");
  if (!status.ok()) {
    unlink(temp_path.c_str());
    return status;
  }
  return temp_path;
}

absl::Status WriteFileAtomically(const std::string& temp_dir, const std::string& dir,
                                 std::string_view name, std::string_view text,
                                 struct stat* written) {
  absl::StatusOr<std::string> temp_path =
      WriteTempFile(temp_dir, name, text, /*sync=*/true, written);
  if (!temp_path.ok()) return temp_path.status();
  std::string final_path = JoinPath(dir, name);
  if (rename(temp_path->c_str(), final_path.c_str()) != 0) {
    absl::Status status = ErrnoError(errno, final_path, "rename failed");
    unlink(temp_path->c_str());
    return status;
  }
  return FsyncDir(dir);
}

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

absl::StatusOr<bool> MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) == 0) return true;
  if (errno != EEXIST) return ErrnoError(errno, path, "cannot create directory");
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return ErrnoError(errno, path, "cannot stat");
  if (S_ISLNK(st.st_mode)) return SymlinkError(path);
  if (!S_ISDIR(st.st_mode)) return ErrnoError(ENOTDIR, path, "cannot create directory");
  return false;
}

}  // namespace clusterd::store::dir_files
