#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/metrics.h"
#include "grpcpp/grpcpp.h"

namespace clusterd::server {

// Server-streaming fan-out with bounded per-client queues, on the gRPC callback API (one reactor
// per stream, no thread per client).
//
//   StreamHub<Item>     keyed mailboxes (client id, job id, ...): Open / Find / Remove,
//                       Broadcast to all, and Subscribe (attach a stream reactor).
//   Mailbox<Item>       a bounded FIFO owned by one subscriber identity. It outlives streams:
//                       items pushed while no stream is attached wait there (the original's
//                       per-client channel does the same), and a new stream takes over.
//   MailboxStream       the reactor: writes an optional preamble, then drains the mailbox, one
//                       write in flight at a time.
//
// Producers never block: Push appends under a short lock and, if the stream is idle, starts its
// next write; the write itself completes on a gRPC thread. A slow or stalled client therefore
// costs only its own queue. When a mailbox is full the NEW item is dropped (as the original
// drops on a full channel), counted in clusterd_stream_messages_dropped_total{stream,
// reason="queue_full"}; items discarded because the mailbox was closed (publisher replaced,
// client gone, server stopping) count under reason="closed". Writes completed count in
// clusterd_stream_messages_sent_total{stream}; open streams in clusterd_stream_open{stream}.
//
// A stream ends when the client cancels, a write fails, a newer stream attaches to the same
// mailbox (status CANCELLED, "replaced by a newer subscription"), or the mailbox is closed (with
// the status given to Close, after the write in flight).

struct StreamMetrics {
  explicit StreamMetrics(std::string_view stream)
      : sent(MetricsRegistry::Default().GetCounter("clusterd_stream_messages_sent_total",
                                                   "Messages written to server streams.",
                                                   {{"stream", std::string(stream)}})),
        dropped_full(MetricsRegistry::Default().GetCounter(
            "clusterd_stream_messages_dropped_total",
            "Stream messages dropped: queue_full (a slow or absent client's bounded queue was "
            "full; the new message is dropped) or closed (queued for a mailbox that was closed).",
            {{"stream", std::string(stream)}, {"reason", "queue_full"}})),
        dropped_closed(MetricsRegistry::Default().GetCounter(
            "clusterd_stream_messages_dropped_total",
            "Stream messages dropped: queue_full (a slow or absent client's bounded queue was "
            "full; the new message is dropped) or closed (queued for a mailbox that was closed).",
            {{"stream", std::string(stream)}, {"reason", "closed"}})),
        open(MetricsRegistry::Default().GetGauge("clusterd_stream_open", "Open server streams.",
                                                 {{"stream", std::string(stream)}})) {}
  Counter& sent;
  Counter& dropped_full;
  Counter& dropped_closed;
  Gauge& open;
};

template <typename Item>
class Mailbox;

namespace stream_internal {

// What a mailbox needs of its attached stream. Called with the mailbox lock held; each returns
// the gRPC call to make once the lock is released (or an empty function).
class AttachedStream {
 public:
  virtual ~AttachedStream() = default;
  virtual std::function<void()> PumpLocked() = 0;
  virtual std::function<void()> EndLocked(grpc::Status status) = 0;
};

}  // namespace stream_internal

template <typename Item>
class Mailbox {
 public:
  Mailbox(size_t capacity, StreamMetrics& metrics) : capacity_(capacity), metrics_(metrics) {}

