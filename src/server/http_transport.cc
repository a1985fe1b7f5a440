#include "server/http_transport.h"

#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_name.h"
#include "server/http_tls.h"
#include "server/request_limits.h"

namespace clusterd::server {
namespace {

// What a stream may have produced and the client not yet read; the producer waits beyond it.
constexpr size_t kStreamBufferBytes = 256 * 1024;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string IpOf(const sockaddr* addr) {
  char host[NI_MAXHOST] = {0};
  socklen_t len = addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (getnameinfo(addr, len, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) != 0) return "?";
  return host;
}

int PortOf(const sockaddr* addr) {
  if (addr->sa_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(addr)->sin_port);
}

Counter& RefusedCounter(const std::string& reason) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_http_refused_total",
      "HTTP connections and requests refused before a route handler ran, by reason.",
      {{"reason", reason}});
}

void Log(int level, const std::string& message) {
  if (level >= 2) {
    LogWarn("http", message);
  } else {
    LogDebug("http", message);
  }
}

}  // namespace

std::string HttpRequest::get_param_value(const std::string& key) const {
  auto it = params.find(key);
  return it == params.end() ? "" : it->second;
}

bool HttpRequest::has_header(const std::string& key) const { return headers.count(Lower(key)) > 0; }

std::string HttpRequest::get_header_value(const std::string& key) const {
  auto it = headers.find(Lower(key));
  return it == headers.end() ? "" : it->second;
}

// A server-sent stream: its producer runs on `thread` and fills `buffer`; the event loop drains
// it from the content reader, suspending the connection while there is nothing to send.
struct HttpTransport::Stream {
  absl::Mutex mu;
  absl::CondVar space;
  std::string buffer ABSL_GUARDED_BY(mu);
  bool finished ABSL_GUARDED_BY(mu) = false;   // the producer ended: send what is left, then EOF
  bool cancelled ABSL_GUARDED_BY(mu) = false;  // the connection is gone (or the server stops)
  bool suspended ABSL_GUARDED_BY(mu) = false;
  MHD_Connection* connection = nullptr;
  HttpResponse::Producer producer;
  std::function<void()> on_done;
  std::thread thread;
  std::atomic<bool> done{false};  // Run returned: the thread joins at once

  void Run() {
    while (true) {
      std::string chunk;
      bool more = producer(&chunk);
      absl::MutexLock lock(&mu);
      if (cancelled) break;
      if (more) {
        buffer += chunk;
      } else {
        finished = true;
      }
      if (suspended && (!more || !buffer.empty())) {
        suspended = false;
        MHD_resume_connection(connection);
      }
      if (!more) break;
      while (!cancelled && buffer.size() > kStreamBufferBytes) space.Wait(&mu);
      if (cancelled) break;
    }
    if (on_done) on_done();
    done = true;
  }

  ssize_t Read(char* out, size_t max) {
    absl::MutexLock lock(&mu);
    if (!buffer.empty()) {
      size_t n = std::min(max, buffer.size());
      std::memcpy(out, buffer.data(), n);
      buffer.erase(0, n);
      space.SignalAll();
      return static_cast<ssize_t>(n);
    }
    if (finished || cancelled) return MHD_CONTENT_READER_END_OF_STREAM;
    suspended = true;
    MHD_suspend_connection(connection);
    return 0;
  }

  void Cancel() {
    absl::MutexLock lock(&mu);
    cancelled = true;
    space.SignalAll();
  }

  // Server shutdown: end the stream and wake a suspended connection so it can close.
  void Finish() {
    absl::MutexLock lock(&mu);
    finished = true;
    cancelled = true;
    space.SignalAll();
    if (suspended) {
      suspended = false;
      MHD_resume_connection(connection);
    }
  }
};

// One request on a connection, between the first and the last call of the access handler.
struct HttpTransport::RequestState {
  HttpRequest request;
  size_t body_bytes = 0;
  bool headers_checked = false;
};

