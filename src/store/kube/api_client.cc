#include "store/kube/api_client.h"

#include <curl/curl.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "common/json_util.h"
#include "common/log.h"
#include "common/metrics.h"
#include "store/strings.h"

namespace clusterd::store::kube {
namespace {

// Payload of a transport failure before any byte of the request left (see NotSent).
constexpr char kNotSentPayload[] = "clusterd.kube/not-sent";

// Projected service-account tokens rotate; kubelet refreshes the file well before expiry.
constexpr absl::Duration kTokenRereadPeriod = absl::Minutes(1);

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// Retry-After: <seconds> (the form the API server sends; an HTTP date is left out).
size_t ReadRetryAfter(char* data, size_t size, size_t n, void* user) {
  const size_t bytes = size * n;
  constexpr absl::string_view kName = "retry-after:";
  if (bytes > kName.size() &&
      absl::EqualsIgnoreCase(absl::string_view(data, kName.size()), kName)) {
    const std::string_view value =
        Trim(std::string_view(data + kName.size(), bytes - kName.size()));
    int64_t seconds = 0;
    if (absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &seconds) && seconds >= 0) {
      *static_cast<absl::Duration*>(user) = absl::Seconds(seconds);
    }
  }
  return bytes;
}

long DurationMillis(absl::Duration d) {
  return static_cast<long>(std::max<int64_t>(1, absl::ToInt64Milliseconds(d)));
}

Counter& RequestCounter(std::string_view verb, std::string_view code) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_kube_requests_total",
      "Requests the kube store sent to the API server, by HTTP method and status code "
      "(code \"error\": no response).",
      {{"method", std::string(verb)}, {"code", std::string(code)}});
}

struct StreamState {
  CURL* handle = nullptr;
  const std::function<void(long)>* on_status = nullptr;
  const std::function<bool(std::string_view)>* on_line = nullptr;
  std::string* error_body = nullptr;
  std::function<void()> answered;  // the server is reachable
  long code = 0;
  std::string pending;
  bool ended_by_callback = false;
};

// The response's status, once: when its headers are complete, or at its first body bytes.
void NoteStreamStatus(StreamState* state) {
  if (state->code != 0) return;
  long code = 0;
  curl_easy_getinfo(state->handle, CURLINFO_RESPONSE_CODE, &code);
  if (code < 200) return;  // none yet, or an interim 1xx
  state->code = code;
  state->answered();  // an answer, while the stream goes on
  (*state->on_status)(code);
}

// A watch that resumes where nothing changed gets its headers and then no body for as long as
// nothing changes (a real kube-apiserver sends its first bookmark about a minute later): the
// status must count from the headers, or the stream looks unanswered all that time.
size_t StreamHeader(char* data, size_t size, size_t n, void* user) {
  size_t bytes = size * n;
  std::string_view line(data, bytes);
  if (line == "\r\n" || line == "\n") NoteStreamStatus(static_cast<StreamState*>(user));
  return bytes;
}

size_t StreamWrite(char* data, size_t size, size_t n, void* user) {
  auto* state = static_cast<StreamState*>(user);
  size_t bytes = size * n;
  NoteStreamStatus(state);
  if (state->code != 200) {
    if (state->error_body != nullptr) state->error_body->append(data, bytes);
    return bytes;
  }
  state->pending.append(data, bytes);
  size_t start = 0;
  for (;;) {
    size_t nl = state->pending.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(state->pending.data() + start, nl - start);
    start = nl + 1;
    if (Trim(line).empty()) continue;
    if (!(*state->on_line)(line)) {
      state->ended_by_callback = true;
      return 0;  // aborts the transfer
    }
  }
  state->pending.erase(0, start);
  return bytes;
}

}  // namespace

void ApiClient::StreamControl::Stop() {
  stopped_.store(true);
  absl::MutexLock lock(&mu_);
  if (multi_ != nullptr) curl_multi_wakeup(multi_);
}

