#pragma once

// The HTTP transport under clusterd's HTTP endpoint: libmicrohttpd (Debian's
// libmicrohttpd-dev) with an epoll event loop per worker thread, so a connection costs a slot
// and a little memory, never a thread. Idle and slowloris connections therefore cannot starve
// the probes; what bounds them is the connection caps (in total and per client address), the
// idle timeout and the per-connection memory limit. Requests are matched against regex routes
// and answered by plain handlers (HttpRequest in, HttpResponse out); server-sent event streams
// are produced on a thread of their own and written without blocking the event loop.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace clusterd::server {

class HttpTls;

// Who is calling: what the authorisation hook decides on.
struct HttpCaller {
  std::string method;         // "GET"
  std::string path;           // percent-decoded, without the query
  std::string authorization;  // the Authorization header's value ("" when absent)
  std::string peer;           // "ip:port" of the TCP peer
  std::string peer_ip;        // "ip"
  // With TLS and a client certificate that chains to --http-client-ca: its subject DN (RFC
  // 4514 string); "" otherwise.
  std::string client_cert_subject;
};

struct HttpRequest {
  std::string method;
  std::string path;                                // percent-decoded, without the query
  std::multimap<std::string, std::string> params;  // query arguments, decoded
  std::map<std::string, std::string> headers;      // keys lower-case
  std::vector<std::string> matches;                // [0] the path, then the route's groups
  HttpCaller caller;

  bool has_param(const std::string& key) const { return params.count(key) > 0; }
  std::string get_param_value(const std::string& key) const;
  bool has_header(const std::string& key) const;
  std::string get_header_value(const std::string& key) const;
};

struct HttpResponse {
  // Produces the next piece of a streamed body into *chunk (may be empty: nothing yet). It runs
  // on a thread of its own and may block, but should return every second or so: a stream
  // whose client left ends only when it returns. false ends the stream.
  using Producer = std::function<bool(std::string* chunk)>;

  int status = 200;
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  Producer producer;              // set: the body is streamed (chunked) from it
  std::function<void()> on_done;  // called once when a stream ends (either side)

  void set_content(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
  void set_header(std::string key, std::string value) {
    headers.emplace_back(std::move(key), std::move(value));
  }
  void set_stream(std::string type, Producer p, std::function<void()> done) {
    content_type = std::move(type);
    producer = std::move(p);
    on_done = std::move(done);
  }
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

class HttpTransport {
 public:
  struct Limits {
    int max_connections = 512;            // in total (--http-max-connections)
    int max_connections_per_client = 32;  // per client IP (--http-max-connections-per-client)
    absl::Duration idle_timeout = absl::Seconds(15);  // no byte in or out: closed
    size_t max_header_bytes = 16 * 1024;              // request line + headers; more: 431
    size_t max_body_bytes = 64 * 1024;  // no route takes a body; more: 413 before reading it
    int threads = 2;                    // event-loop workers (each multiplexes its share)
    int max_streams = 64;               // open server-sent event streams
  };
  struct TlsFiles {
    std::string cert, key, client_ca;  // PEM files; cert+key set: HTTPS
    absl::Duration reload_interval = absl::Seconds(5);
  };
  struct Options {
    std::string host;  // numeric IPv4/IPv6 or a name that resolves locally
    int port = 0;      // 0: a free port
    Limits limits;
    TlsFiles tls;
    // Called for every request whose path is not in open_paths. OK serves; Unauthenticated ->
    // 401 with WWW-Authenticate: Bearer; PermissionDenied -> 403; other codes their HTTP code.
    // Null: every request is allowed.
    std::function<absl::Status(const HttpCaller&)> authorize;
    std::set<std::string> open_paths = {"/healthz", "/readyz"};
    // Answers an error in the route handlers' shape (a Kubernetes Status body).
    std::function<void(HttpResponse&, const absl::Status&)> reply_error;
    // A handler that throws: its message.
    std::function<void(const HttpRequest&, HttpResponse&, const std::string&)> on_exception;
  };

  // Registers a GET route; `pattern` must match the whole decoded path. First match wins.
  void Get(const std::string& pattern, HttpHandler handler);

  // Binds and starts serving. Refuses a port another socket listens on.
  absl::Status Start(Options options);
  void Stop();
  HttpTransport();
  ~HttpTransport();

  int port() const { return port_; }
  bool tls() const { return tls_ != nullptr; }

 private:
  struct Route {
    std::regex pattern;
    HttpHandler handler;
  };
  struct Stream;
  struct RequestState;
  friend struct HttpTransportCallbacks;

  // Admission of a new connection from `ip` (accept policy); false refuses it.
  bool AdmitConnection(const std::string& ip);
  void ConnectionClosed(const std::string& ip);
  void Refuse(const std::string& reason, const std::string& peer, const std::string& detail);
  // Answers a complete request (headers read; no body accepted).
  int Dispatch(MHD_Connection* connection, RequestState& state);
  int Queue(MHD_Connection* connection, HttpResponse& response);
  int QueueStream(MHD_Connection* connection, HttpResponse& response);

  Options options_;
  std::vector<Route> routes_;
  MHD_Daemon* daemon_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::unique_ptr<HttpTls> tls_;

  absl::Mutex conn_mu_;
  int connections_ ABSL_GUARDED_BY(conn_mu_) = 0;
  std::map<std::string, int> per_client_ ABSL_GUARDED_BY(conn_mu_);

  absl::Mutex streams_mu_;
  std::vector<std::shared_ptr<Stream>> streams_ ABSL_GUARDED_BY(streams_mu_);
  std::atomic<bool> stopping_{false};
};

}  // namespace clusterd::server