// The C callbacks libmicrohttpd calls; each forwards to the transport (`cls`).
struct HttpTransportCallbacks {
  static MHD_Result Accept(void* cls, const sockaddr* addr, socklen_t) {
    auto* t = static_cast<HttpTransport*>(cls);
    return t->AdmitConnection(IpOf(addr)) ? MHD_YES : MHD_NO;
  }

  static void Notify(void* cls, MHD_Connection* connection, void** socket_context,
                     MHD_ConnectionNotificationCode code) {
    auto* t = static_cast<HttpTransport*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      const MHD_ConnectionInfo* info =
          MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      *socket_context = new std::string(info != nullptr ? IpOf(info->client_addr) : "?");
    } else if (*socket_context != nullptr) {
      auto* ip = static_cast<std::string*>(*socket_context);
      t->ConnectionClosed(*ip);
      delete ip;
      *socket_context = nullptr;
    }
  }

  static MHD_Result Header(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto* state = static_cast<HttpTransport::RequestState*>(cls);
    state->request.headers[Lower(key)] = value != nullptr ? value : "";
    return MHD_YES;
  }

  static MHD_Result Argument(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto* state = static_cast<HttpTransport::RequestState*>(cls);
    state->request.params.emplace(key, value != nullptr ? value : "");
    return MHD_YES;
  }

  static MHD_Result Access(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char*, const char*, size_t* upload_data_size,
                           void** con_cls) {
    auto* t = static_cast<HttpTransport*>(cls);
    auto* state = static_cast<HttpTransport::RequestState*>(*con_cls);
    if (state == nullptr) {
      state = new HttpTransport::RequestState();
      *con_cls = state;
      state->request.method = method;
      state->request.path = url;
      MHD_get_connection_values(connection, MHD_HEADER_KIND, &Header, state);
      MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &Argument, state);
      return static_cast<MHD_Result>(t->Dispatch(connection, *state));
    }
    // A body arrives (only when Dispatch let it: a Content-Length within the limit); it is
    // read and discarded. libmicrohttpd holds a body to its Content-Length; past the limit
    // anyway, the connection is closed (no answer can be queued in the middle of a body).
    if (*upload_data_size > 0) {
      state->body_bytes += *upload_data_size;
      *upload_data_size = 0;
      return state->body_bytes > t->options_.limits.max_body_bytes ? MHD_NO : MHD_YES;
    }
    return static_cast<MHD_Result>(t->Dispatch(connection, *state));
  }

  static void Completed(void*, MHD_Connection*, void** con_cls, MHD_RequestTerminationCode) {
    delete static_cast<HttpTransport::RequestState*>(*con_cls);
    *con_cls = nullptr;
  }

  static ssize_t StreamRead(void* cls, uint64_t, char* buf, size_t max) {
    return static_cast<HttpTransport::Stream*>(cls)->Read(buf, max);
  }

  static void StreamFree(void* cls) { static_cast<HttpTransport::Stream*>(cls)->Cancel(); }

  static void Logger(void*, const char* format, va_list ap) {
    char line[512];
    vsnprintf(line, sizeof(line), format, ap);
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    Log(1, absl::StrCat("libmicrohttpd: ", text));
  }
};

void HttpTransport::Get(const std::string& pattern, HttpHandler handler) {
  routes_.push_back(Route{std::regex(pattern), std::move(handler)});
}

bool HttpTransport::AdmitConnection(const std::string& ip) {
  std::string reason;
  {
    absl::MutexLock lock(&conn_mu_);
    if (stopping_) return false;
    if (connections_ >= options_.limits.max_connections) {
      reason = "connections_total";
    } else if (per_client_[ip] >= options_.limits.max_connections_per_client) {
      reason = "connections_per_client";
    } else {
      ++connections_;
      ++per_client_[ip];
      return true;
    }
  }
  Refuse(reason, ip,
         reason == "connections_total"
             ? absl::StrCat("already ", options_.limits.max_connections,
                            " connections (--http-max-connections)")
             : absl::StrCat("already ", options_.limits.max_connections_per_client,
                            " connections from this client (--http-max-connections-per-client)"));
  return false;
}