ApiClient::ApiClient(Options options)
    : options_(std::move(options)),
      bucket_(options_.qps, options_.burst, const_cast<Clock&>(*options_.clock)) {
  GlobalInit();
}

ApiClient::~ApiClient() {
  Shutdown();
  absl::MutexLock lock(&mu_);
  for (CURL* h : idle_) curl_easy_cleanup(h);
  idle_.clear();
}

void ApiClient::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
}

std::string ApiClient::LastError() const {
  absl::MutexLock lock(&mu_);
  return last_error_;
}

CURL* ApiClient::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      CURL* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void ApiClient::Release(CURL* handle) {
  absl::MutexLock lock(&mu_);
  if (shutdown_ || idle_.size() >= 16) {
    curl_easy_cleanup(handle);
    return;
  }
  idle_.push_back(handle);
}

absl::StatusOr<std::string> ApiClient::BearerToken() {
  const KubeConfig& c = options_.config;
  if (c.token_file.empty()) return c.token;
  absl::Time now = options_.clock->Now();
  {
    absl::MutexLock lock(&mu_);
    if (now - token_read_ < kTokenRereadPeriod && !token_.empty()) return token_;
  }
  std::ifstream in(c.token_file);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    absl::MutexLock lock(&mu_);
    if (!token_.empty()) return token_;  // keep the last good one
    return absl::UnauthenticatedError(Cat("kube store: cannot read the token file ", c.token_file));
  }
  absl::MutexLock lock(&mu_);
  token_ = std::string(Trim(text.str()));
  token_read_ = now;
  return token_;
}

absl::Status ApiClient::Throttle(absl::Time deadline) {
  for (;;) {
    if (bucket_.TryAcquire()) return absl::OkStatus();
    absl::Duration wait = bucket_.TimeUntilAvailable();
    absl::Time now = options_.clock->Now();
    if (now + wait > deadline) {
      return absl::DeadlineExceededError(
          "kube store: client-side rate limit: no request slot before the deadline");
    }
    // A timer that Shutdown() interrupts, not a sleep.
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&shutdown_), wait)) {
      return absl::CancelledError("kube store: shutting down");
    }
  }
}

