#include "common/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace clusterd {
namespace {

// Seconds since the epoch at which the machine booted (/proc/stat "btime").
double BootTime() {
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    double t = 0;
    if (line.rfind("btime ", 0) == 0 && absl::SimpleAtod(line.substr(6), &t)) return t;
  }
  return 0;
}

int OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;  // the directory stream's own descriptor
}

void Series(std::string* out, const char* name, const char* type, const char* help, double v) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n", name, " ");
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", v);
  absl::StrAppend(out, text, "\n");
}

}  // namespace

std::string RenderProcessMetrics() {
  std::ifstream in("/proc/self/stat");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string stat = buffer.str();
  // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
  // fields[0] is field 3 (state): field N of proc(5) is fields[N - 3].
  auto field = [&fields](size_t n) -> double {
    double v = 0;
    return n - 3 < fields.size() && absl::SimpleAtod(fields[n - 3], &v) ? v : 0;
  };
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::string out;
  Series(&out, "process_cpu_seconds_total", "counter",
         "Total user and system CPU time spent in seconds.", (field(14) + field(15)) / ticks);
  Series(&out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
         field(24) * page);
  Series(&out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", field(23));
  Series(&out, "process_open_fds", "gauge", "Number of open file descriptors.", OpenFds());
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    Series(&out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
           static_cast<double>(limit.rlim_cur));
  }
  Series(&out, "process_start_time_seconds", "gauge",
         "Start time of the process since unix epoch in seconds.", BootTime() + field(22) / ticks);
  Series(&out, "process_threads", "gauge", "Number of OS threads in the process.", field(20));
  return out;
}

}  // namespace clusterd
