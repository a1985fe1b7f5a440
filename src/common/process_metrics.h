#pragma once

// The standard process_* series of a Prometheus exporter, read from /proc/self at scrape time:
//   process_cpu_seconds_total       counter  user + system CPU time
//   process_resident_memory_bytes   gauge    resident set size
//   process_virtual_memory_bytes    gauge    virtual memory size
//   process_open_fds                gauge    open file descriptors
//   process_max_fds                 gauge    the soft RLIMIT_NOFILE
//   process_start_time_seconds      gauge    start time, seconds since the Unix epoch
//   process_threads                 gauge    threads of the process
#include <string>

namespace clusterd {

// The series in the Prometheus text format (HELP and TYPE lines included); empty when /proc
// cannot be read (not Linux).
std::string RenderProcessMetrics();

}  // namespace clusterd