absl::Status ApiClient::Configure(CURL* h, const Request& request, void* headers_out) {
  const KubeConfig& c = options_.config;
  curl_easy_reset(h);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_URL, (c.server + request.path).c_str());
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, DurationMillis(options_.connect_timeout));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
  curl_easy_setopt(h, CURLOPT_USERAGENT, options_.user_agent.c_str());
  if (c.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!c.ca_pem.empty()) {
    curl_blob blob{const_cast<char*>(c.ca_pem.data()), c.ca_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
  } else if (!c.ca_file.empty()) {
    curl_easy_setopt(h, CURLOPT_CAINFO, c.ca_file.c_str());
  }
  if (!c.client_cert_pem.empty()) {
    curl_blob cert{const_cast<char*>(c.client_cert_pem.data()), c.client_cert_pem.size(),
                   CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!c.client_cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, c.client_cert_file.c_str());
  }
  if (!c.client_key_pem.empty()) {
    curl_blob key{const_cast<char*>(c.client_key_pem.data()), c.client_key_pem.size(),
                  CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!c.client_key_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLKEY, c.client_key_file.c_str());
  }

  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  auto token = BearerToken();
  if (!token.ok()) return token.status();
  if (!token->empty()) {
    headers = curl_slist_append(headers, Cat("Authorization: Bearer ", *token).c_str());
  }
  if (request.method != "GET") {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (!request.body.empty()) {
    headers = curl_slist_append(headers, Cat("Content-Type: ", request.content_type).c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  }
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  *static_cast<curl_slist**>(headers_out) = headers;
  return absl::OkStatus();
}

absl::Status ApiClient::TransportError(int curl_code, const Request& request, const char* detail) {
  auto code = static_cast<CURLcode>(curl_code);
  std::string message = Cat("kube API server ", options_.config.server, ": ", request.method, " ",
                            request.path, ": ", curl_easy_strerror(code),
                            detail != nullptr && *detail != '\0' ? Cat(" (", detail, ")") : "");
  RequestCounter(request.method, "error").Increment();
  bool timed_out = code == CURLE_OPERATION_TIMEDOUT;
  // A timeout on a slow but live server says nothing about reachability.
  const bool lost = !timed_out && reachable_.exchange(false);
  {
    absl::MutexLock lock(&mu_);
    last_error_ = message;
    if (lost) unreachable_since_ = options_.clock->Now();
  }
  if (lost) {
    // Once per outage: each retry after it is a debug line and a count.
    LogWarn("kube",
            "the API server is unreachable; clusterd serves from its cache, queues its writes "
            "and retries with back-off until it answers",
            {{"server", options_.config.server}, {"error", message}});
  }
  LogDebug("kube", "request failed",
           {{"method", request.method}, {"path", request.path}, {"error", message}});
  // Callers of the store see one code for "the backend did not answer" (object_store.h).
  absl::Status status = absl::UnavailableError(message);
  if (code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_CONNECT ||
      code == CURLE_SSL_CONNECT_ERROR) {
    status.SetPayload(kNotSentPayload, absl::Cord("1"));
  }
  return status;
}

void ApiClient::NoteResponse() {
  if (reachable_.exchange(true)) return;
  absl::Duration down;
  {
    absl::MutexLock lock(&mu_);
    down = options_.clock->Now() - unreachable_since_;
  }
  LogInfo(
      "kube", "the API server answers again",
      {{"server", options_.config.server}, {"unreachable_ms", absl::ToInt64Milliseconds(down)}});
  returns_.fetch_add(1);
}

void ApiClient::MaybeProbe() {
  if (Reachable()) return;
  const int64_t now_ms = absl::ToUnixMillis(options_.clock->Now());
  int64_t due = next_probe_ms_.load();
  if (now_ms < due) return;
  double spread;
  {
    absl::MutexLock lock(&mu_);
    spread = 1.0 + 0.5 * jitter_(rng_);
  }
  const int64_t next = now_ms + absl::ToInt64Milliseconds(options_.probe_interval * spread);
  if (!next_probe_ms_.compare_exchange_strong(due, next)) return;  // another caller probes
  Request probe;
  probe.path = "/version";
  probe.timeout = options_.connect_timeout + absl::Seconds(1);
  Do(probe).IgnoreError();  // any answer makes the server reachable again (NoteResponse)
}

bool PauseUntilAnswered(ApiClient& client, absl::Mutex& mu, const bool* stopped, absl::Duration d) {
  const uint64_t returns = client.returns();
  const absl::Time end = absl::Now() + d;
  for (;;) {
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    if (mu.AwaitWithTimeout(absl::Condition(stopped), std::min(left, absl::Seconds(1)))) {
      return false;
    }
    if (client.returns() != returns) return true;
    mu.Unlock();  // the probe is a request: never under the caller's lock
    client.MaybeProbe();
    mu.Lock();
    if (*stopped) return false;
    if (client.returns() != returns) return true;
  }
}

absl::StatusOr<ApiClient::Response> ApiClient::Do(const Request& request) {
  absl::Duration timeout =
      request.timeout > absl::ZeroDuration() ? request.timeout : options_.request_timeout;
  absl::Time deadline = options_.clock->Now() + timeout;
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<Response> response = DoOnce(request, deadline);
    if (!response.ok()) return response;
    if (response->code != 429) {
      NoteNotThrottled();
      return response;
    }
    const absl::Duration wait = NoteThrottled(request, *response, attempt);
    if (options_.clock->Now() + wait >= deadline || !PauseFor(wait)) return response;
  }
}

absl::Duration ApiClient::NoteThrottled(const Request& request, const Response& response,
                                        int attempt) {
  // The server's Retry-After (1 s from API Priority and Fairness), else a doubling from
  // 250 ms; at most 30 s; and 0-50 % more, so that throttled clients do not return together.
  absl::Duration base = response.retry_after;
  if (base <= absl::ZeroDuration()) base = absl::Milliseconds(250) * (1 << std::min(attempt, 7));
  base = std::clamp(base, absl::Milliseconds(100), absl::Seconds(30));
  absl::Duration wait;
  const absl::Time now = options_.clock->Now();
  std::string message = Cat("429 TooManyRequests: ", request.method, " ", request.path, ": ",
                            MessageOf(response.body));
  bool first;
  {
    absl::MutexLock lock(&mu_);
    // A run that resumes within kThrottleMemory of the last 429 (a request slipped through
    // between) is the same episode: it is neither logged nor counted from zero again.
    first = !throttled_.load() && now - last_throttled_ > kThrottleMemory;
    if (first) {
      throttled_since_ = now;
      throttled_count_ = 0;
    }
    ++throttled_count_;
    wait = base * (1.0 + 0.5 * jitter_(rng_));
    last_throttled_ = now;
    throttle_message_ = message;
    throttled_.store(true);
  }
  if (first) {
    LogWarn("kube",
            "the API server throttles clusterd's requests (429: API Priority and Fairness); "
            "each is sent again after the server's Retry-After, with jitter, while its timeout "
            "allows",
            {{"server", options_.config.server},
             {"first", message},
             {"retry_after_ms", absl::ToInt64Milliseconds(response.retry_after)}});
  }
  return wait;
}

void ApiClient::NoteNotThrottled() {
  if (!throttled_.load()) return;
  absl::Duration lasted;
  int64_t refused;
  {
    absl::MutexLock lock(&mu_);
    if (!throttled_.load()) return;
    throttled_.store(false);
    lasted = options_.clock->Now() - throttled_since_;
    refused = throttled_count_;
  }
  LogInfo("kube", "the API server accepts clusterd's requests again",
          {{"server", options_.config.server},
           {"throttled_ms", absl::ToInt64Milliseconds(lasted)},
           {"refused", refused}});
}

std::string ApiClient::Throttled() const {
  if (!throttled_.load()) return "";
  absl::MutexLock lock(&mu_);
  if (!throttled_.load() || options_.clock->Now() - last_throttled_ > kThrottleMemory) return "";
  return Cat(throttle_message_, " (", throttled_count_, " refused since ",
             absl::FormatTime("%H:%M:%S", throttled_since_, absl::UTCTimeZone()), " UTC)");
}

bool ApiClient::PauseFor(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  return !mu_.AwaitWithTimeout(absl::Condition(&shutdown_), d);
}

absl::StatusOr<ApiClient::Response> ApiClient::DoOnce(const Request& request, absl::Time deadline) {
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return absl::CancelledError("kube store: shutting down");
  }
  if (absl::Status s = Throttle(deadline); !s.ok()) return s;
  CURL* h = Acquire();
  if (h == nullptr) return absl::ResourceExhaustedError("kube store: curl_easy_init failed");
  curl_slist* headers = nullptr;
  if (absl::Status s = Configure(h, request, &headers); !s.ok()) {
    curl_slist_free_all(headers);
    Release(h);
    return s;
  }
  Response response;
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(
      h, CURLOPT_TIMEOUT_MS,
      DurationMillis(std::max(deadline - options_.clock->Now(), absl::Milliseconds(1))));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &AppendBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &ReadRetryAfter);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response.retry_after);
  CURLcode rc = curl_easy_perform(h);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    absl::Status s = TransportError(rc, request, error);
    // A failed connection may be half-open: do not reuse it.
    curl_easy_cleanup(h);
    return s;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.code);
  Release(h);
  NoteResponse();
  RequestCounter(request.method, Cat(response.code)).Increment();
  return response;
}

