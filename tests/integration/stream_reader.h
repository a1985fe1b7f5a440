#pragma once

// Reads a gRPC server stream on a thread of its own, so a test can wait for a message with a
// deadline. Shared by the integration tests.
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace clusterd::testing {

inline constexpr absl::Duration kStreamWait = absl::Seconds(20);

template <typename Message>
class StreamReader {
 public:
  template <typename Open>
  explicit StreamReader(Open open) {
    reader_ = open(&ctx_);
    thread_ = std::thread([this] {
      Message m;
      while (reader_->Read(&m)) {
        absl::MutexLock lock(&mu_);
        messages_.push_back(m);
      }
      grpc::Status st = reader_->Finish();
      absl::MutexLock lock(&mu_);
      status_ = st;
      done_ = true;
    });
  }
  ~StreamReader() {
    ctx_.TryCancel();
    thread_.join();
  }

  // The first message after `from` that satisfies `pred`, or nullopt after `wait`.
  template <typename Pred>
  std::optional<Message> WaitFor(Pred pred, size_t* from = nullptr, absl::Duration wait = kStreamWait) {
    absl::MutexLock lock(&mu_);
    const size_t start = from != nullptr ? *from : 0;
    // The condition must be pure (absl::Mutex may evaluate it more than once).
    auto match = [&]() -> std::optional<size_t> {
      for (size_t i = start; i < messages_.size(); ++i) {
        if (pred(messages_[i])) return i;
      }
      return std::nullopt;
    };
    auto ready = [&] { return match().has_value() || done_; };
    mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
    std::optional<size_t> i = match();
    if (!i.has_value()) return std::nullopt;
    if (from != nullptr) *from = *i + 1;
    return messages_[*i];
  }
  grpc::Status WaitDone(absl::Duration wait = kStreamWait) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&done_), wait);
    return status_;
  }

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<Message>> reader_;
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<Message> messages_;
  bool done_ = false;
  grpc::Status status_;
};


}  // namespace clusterd::testing