  // Queues `item` for the attached (or the next) stream. False when the mailbox is full (the
  // item is dropped and counted) or closed.
  bool Push(Item item) {
    std::function<void()> after;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) {
        metrics_.dropped_closed.Increment();
        return false;
      }
      if (queue_.size() >= capacity_) {
        metrics_.dropped_full.Increment();
        return false;
      }
      queue_.push_back(std::move(item));
      if (stream_ != nullptr) after = stream_->PumpLocked();
    }
    if (after) after();
    return true;
  }

  // Ends the attached stream with `status` once its write in flight is done, discards queued
  // items and refuses later pushes.
  void Close(grpc::Status status) {
    std::function<void()> after;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return;
      closed_ = true;
      metrics_.dropped_closed.Increment(queue_.size());
      queue_.clear();
      if (stream_ != nullptr) after = stream_->EndLocked(std::move(status));
    }
    if (after) after();
  }

  bool HasStream() const {
    absl::MutexLock lock(&mu_);
    return stream_ != nullptr;
  }
  bool closed() const {
    absl::MutexLock lock(&mu_);
    return closed_;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return queue_.size();
  }

 private:
  template <typename I, typename W>
  friend class MailboxStream;

  const size_t capacity_;
  StreamMetrics& metrics_;
  mutable absl::Mutex mu_;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  stream_internal::AttachedStream* stream_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// The reactor of one server stream, attached to a mailbox. `Wire` is the message on the wire;
// `convert` turns a queued item into it (at write time, under the mailbox lock: keep it cheap).
template <typename Item, typename Wire>
class MailboxStream final : public grpc::ServerWriteReactor<Wire>,
                            private stream_internal::AttachedStream {
 public:
  using Convert = std::function<Wire(Item&&)>;

  MailboxStream(std::shared_ptr<Mailbox<Item>> mailbox, std::deque<Wire> preamble, Convert convert,
                std::function<void()> on_done, StreamMetrics& metrics)
      : mailbox_(std::move(mailbox)),
        preamble_(std::move(preamble)),
        convert_(std::move(convert)),
        on_done_(std::move(on_done)),
        metrics_(metrics) {
    metrics_.open.Add(1);
    std::function<void()> replaced_after, after;
    {
      absl::MutexLock lock(&mailbox_->mu_);
      if (mailbox_->closed_) {
        end_requested_ = true;
        end_status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "subscription closed");
      } else {
        if (mailbox_->stream_ != nullptr) {
          replaced_after = mailbox_->stream_->EndLocked(
              grpc::Status(grpc::StatusCode::CANCELLED, "replaced by a newer subscription"));
        }
        mailbox_->stream_ = this;
      }
      after = PumpLocked();
    }
    if (replaced_after) replaced_after();
    if (after) after();
  }

  void OnWriteDone(bool ok) override {
    std::function<void()> after;
    {
      absl::MutexLock lock(&mailbox_->mu_);
      writing_ = false;
      if (ok) {
        metrics_.sent.Increment();
      } else if (!end_requested_) {
        end_requested_ = true;
        end_status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream write failed");
      }
      after = PumpLocked();
    }
    if (after) after();
  }

  void OnCancel() override {
    std::function<void()> after;
    {
      absl::MutexLock lock(&mailbox_->mu_);
      if (!end_requested_) {
        end_requested_ = true;
        end_status_ = grpc::Status::CANCELLED;
      }
      after = PumpLocked();
    }
    if (after) after();
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&mailbox_->mu_);
      if (mailbox_->stream_ == this) mailbox_->stream_ = nullptr;
    }
    metrics_.open.Add(-1);
    if (on_done_) on_done_();
    delete this;
  }

 private:
  std::function<void()> PumpLocked() override {
    // The interface's contract (called with the mailbox lock held), checked and told to clang.
    mailbox_->mu_.AssertHeld();
    if (finished_ || writing_) return {};
    if (end_requested_) {
      finished_ = true;
      return [this, status = end_status_] { this->Finish(status); };
    }
    if (!preamble_.empty()) {
      current_ = std::move(preamble_.front());
      preamble_.pop_front();
    } else if (mailbox_->stream_ == this && !mailbox_->queue_.empty()) {
      current_ = convert_(std::move(mailbox_->queue_.front()));
      mailbox_->queue_.pop_front();
    } else {
      return {};
    }
    writing_ = true;
    return [this] { this->StartWrite(&current_); };
  }

  std::function<void()> EndLocked(grpc::Status status) override {
    if (!end_requested_) {
      end_requested_ = true;
      end_status_ = std::move(status);
    }
    return PumpLocked();
  }

  std::shared_ptr<Mailbox<Item>> mailbox_;
  // Guarded by mailbox_->mu_.
  std::deque<Wire> preamble_;
  Convert convert_;
  std::function<void()> on_done_;
  StreamMetrics& metrics_;
  Wire current_;
  bool writing_ = false;
  bool end_requested_ = false;
  bool finished_ = false;
  grpc::Status end_status_;
};