absl::Status ApiClient::Stream(const Request& request, const std::function<void(long)>& on_status,
                               const std::function<bool(std::string_view)>& on_line,
                               std::string* error_body, StreamControl* control,
                               absl::Duration idle) {
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return absl::CancelledError("kube store: shutting down");
  }
  if (absl::Status s = Throttle(options_.clock->Now() + options_.request_timeout); !s.ok())
    return s;
  CURL* h = curl_easy_init();
  if (h == nullptr) return absl::ResourceExhaustedError("kube store: curl_easy_init failed");
  curl_slist* headers = nullptr;
  if (absl::Status s = Configure(h, request, &headers); !s.ok()) {
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    return s;
  }
  StreamState state;
  state.handle = h;
  state.on_status = &on_status;
  state.on_line = &on_line;
  state.error_body = error_body;
  state.answered = [this] { NoteResponse(); };
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &StreamWrite);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &StreamHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &state);
  // A stream has no overall timeout; a silent connection is cut after `idle`.
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max<int64_t>(1, absl::ToInt64Seconds(idle))));

  CURLM* multi = curl_multi_init();
  curl_multi_add_handle(multi, h);
  {
    absl::MutexLock lock(&control->mu_);
    control->multi_ = multi;
  }
  CURLcode result = CURLE_OK;
  bool finished = false;
  while (!control->stopped()) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    if (mc != CURLM_OK) {
      result = CURLE_RECV_ERROR;
      finished = true;
      break;
    }
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg == CURLMSG_DONE) {
        result = msg->data.result;
        finished = true;
      }
    }
    if (finished || running == 0) break;
    curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
  }
  {
    absl::MutexLock lock(&control->mu_);
    control->multi_ = nullptr;
  }
  if (state.code == 0) {
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &state.code);
    if (state.code != 0) on_status(state.code);
  }
  curl_multi_remove_handle(multi, h);
  curl_multi_cleanup(multi);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  if (control->stopped() || state.ended_by_callback) return absl::OkStatus();
  if (finished && result != CURLE_OK) return TransportError(result, request, error);
  NoteResponse();
  RequestCounter(request.method, Cat(state.code)).Increment();
  return absl::OkStatus();
}

