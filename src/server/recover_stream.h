#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "server/stream_hub.h"

namespace clusterd::server {

template <typename Wire>
class ChannelStream;

// One server stream of the Recover service as its producers see it: a bounded FIFO that a
// reactor (ChannelStream) drains, one write in flight at a time. Unlike StreamHub's Mailbox,
// closing is graceful: what was queued before Close is still written, then the stream ends with
// the close status (the recovery controller queues killMaster and ends the stream in the same
// step, and the client must still see the signal). Producers never block: a full queue drops
// the new item (clusterd_stream_messages_dropped_total{reason="queue_full"}).
//
// A one-shot channel ends (status OK) after its first message (§12/§13 operator streams).
template <typename Wire>
class StreamChannel {
 public:
  StreamChannel(size_t capacity, bool one_shot, StreamMetrics& metrics)
      : capacity_(capacity), one_shot_(one_shot), metrics_(metrics) {}

  // Queues `item`. False when the channel is closing or its stream failed (dropped, "closed")
  // or when the queue is full (dropped, "queue_full").
  bool Push(Wire item) {
    std::function<void()> after;
    {
      absl::MutexLock lock(&mu_);
      if (closing_ || ended_) {
        metrics_.dropped_closed.Increment();
        return false;
      }
      if (queue_.size() >= capacity_) {
        metrics_.dropped_full.Increment();
        return false;
      }
      queue_.push_back(std::move(item));
      if (stream_ != nullptr) {
        // The attached stream's channel is this one: its lock is mu_, held here.
        stream_->channel_->mu_.AssertHeld();
        after = stream_->PumpLocked();
      }
    }
    if (after) after();
    return true;
  }

  // Ends the stream with `status` once everything queued has been written. Idempotent.
  void Close(grpc::Status status = grpc::Status::OK) {
    std::function<void()> after;
    {
      absl::MutexLock lock(&mu_);
      if (closing_) return;
      closing_ = true;
      close_status_ = std::move(status);
      if (stream_ != nullptr) {
        // The attached stream's channel is this one: its lock is mu_, held here.
        stream_->channel_->mu_.AssertHeld();
        after = stream_->PumpLocked();
      }
    }
    if (after) after();
  }

  bool closing() const {
    absl::MutexLock lock(&mu_);
    return closing_;
  }
  // The stream is over or failed: nothing pushed now will be written.
  bool ended() const {
    absl::MutexLock lock(&mu_);
    return ended_;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return queue_.size();
  }
  // Test access: takes the queued items (as if written).
  std::deque<Wire> TakeQueuedForTest() {
    absl::MutexLock lock(&mu_);
    return std::exchange(queue_, {});
  }

 private:
  friend class ChannelStream<Wire>;

  const size_t capacity_;
  const bool one_shot_;
  StreamMetrics& metrics_;
  mutable absl::Mutex mu_;
  std::deque<Wire> queue_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status close_status_ ABSL_GUARDED_BY(mu_);
  ChannelStream<Wire>* stream_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// The reactor of a StreamChannel. `on_done(client_ended)` runs once the RPC is over;
// client_ended is true when the client cancelled or a write failed (not a Close).
template <typename Wire>
class ChannelStream final : public grpc::ServerWriteReactor<Wire> {
 public:
  ChannelStream(std::shared_ptr<StreamChannel<Wire>> channel,
                std::function<void(bool client_ended)> on_done)
      : channel_(std::move(channel)), on_done_(std::move(on_done)) {
    channel_->metrics_.open.Add(1);
    std::function<void()> after;
    {
      absl::MutexLock lock(&channel_->mu_);
      channel_->stream_ = this;
      after = PumpLocked();
    }
    if (after) after();
  }

  void OnWriteDone(bool ok) override {
    std::function<void()> after;
    {
      absl::MutexLock lock(&channel_->mu_);
      writing_ = false;
      if (ok) {
        channel_->metrics_.sent.Increment();
        ++written_;
      } else {
        Fail(grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream write failed"));
      }
      after = PumpLocked();
    }
    if (after) after();
  }

  void OnCancel() override {
    std::function<void()> after;
    {
      absl::MutexLock lock(&channel_->mu_);
      Fail(grpc::Status::CANCELLED);
      after = PumpLocked();
    }
    if (after) after();
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&channel_->mu_);
      if (channel_->stream_ == this) channel_->stream_ = nullptr;
      channel_->ended_ = true;
    }
    channel_->metrics_.open.Add(-1);
    if (on_done_) on_done_(client_ended_);
    delete this;
  }

 private:
  friend class StreamChannel<Wire>;

  void Fail(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(channel_->mu_) {
    if (failed_ || finished_) return;
    failed_ = true;
    client_ended_ = true;
    fail_status_ = std::move(status);
    channel_->ended_ = true;
    channel_->metrics_.dropped_closed.Increment(channel_->queue_.size());
    channel_->queue_.clear();
  }

  std::function<void()> PumpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(channel_->mu_) {
    if (finished_ || writing_) return {};
    const bool shot_done = channel_->one_shot_ && written_ > 0;
    if (!failed_ && !shot_done && !channel_->queue_.empty()) {
      current_ = std::move(channel_->queue_.front());
      channel_->queue_.pop_front();
      writing_ = true;
      return [this] { this->StartWrite(&current_); };
    }
    if (failed_ || shot_done || channel_->closing_) {
      finished_ = true;
      channel_->ended_ = true;
      grpc::Status status = failed_     ? fail_status_
                            : shot_done ? grpc::Status::OK
                                        : channel_->close_status_;
      return [this, status] { this->Finish(status); };
    }
    return {};
  }

  std::shared_ptr<StreamChannel<Wire>> channel_;
  std::function<void(bool)> on_done_;
  // Guarded by channel_->mu_.
  Wire current_;
  bool writing_ = false;
  bool finished_ = false;
  bool failed_ = false;
  bool client_ended_ = false;
  size_t written_ = 0;
  grpc::Status fail_status_;
};

}  // namespace clusterd::server
