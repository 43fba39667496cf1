// Where serve listens: by default [::], one dual-stack socket that IPv6-only
// clusters reach and IPv4 clients too; the address it logs is one --listen
// takes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/support/test_support.h"

namespace aiadmit {
namespace {

using testing::WebhookServer;

// Whether a TCP connection to `address` (an IPv6 literal) on `port` opens.
bool connectsOverIpv6(const char* address, int port) {
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 target{};
  target.sin6_family = AF_INET6;
  target.sin6_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET6, address, &target.sin6_addr);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof target) == 0;
  close(fd);
  return connected;
}

bool hostHasIpv6Loopback() {
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 any{};
  any.sin6_family = AF_INET6;
  any.sin6_addr = in6addr_loopback;
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) == 0;
  close(fd);
  return bound;
}

TEST(Listening, TheDualStackAddressServesIpv4AndIpv6Clients) {
  if (!hostHasIpv6Loopback()) GTEST_SKIP() << "this host has no IPv6 loopback";
  WebhookServer::Options options;
  options.extraArgs = {"--listen=[::]:0"};
  WebhookServer server(options);
  EXPECT_TRUE(server.waitForOutput("\"address\":\"[::]:", 5)) << server.output();
  EXPECT_EQ(server.get("/healthz").status, 200) << "over 127.0.0.1";
  EXPECT_TRUE(connectsOverIpv6("::1", server.port()));
  EXPECT_TRUE(connectsOverIpv6("::ffff:127.0.0.1", server.port()));
}

TEST(Listening, AnIpv4AddressServesIpv4Alone) {
  WebhookServer server;  // --listen=127.0.0.1:0
  EXPECT_EQ(server.get("/healthz").status, 200);
  if (hostHasIpv6Loopback()) {
    EXPECT_FALSE(connectsOverIpv6("::1", server.port()));
  }
}

}  // namespace
}  // namespace aiadmit