void HttpTransport::ConnectionClosed(const std::string& ip) {
  absl::MutexLock lock(&conn_mu_);
  --connections_;
  auto it = per_client_.find(ip);
  if (it != per_client_.end() && --it->second <= 0) per_client_.erase(it);
}

void HttpTransport::Refuse(const std::string& reason, const std::string& peer,
                           const std::string& detail) {
  RefusedCounter(reason).Increment();
  int64_t suppressed = 0;
  if (BadInputLog::Default().Admit(&suppressed)) {
    LogWarn("http", "refused",
            {{"reason", reason}, {"peer", peer}, {"detail", detail}, {"suppressed", suppressed}});
  }
}

int HttpTransport::Dispatch(MHD_Connection* connection, RequestState& state) {
  HttpRequest& req = state.request;
  const MHD_ConnectionInfo* addr =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (addr != nullptr && req.caller.peer.empty()) {
    req.caller.peer_ip = IpOf(addr->client_addr);
    req.caller.peer = absl::StrCat(req.caller.peer_ip.find(':') != std::string::npos
                                       ? absl::StrCat("[", req.caller.peer_ip, "]")
                                       : req.caller.peer_ip,
                                   ":", PortOf(addr->client_addr));
  }
  HttpResponse res;
  const Limits& limits = options_.limits;

  if (!state.headers_checked) {  // the first call: headers only
    state.headers_checked = true;
    size_t header_bytes = req.method.size() + req.path.size() + 12;
    for (const auto& [k, v] : req.headers) header_bytes += k.size() + v.size() + 4;
    for (const auto& [k, v] : req.params) header_bytes += k.size() + v.size() + 2;
    if (header_bytes > limits.max_header_bytes) {
      Refuse("header_too_large", req.caller.peer, absl::StrCat(header_bytes, " bytes"));
      options_.reply_error(
          res, absl::InvalidArgumentError(
                   absl::StrCat("request header larger than ", limits.max_header_bytes, " bytes")));
      res.status = 431;
      return Queue(connection, res);
    }
    const std::string length = req.get_header_value("content-length");
    if (!length.empty()) {
      char* end = nullptr;
      unsigned long long n = std::strtoull(length.c_str(), &end, 10);
      if (end == length.c_str() || *end != '\0' || n > limits.max_body_bytes) {
        // Refused before a byte of it is read: the connection closes after the answer.
        Refuse("body_too_large", req.caller.peer, absl::StrCat("Content-Length ", length));
        options_.reply_error(res, absl::ResourceExhaustedError(absl::StrCat(
                                      "request body of ", length, " bytes is larger than ",
                                      limits.max_body_bytes, " bytes")));
        res.status = 413;
        return Queue(connection, res);
      }
    }
    if (!req.get_header_value("transfer-encoding").empty()) {
      // A chunked body announces no size, and an answer cannot be queued in the middle of
      // one: no route takes a body, so it is refused from its headers too.
      Refuse("body_too_large", req.caller.peer, "a chunked body");
      options_.reply_error(res, absl::ResourceExhaustedError(
                                    "a chunked request body is not accepted (no route takes a "
                                    "body; send at most --http-max-body-bytes with "
                                    "Content-Length)"));
      res.status = 413;
      return Queue(connection, res);
    }
    // Answered at the next call, once the request (and a small body) is read: an answer queued
    // before that makes libmicrohttpd close the connection (no keep-alive).
    return MHD_YES;
  }

  if (tls_ != nullptr) {
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info != nullptr)
      req.caller.client_cert_subject =
          tls_->VerifiedSubject(static_cast<gnutls_session_t>(info->tls_session));
  }
  req.caller.method = req.method;
  req.caller.path = req.path;
  req.caller.authorization = req.get_header_value("authorization");

  if (options_.authorize && options_.open_paths.count(req.path) == 0) {
    absl::Status allowed = options_.authorize(req.caller);
    if (!allowed.ok()) {
      const bool unauthenticated = allowed.code() == absl::StatusCode::kUnauthenticated;
      Refuse(unauthenticated ? "unauthenticated" : "forbidden", req.caller.peer,
             std::string(allowed.message()));
      options_.reply_error(res, allowed);
      if (unauthenticated) {
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer realm=\"clusterd\"");
      } else if (allowed.code() == absl::StatusCode::kPermissionDenied) {
        res.status = 403;
      }
      return Queue(connection, res);
    }
  }

  const bool get = req.method == "GET" || req.method == "HEAD";
  for (const Route& route : routes_) {
    std::smatch m;
    if (!get || !std::regex_match(req.path, m, route.pattern)) continue;
    req.matches.assign(m.begin(), m.end());
    try {
      route.handler(req, res);
    } catch (const std::exception& e) {
      res = HttpResponse();
      options_.on_exception(req, res, e.what());
    } catch (...) {
      res = HttpResponse();
      options_.on_exception(req, res, "unknown exception");
    }
    return res.producer ? QueueStream(connection, res) : Queue(connection, res);
  }
  res.status = 404;
  return Queue(connection, res);
}