bool NotSent(const absl::Status& status) { return status.GetPayload(kNotSentPayload).has_value(); }

std::string ReasonOf(std::string_view body) {
  auto parsed = ParseJson(body, "API status", 1 << 20);
  if (!parsed.ok() || !parsed->is_object()) return "";
  return StringOr(*parsed, "reason", "");
}

std::string MessageOf(std::string_view body) {
  auto parsed = ParseJson(body, "API status", 1 << 20);
  if (!parsed.ok() || !parsed->is_object()) return std::string(Trim(body.substr(0, 200)));
  return StringOr(*parsed, "message", "");
}

absl::Status StatusFromResponse(const ApiClient::Response& response, std::string_view what) {
  std::string reason;
  std::string message;
  auto parsed = ParseJson(response.body, "API status", 1 << 20);
  if (parsed.ok() && parsed->is_object()) {
    reason = StringOr(*parsed, "reason", "");
    message = StringOr(*parsed, "message", "");
  }
  if (message.empty()) message = std::string(Trim(response.body.substr(0, 200)));
  // API Priority and Fairness answers 429 with a plain-text body, not a Status.
  if (reason.empty() && response.code == 429) reason = "TooManyRequests";
  std::string text = Cat(response.code, reason.empty() ? "" : Cat(" ", reason), ": ", what,
                         message.empty() ? "" : Cat(": ", message));
  switch (response.code) {
    case 400:
    case 405:
    case 413:
    case 415:
    case 422:
      return absl::InvalidArgumentError(text);
    case 401:
      return absl::UnauthenticatedError(text);
    case 403:
      return absl::PermissionDeniedError(text);
    case 404:
      return absl::NotFoundError(text);
    case 409:
      return reason == "AlreadyExists" ? absl::AlreadyExistsError(text) : absl::AbortedError(text);
    case 410:
      return absl::OutOfRangeError(text);
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      return absl::UnavailableError(text);
    default:
      return absl::UnknownError(text);
  }
}

}  // namespace clusterd::store::kube
