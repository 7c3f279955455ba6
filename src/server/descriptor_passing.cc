#include "server/descriptor_passing.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "net/socket_address.h"

namespace gleaner::server {
namespace {

constexpr size_t kMaxAnswerBytes = 1 << 20;
constexpr int kAnswerWithinMs = 10'000;

// One descriptor's room in a message's control data, aligned as cmsghdr
// requires.
union DescriptorControl {
  char bytes[CMSG_SPACE(sizeof(int))];
  cmsghdr align;
};

}  // namespace

core::Result<size_t> SendWithDescriptor(int socket, std::string_view data, int fd) {
  DescriptorControl control{};
  iovec iov{const_cast<char*>(data.data()), data.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.bytes;
  msg.msg_controllen = sizeof control.bytes;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t n;
  while ((n = sendmsg(socket, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (n <= 0)
    return core::Unavailable(std::string("sending a descriptor: ") + std::strerror(errno));
  return static_cast<size_t>(n);
}

core::Result<AnswerWithDescriptor> CallForDescriptor(const std::string& socket_path,
                                                     const std::string& method,
                                                     const std::string& path) {
  GLEANER_ASSIGN_OR_RETURN(const sockaddr_un address, net::UnixAddress(socket_path));
  const int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return core::Unavailable(std::string("socket: ") + std::strerror(errno));
  AnswerWithDescriptor answer;
  const auto fail = [&](const std::string& what) {
    close(sock);
    if (answer.fd >= 0) close(answer.fd);
    return core::Unavailable(what + " (" + socket_path + ")");
  };
  if (connect(sock, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return fail(std::string("cannot reach gleaner: ") + std::strerror(errno));
  }
  const std::string request = method + " " + path +
                              " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n"
                              "Connection: close\r\n\r\n";
  if (send(sock, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return fail(std::string("writing to gleaner: ") + std::strerror(errno));
  }
  // The whole answer, to the end of the connection.
  std::string text;
  for (;;) {
    pollfd p{sock, POLLIN, 0};
    const int ready = poll(&p, 1, kAnswerWithinMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return fail("gleaner did not answer in 10 s");
    char buf[4096];
    DescriptorControl control{};
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof control.bytes;
    const ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::string("reading gleaner's answer: ") + std::strerror(errno));
    if (msg.msg_flags & MSG_CTRUNC) {
      return fail(
          "the answer's descriptor was lost: this process has no room for another "
          "(too many open files?)");
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        if (answer.fd < 0) {
          answer.fd = fd;
        } else {
          close(fd);  // one is all an answer may carry
        }
      }
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxAnswerBytes) return fail("gleaner's answer is too large");
  }
  close(sock);
  // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody"
  const size_t head_end = text.find("\r\n\r\n");
  if (text.rfind("HTTP/1.1 ", 0) != 0 || text.size() < 12 || head_end == std::string::npos) {
    if (answer.fd >= 0) close(answer.fd);
    return core::Unavailable("gleaner's answer is not HTTP (" + socket_path + ")");
  }
  answer.status = std::atoi(text.c_str() + 9);
  answer.body = text.substr(head_end + 4);
  return answer;
}

}  // namespace gleaner::server