int HttpTransport::Queue(MHD_Connection* connection, HttpResponse& r) {
  MHD_Response* response =
      MHD_create_response_from_buffer(r.body.size(), r.body.data(), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  if (!r.content_type.empty()) {
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type.c_str());
  }
  for (const auto& [k, v] : r.headers) MHD_add_response_header(response, k.c_str(), v.c_str());
  MHD_Result ret = MHD_queue_response(connection, static_cast<unsigned int>(r.status), response);
  MHD_destroy_response(response);
  return ret;
}

int HttpTransport::QueueStream(MHD_Connection* connection, HttpResponse& r) {
  auto stream = std::make_shared<Stream>();
  stream->connection = connection;
  stream->producer = std::move(r.producer);
  stream->on_done = std::move(r.on_done);
  {
    absl::MutexLock lock(&streams_mu_);
    // Reap streams whose producer thread has returned (joining them does not wait).
    for (auto it = streams_.begin(); it != streams_.end();) {
      if ((*it)->done && (*it)->thread.joinable()) {
        (*it)->thread.join();
        it = streams_.erase(it);
      } else {
        ++it;
      }
    }
    if (stopping_ || static_cast<int>(streams_.size()) >= options_.limits.max_streams) {
      if (stream->on_done) stream->on_done();
      HttpResponse busy;
      busy.status = 503;
      busy.set_content("too many open event streams\n", "text/plain");
      return Queue(connection, busy);
    }
    streams_.push_back(stream);
  }
  MHD_Response* response =
      MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, &HttpTransportCallbacks::StreamRead,
                                        stream.get(), &HttpTransportCallbacks::StreamFree);
  if (response == nullptr) return MHD_NO;
  if (!r.content_type.empty()) {
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type.c_str());
  }
  for (const auto& [k, v] : r.headers) MHD_add_response_header(response, k.c_str(), v.c_str());
  MHD_Result ret = MHD_queue_response(connection, static_cast<unsigned int>(r.status), response);
  MHD_destroy_response(response);
  Stream* s = stream.get();
  stream->thread = std::thread([s] {
    SetCurrentThreadName("http-stream");
    s->Run();
  });
  return ret;
}

