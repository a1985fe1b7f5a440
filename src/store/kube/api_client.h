#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/rate_limiter.h"
#include "store/kube/kube_config.h"

typedef void CURL;
typedef void CURLM;

namespace clusterd::store::kube {

// An HTTPS client for the Kubernetes API over libcurl: authentication (bearer token or client
// certificate), the cluster CA, request timeouts, a client-side QPS/burst limit, and watch
// streams. Thread-safe; idle connections are kept for reuse.
class ApiClient {
 public:
  struct Options {
    KubeConfig config;
    double qps = 50;
    int64_t burst = 100;
    absl::Duration request_timeout = absl::Seconds(15);
    absl::Duration connect_timeout = absl::Seconds(5);
    const Clock* clock = &Clock::Real();
    std::string user_agent = "clusterd";
    // While the server is unreachable, PauseUntilAnswered probes it (GET /version) at most
    // this often (times 1 to 1.5) across its callers.
    absl::Duration probe_interval = absl::Seconds(2);
  };

  struct Request {
    std::string method = "GET";
    std::string path;  // with the query string
    std::string body;
    std::string content_type = "application/json";
    // Zero: Options::request_timeout.
    absl::Duration timeout = absl::ZeroDuration();
  };

  struct Response {
    long code = 0;
    std::string body;
    // The Retry-After header in seconds (API Priority and Fairness sends it with a 429);
    // zero when absent.
    absl::Duration retry_after = absl::ZeroDuration();
  };

  // Cancels a stream from another thread.
  class StreamControl {
   public:
    void Stop();
    bool stopped() const { return stopped_.load(); }

   private:
    friend class ApiClient;
    std::atomic<bool> stopped_{false};
    absl::Mutex mu_;
    CURLM* multi_ ABSL_GUARDED_BY(mu_) = nullptr;
  };

  explicit ApiClient(Options options);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // One request. A response with any HTTP status is OK here (map it with StatusFromResponse);
  // an error status means no response: Unavailable (cannot connect, connection lost, TLS,
  // timeout), Cancelled (Shutdown), Unauthenticated (cannot read the token),
  // DeadlineExceeded (the client-side rate limit leaves no slot before the timeout).
  // A 429 (the server's API Priority and Fairness refused it before doing anything) is sent
  // again after its Retry-After, with jitter, while the request's timeout allows; the last 429
  // is returned when it does not.
  absl::StatusOr<Response> Do(const Request& request);

  // A streaming GET (watch). `on_status` is called once with the HTTP status; when it is 200
  // every complete line of the body goes to `on_line`, which returns false to end the stream.
  // Otherwise the body is collected into `error_body`. Returns OK when the server ended the
  // stream or a callback or `control` stopped it; the same errors as Do otherwise. `idle` bounds
  // the time without any byte from the server.
  absl::Status Stream(const Request& request, const std::function<void(long code)>& on_status,
                      const std::function<bool(std::string_view line)>& on_line,
                      std::string* error_body, StreamControl* control, absl::Duration idle);

  // Wakes every request waiting for the rate limiter; later requests fail with Cancelled.
  void Shutdown();

  // False after a request failed without a response, until one gets a response again.
  bool Reachable() const { return reachable_.load(); }
  // The last transport failure, for readiness messages.
  std::string LastError() const;
  // How often the server came back (unreachable -> answered); see PauseUntilAnswered.
  uint64_t returns() const { return returns_.load(); }
  // Sends GET /version when the server is unreachable and no caller probed it for
  // probe_interval (times 1 to 1.5): any answer makes it reachable again.
  void MaybeProbe();
  // While the server throttles this client (its last answer was a 429, less than
  // kThrottleMemory ago): what it said. Empty otherwise.
  std::string Throttled() const;
  static constexpr absl::Duration kThrottleMemory = absl::Seconds(30);
  const KubeConfig& config() const { return options_.config; }

 private:
  CURL* Acquire();
  void Release(CURL* handle);
  absl::Status Configure(CURL* handle, const Request& request, void* headers_out);
  absl::Status Throttle(absl::Time deadline);
  absl::StatusOr<std::string> BearerToken();
  absl::Status TransportError(int curl_code, const Request& request, const char* detail);
  // Any answer: the server is reachable (logged once, when it was not).
  void NoteResponse();
  absl::StatusOr<Response> DoOnce(const Request& request, absl::Time deadline);
  // A 429 answered `request`: remembers it (the first of a run is logged); the wait before
  // sending it again.
  absl::Duration NoteThrottled(const Request& request, const Response& response, int attempt);
  // An answer other than 429: a run of 429s has ended (logged once).
  void NoteNotThrottled();
  // Waits `d` unless Shutdown() comes first (false then).
  bool PauseFor(absl::Duration d);

  const Options options_;
  TokenBucket bucket_;
  std::atomic<bool> reachable_{true};
  // Counts the server's returns (unreachable -> answered), for PauseUntilAnswered.
  std::atomic<uint64_t> returns_{0};
  std::atomic<int64_t> next_probe_ms_{0};

  mutable absl::Mutex mu_;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<CURL*> idle_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  absl::Time unreachable_since_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Time token_read_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The current run of 429s: since when, how many, the last answer's text and when.
  absl::Time throttled_since_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time last_throttled_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t throttled_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::string throttle_message_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> throttled_{false};  // a run of 429s is on (a cheap check per answer)
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_){std::random_device{}()};
  std::uniform_real_distribution<double> jitter_ ABSL_GUARDED_BY(mu_){0.0, 1.0};
};

// A back-off of `d` on `mu` (held by the caller) that ends early when `*stopped` (guarded by
// `mu`) or when the server answers again after an outage (any request's answer, or the probe
// this sends every probe_interval while it waits). The reflectors and the write queue wait
// here, so that they resume within about a second of the server's return, not at the end of a
// back-off that grew to its cap (30 s) meanwhile. False when stopped.
bool PauseUntilAnswered(ApiClient& client, absl::Mutex& mu, const bool* stopped, absl::Duration d)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

// The store's status for an API response that is not a success: the code and reason of the
// Kubernetes Status in the body, mapped as object_store.h documents (404 NotFound, 409
// AlreadyExists or Aborted, 410 OutOfRange, 400/422 InvalidArgument, 401 Unauthenticated, 403
// PermissionDenied, 429/5xx Unavailable). `what` names the request.
absl::Status StatusFromResponse(const ApiClient::Response& response, std::string_view what);
// The `reason` of a Kubernetes Status body ("Conflict", "AlreadyExists", ...), or "".
std::string ReasonOf(std::string_view body);
// The `message` of a Kubernetes Status body, or the start of a body that is not one.
std::string MessageOf(std::string_view body);

// True for a failure of ApiClient::Do that certainly did not reach the server (no connection,
// TLS handshake failed): the request can be sent again without doing anything twice.
bool NotSent(const absl::Status& status);

}  // namespace clusterd::store::kube
