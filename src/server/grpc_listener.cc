#include "server/grpc_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_name.h"
#include "server/grpc_server.h"
#include "server/request_limits.h"

namespace clusterd::server {
namespace {

// epoll data of the listening socket and of the wake-up eventfd; duplicates use their fd.
constexpr uint64_t kListenTag = ~uint64_t{0};
constexpr uint64_t kWakeTag = ~uint64_t{0} - 1;
// How long accepting pauses when the process is out of file descriptors (the pending
// connection stays in the backlog; without a pause the readable socket would spin the loop).
constexpr int kOutOfFdsPauseMs = 100;

std::string ErrnoText(int err) { return std::string(strerror(err)); }

// The client address as gRPC spells it in peer() (an IPv4-mapped IPv6 address is IPv4).
std::string ClientAddress(const sockaddr_storage& ss) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
  } else if (ss.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], text, sizeof(text));
    } else {
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    }
  } else {
    return "unknown";
  }
  return text;
}

Counter& RefusedCounter(absl::string_view reason) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_grpc_connections_refused_total",
      "gRPC connections closed at once because a connection limit was reached (reason total / "
      "per_client) or the process ran out of file descriptors (reason fds).",
      {{"reason", std::string(reason)}});
}

Gauge& OpenGauge(absl::string_view listener) {
  return MetricsRegistry::Default().GetGauge("clusterd_grpc_connections",
                                             "gRPC connections open now, by listener.",
                                             {{"listener", std::string(listener)}});
}

BadInputLog& RefusalLog() {
  static BadInputLog* log = new BadInputLog(Clock::Real(), 1, 10);
  return *log;
}

void CloseWithReset(int fd) {
  linger lg{.l_onoff = 1, .l_linger = 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
  close(fd);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcListener>> GrpcListener::Bind(const HostPort& at,
                                                                 ConnectionLimits& limits,
                                                                 std::string name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port_text = std::to_string(at.port);
  if (int rc = getaddrinfo(at.host.c_str(), port_text.c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve gRPC address ", at.ToString(), ": ", gai_strerror(rc)));
  }
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    freeaddrinfo(found);
    return absl::UnavailableError(
        absl::StrCat("cannot open a socket for gRPC on ", at.ToString(), ": ", ErrnoText(errno)));
  }
  int one = 1;
  int zero = 0;
  // Quick restarts (TIME_WAIT); SO_REUSEPORT stays off so a port another server listens on is
  // refused (docs/compatibility.md "Port in use").
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (found->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  int bound = bind(fd, found->ai_addr, found->ai_addrlen);
  int bind_errno = errno;
  freeaddrinfo(found);
  if (bound != 0 || listen(fd, SOMAXCONN) != 0) {
    int err = bound != 0 ? bind_errno : errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot listen for gRPC on ", at.ToString(),
                     " (address in use, not local, or not permitted: ", ErrnoText(err), ")"));
  }
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  int port = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd < 0 || wake_fd < 0) {
    int err = errno;
    close(fd);
    if (epoll_fd >= 0) close(epoll_fd);
    if (wake_fd >= 0) close(wake_fd);
    return absl::UnavailableError(
        absl::StrCat("cannot set up the gRPC listener: ", ErrnoText(err)));
  }
  epoll_event ev{.events = EPOLLIN, .data = {.u64 = kListenTag}};
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  epoll_event wake{.events = EPOLLIN, .data = {.u64 = kWakeTag}};
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &wake);
  return std::unique_ptr<GrpcListener>(
      new GrpcListener(fd, epoll_fd, wake_fd, port, limits, std::move(name)));
}

GrpcListener::GrpcListener(int listen_fd, int epoll_fd, int wake_fd, int port,
                           ConnectionLimits& limits, std::string name)
    : listen_fd_(listen_fd),
      epoll_fd_(epoll_fd),
      wake_fd_(wake_fd),
      port_(port),
      limits_(limits),
      name_(std::move(name)) {}

void GrpcListener::Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor) {
  acceptor_ = std::move(acceptor);
  thread_ = std::thread([this] {
    SetCurrentThreadName("grpc-accept");
    Run();
  });
}

void GrpcListener::StopAccepting() {
  {
    absl::MutexLock lock(&mu_);
    if (stop_accepting_) return;
    stop_accepting_ = true;
  }
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  if (!thread_.joinable()) {
    // Never started: nobody else touches the listening socket.
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
    close(listen_fd_);
    listen_fd_ = -1;
  }
}