// Keyed mailboxes of one stream kind.
template <typename Item>
class StreamHub {
 public:
  StreamHub(std::string_view stream_name, size_t capacity)
      : capacity_(capacity), metrics_(stream_name) {}

  StreamHub(const StreamHub&) = delete;
  StreamHub& operator=(const StreamHub&) = delete;

  // A fresh mailbox for `key`, replacing (and closing, status OK) any previous one.
  std::shared_ptr<Mailbox<Item>> Open(const std::string& key) {
    auto fresh = std::make_shared<Mailbox<Item>>(capacity_, metrics_);
    std::shared_ptr<Mailbox<Item>> old;
    {
      absl::MutexLock lock(&mu_);
      auto& slot = mailboxes_[key];
      old = std::move(slot);
      slot = fresh;
    }
    if (old != nullptr) old->Close(grpc::Status::OK);
    return fresh;
  }

  std::shared_ptr<Mailbox<Item>> Find(const std::string& key) const {
    absl::MutexLock lock(&mu_);
    auto it = mailboxes_.find(key);
    return it == mailboxes_.end() ? nullptr : it->second;
  }

  // Removes and closes `key`'s mailbox if it is still `expected` (null: whatever it is).
  bool Remove(const std::string& key, const Mailbox<Item>* expected,
              grpc::Status status = grpc::Status::OK) {
    std::shared_ptr<Mailbox<Item>> removed;
    {
      absl::MutexLock lock(&mu_);
      auto it = mailboxes_.find(key);
      if (it == mailboxes_.end() || (expected != nullptr && it->second.get() != expected)) {
        return false;
      }
      removed = std::move(it->second);
      mailboxes_.erase(it);
    }
    removed->Close(std::move(status));
    return true;
  }

  // Pushes a copy of `item` to every mailbox; returns how many queued it.
  size_t Broadcast(const Item& item) {
    std::vector<std::shared_ptr<Mailbox<Item>>> targets;
    {
      absl::MutexLock lock(&mu_);
      targets.reserve(mailboxes_.size());
      for (const auto& [key, mb] : mailboxes_) targets.push_back(mb);
    }
    size_t queued = 0;
    for (const auto& mb : targets) queued += mb->Push(item) ? 1 : 0;
    return queued;
  }

  // Attaches a new stream to `mailbox` (ending the one attached before). The reactor writes
  // `preamble` first, then the mailbox's items converted by `convert`; `on_done` runs when the
  // stream is over.
  template <typename Wire>
  grpc::ServerWriteReactor<Wire>* Subscribe(std::shared_ptr<Mailbox<Item>> mailbox,
                                            std::deque<Wire> preamble,
                                            std::function<Wire(Item&&)> convert,
                                            std::function<void()> on_done) {
    return new MailboxStream<Item, Wire>(std::move(mailbox), std::move(preamble),
                                         std::move(convert), std::move(on_done), metrics_);
  }
  grpc::ServerWriteReactor<Item>* Subscribe(std::shared_ptr<Mailbox<Item>> mailbox,
                                            std::function<void()> on_done) {
    return Subscribe<Item>(
        std::move(mailbox), {}, [](Item&& i) { return std::move(i); }, std::move(on_done));
  }

  // Closes every mailbox (server shutdown): their streams end with `status`.
  void CloseAll(grpc::Status status) {
    std::map<std::string, std::shared_ptr<Mailbox<Item>>> all;
    {
      absl::MutexLock lock(&mu_);
      all.swap(mailboxes_);
    }
    for (auto& [key, mb] : all) mb->Close(status);
  }

  size_t size() const {
    absl::MutexLock lock(&mu_);
    return mailboxes_.size();
  }
  StreamMetrics& metrics() { return metrics_; }

 private:
  const size_t capacity_;
  StreamMetrics metrics_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Mailbox<Item>>> mailboxes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::server
