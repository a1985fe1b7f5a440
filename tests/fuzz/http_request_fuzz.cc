// Feeds the request target of an HTTP request (path and query, as an operator's tool or a
// browser sends it) to clusterd's HTTP server: cpp-httplib decodes the path and the query, the
// routes of server/http_server.cc match it, and their handlers answer from the daemon's store,
// job registry, fault centre, recovery and slow-node views (`?namespace=`, `?labelSelector=`,
// `?node=`, `?job=`). The input is sent as `GET <input> HTTP/1.1` over loopback; the answer
// must be a complete HTTP response (a crash or a hang of the daemon fails the run).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_daemon.h"
#include "fuzz_util.h"

namespace {

// One request on a fresh connection, the write side closed after it, the whole answer read.
std::string Exchange(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    size_t sent = 0;
    while (sent < request.size()) {
      ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    shutdown(fd, SHUT_WR);
    char buf[8192];
    for (;;) {
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          std::fprintf(stderr, "http_request_fuzz: no answer within 10 s: the server hangs\n");
          std::abort();
        }
        break;
      }
      answer.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return answer;
}

}  // namespace

// The daemon starts before the first input (and turns the log off).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)clusterd::fuzz::Daemon();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const clusterd::fuzz::DaemonAddresses& daemon = clusterd::fuzz::Daemon();
  std::string request = "GET ";
  request.append(clusterd::fuzz::AsText(data, size));
  request.append(" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  (void)Exchange(daemon.http_port, request);
  return 0;
}