GrpcListener::~GrpcListener() {
  StopAccepting();
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  for (const auto& [fd, client] : watched_) {
    close(fd);
    limits_.Release(client);
  }
  OpenGauge(name_).Add(-static_cast<double>(watched_.size()));
  watched_.clear();
  if (listen_fd_ >= 0) close(listen_fd_);
  close(wake_fd_);
  close(epoll_fd_);
}

size_t GrpcListener::open_connections() {
  absl::MutexLock lock(&mu_);
  return watched_.size();
}

void GrpcListener::Run() {
  bool paused = false;
  epoll_event events[64];
  while (true) {
    int n = epoll_wait(epoll_fd_, events, 64, paused ? kOutOfFdsPauseMs : -1);
    if (n < 0 && errno != EINTR) {
      LogError("grpc", "listener wait failed", {{"listener", name_}, {"error", ErrnoText(errno)}});
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      if (stop_accepting_) {
        epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        close(listen_fd_);
        listen_fd_ = -1;
        return;
      }
    }
    if (paused) {
      epoll_event ev{.events = EPOLLIN, .data = {.u64 = kListenTag}};
      epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev);
      paused = false;
    }
    for (int i = 0; i < n; ++i) {
      uint64_t tag = events[i].data.u64;
      if (tag == kWakeTag) continue;
      if (tag == kListenTag) {
        AcceptAll();
        continue;
      }
      Closed(static_cast<int>(tag));
    }
    // AcceptAll pauses the listening socket when the process is out of descriptors.
    absl::MutexLock lock(&mu_);
    paused = listen_paused_;
    listen_paused_ = false;
  }
}

void GrpcListener::AcceptAll() {
  // A bounded batch per wake-up, so that closes are noticed during a connection flood.
  for (int i = 0; i < 256; ++i) {
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      if (errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        RefusedCounter("fds").Increment();
        if (int64_t suppressed = 0; RefusalLog().Admit(&suppressed)) {
          LogWarn("grpc", "cannot accept a connection, accepting paused",
                  {{"listener", name_}, {"error", ErrnoText(errno)}, {"suppressed", suppressed}});
        }
        epoll_event ev{.events = 0, .data = {.u64 = kListenTag}};
        epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev);
        absl::MutexLock lock(&mu_);
        listen_paused_ = true;
        return;
      }
      LogWarn("grpc", "accept failed", {{"listener", name_}, {"error", ErrnoText(errno)}});
      return;
    }
    std::string client = ClientAddress(peer);
    ConnectionLimits::Verdict verdict = limits_.TryAdmit(client);
    if (verdict != ConnectionLimits::Verdict::kAdmitted) {
      CloseWithReset(fd);
      absl::string_view reason = ConnectionLimits::ReasonOf(verdict);
      RefusedCounter(reason).Increment();
      if (int64_t suppressed = 0; RefusalLog().Admit(&suppressed)) {
        LogWarn("grpc", "connection refused: limit reached",
                {{"listener", name_},
                 {"client", client},
                 {"reason", reason},
                 {"client_connections", limits_.of(client)},
                 {"total_connections", limits_.total()},
                 {"suppressed", suppressed}});
      }
      continue;
    }
    int watch = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (watch < 0) {
      limits_.Release(client);
      CloseWithReset(fd);
      RefusedCounter("fds").Increment();
      continue;
    }
    // No read interest: only EPOLLHUP / EPOLLERR, which epoll always reports.
    epoll_event ev{.events = 0, .data = {.u64 = static_cast<uint64_t>(watch)}};
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, watch, &ev);
    {
      absl::MutexLock lock(&mu_);
      watched_.emplace(watch, client);
    }
    OpenGauge(name_).Add(1);
    // gRPC's own accept path sets TCP_NODELAY; the external path does not.
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters params;
    params.listener_fd = listen_fd_;
    params.fd = fd;
    acceptor_->HandleNewConnection(&params);
  }
}

void GrpcListener::Closed(int watch_fd) {
  std::string client;
  {
    absl::MutexLock lock(&mu_);
    auto it = watched_.find(watch_fd);
    if (it == watched_.end()) return;
    client = std::move(it->second);
    watched_.erase(it);
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, watch_fd, nullptr);
  close(watch_fd);
  limits_.Release(client);
  OpenGauge(name_).Add(-1);
}

}  // namespace clusterd::server