absl::Status HttpTransport::Start(Options options) {
  options_ = std::move(options);
  if (!options_.reply_error) {
    options_.reply_error = [](HttpResponse& res, const absl::Status& s) {
      res.status = 500;
      res.set_content(std::string(s.message()), "text/plain");
    };
  }
  if (!options_.on_exception) {
    options_.on_exception = [](const HttpRequest&, HttpResponse& res, const std::string& what) {
      res.status = 500;
      res.set_content(what, "text/plain");
    };
  }
  const std::string where = absl::StrCat(options_.host, ":", options_.port);

  // Our own listening socket: SO_REUSEADDR (a restarted clusterd binds while old connections
  // linger in TIME_WAIT) but not SO_REUSEPORT, so a port another socket listens on is refused.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(options_.port);
  if (getaddrinfo(options_.host.empty() ? nullptr : options_.host.c_str(), port_text.c_str(),
                  &hints, &found) != 0 ||
      found == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for HTTP on ", where, " (address does not resolve)"));
  }
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int yes = 1;
  bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes)) == 0 &&
            bind(fd, found->ai_addr, found->ai_addrlen) == 0 && listen(fd, 1024) == 0;
  freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) close(fd);
    return absl::UnavailableError(absl::StrCat("cannot listen for HTTP on ", where,
                                               " (address in use, not local, or not permitted)"));
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port_ = PortOf(reinterpret_cast<sockaddr*>(&bound));
  listen_fd_ = fd;

  unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                       MHD_USE_ERROR_LOG;
  const Limits& l = options_.limits;
  // The connection's memory pool holds the request line and headers (and the answer): room
  // for the header limit and 128 KiB more, so an oversized header up to that reaches Dispatch
  // and is refused there with a Status body and a count (a larger one libmicrohttpd refuses
  // with its own 431, uncounted). Pages are touched only as far as a request fills them.
  size_t memory = l.max_header_bytes + 128 * 1024;
  std::vector<MHD_OptionItem> opts = {
      {MHD_OPTION_LISTEN_SOCKET, fd, nullptr},
      {MHD_OPTION_THREAD_POOL_SIZE, std::max(1, l.threads), nullptr},
      // A backstop above our own admission (AdmitConnection counts and logs).
      {MHD_OPTION_CONNECTION_LIMIT, l.max_connections + 16, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT,
       static_cast<intptr_t>(std::max<int64_t>(1, absl::ToInt64Seconds(l.idle_timeout))), nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(memory), nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&HttpTransportCallbacks::Notify),
       this},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&HttpTransportCallbacks::Completed),
       this},
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&HttpTransportCallbacks::Logger),
       this},
  };
  if (!options_.tls.cert.empty() || !options_.tls.key.empty()) {
    absl::StatusOr<std::unique_ptr<HttpTls>> tls = HttpTls::Load(options_.tls);
    if (!tls.ok()) {
      close(fd);
      listen_fd_ = -1;
      return tls.status();
    }
    tls_ = std::move(*tls);
    flags |= MHD_USE_TLS;
    // One-pointer options: given as both value and ptr_value (the array form reads one).
    void* callback = reinterpret_cast<void*>(HttpTls::CertificateCallback());
    opts.push_back(
        {MHD_OPTION_HTTPS_CERT_CALLBACK, reinterpret_cast<intptr_t>(callback), callback});
    if (tls_->has_client_ca()) {
      // Makes the handshake ask for a client certificate; verification is ours
      // (HttpTls::VerifiedSubject, against the CA file as last reloaded).
      char* ca = const_cast<char*>(tls_->initial_client_ca_pem().c_str());
      opts.push_back({MHD_OPTION_HTTPS_MEM_TRUST, reinterpret_cast<intptr_t>(ca), ca});
    }
  }
  opts.push_back({MHD_OPTION_END, 0, nullptr});
  daemon_ = MHD_start_daemon(flags, 0, &HttpTransportCallbacks::Accept, this,
                             &HttpTransportCallbacks::Access, this, MHD_OPTION_ARRAY, opts.data(),
                             MHD_OPTION_END);
  if (daemon_ == nullptr) {
    close(fd);
    listen_fd_ = -1;
    tls_.reset();
    return absl::InternalError(absl::StrCat("cannot start the HTTP server on ", where));
  }
  if (tls_ != nullptr) tls_->StartReloading();
  return absl::OkStatus();
}

void HttpTransport::Stop() {
  if (daemon_ == nullptr) return;
  {
    absl::MutexLock lock(&conn_mu_);
    stopping_ = true;
  }
  std::vector<std::shared_ptr<Stream>> streams;
  {
    absl::MutexLock lock(&streams_mu_);
    streams.swap(streams_);
  }
  for (auto& s : streams) s->Finish();
  MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  close(listen_fd_);
  listen_fd_ = -1;
  for (auto& s : streams) {
    if (s->thread.joinable()) s->thread.join();
  }
  if (tls_ != nullptr) tls_->Stop();
}

HttpTransport::HttpTransport() = default;
HttpTransport::~HttpTransport() { Stop(); }

}  // namespace clusterd::server
