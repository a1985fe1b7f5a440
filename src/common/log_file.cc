#include "common/log_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "spdlog/sinks/base_sink.h"
#include "spdlog/sinks/rotating_file_sink.h"

namespace clusterd {
namespace {

using RotatingSink = spdlog::sinks::rotating_file_sink_st;

// Size rotation is spdlog's; every hour of log time (and at the first line) the backups that
// are older than the age are removed.
class AgedRotatingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  AgedRotatingSink(std::shared_ptr<RotatingSink> inner, std::string path, size_t max_backups,
                   int max_age_days)
      : inner_(std::move(inner)),
        path_(std::move(path)),
        max_backups_(max_backups),
        max_age_seconds_(static_cast<int64_t>(max_age_days) * 24 * 3600) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    inner_->log(msg);
    if (max_age_seconds_ > 0 && msg.time >= next_prune_) {
      next_prune_ = msg.time + std::chrono::hours(1);
      const int64_t now =
          std::chrono::duration_cast<std::chrono::seconds>(msg.time.time_since_epoch()).count();
      RemoveAgedLogBackups(path_, max_backups_, max_age_seconds_, now);
    }
  }
  void flush_() override { inner_->flush(); }
  void set_pattern_(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  const std::shared_ptr<RotatingSink> inner_;
  const std::string path_;
  const size_t max_backups_;
  const int64_t max_age_seconds_;
  spdlog::log_clock::time_point next_prune_{};
};

}  // namespace

size_t RemoveAgedLogBackups(const std::string& path, size_t max_backups, int64_t max_age_seconds,
                            int64_t now_unix_seconds) {
  size_t removed = 0;
  for (size_t i = 1; i <= max_backups; ++i) {
    const std::string backup = RotatingSink::calc_filename(path, i);
    struct stat st;
    if (::stat(backup.c_str(), &st) != 0) continue;
    if (now_unix_seconds - static_cast<int64_t>(st.st_mtim.tv_sec) > max_age_seconds &&
        ::unlink(backup.c_str()) == 0) {
      ++removed;
    }
  }
  return removed;
}

absl::StatusOr<std::shared_ptr<spdlog::sinks::sink>> OpenRotatingLogFile(const std::string& path,
                                                                         size_t max_file_bytes,
                                                                         size_t max_backups,
                                                                         int max_age_days) {
  std::shared_ptr<RotatingSink> inner;
  try {
    inner = std::make_shared<RotatingSink>(path, max_file_bytes, max_backups);
  } catch (const spdlog::spdlog_ex& e) {
    return absl::FailedPreconditionError(absl::StrCat("log file ", path, ": ", e.what()));
  }
  return std::make_shared<AgedRotatingSink>(std::move(inner), path, max_backups, max_age_days);
}

}  // namespace clusterd
