// The flags of `serve` that size the transport: limits, deadlines, threads.
// Durations take Go's form ("500ms", "10s", "1m") or a number of seconds.
#pragma once

#include <string>
#include <vector>

#include "webhook/serving/server.h"

namespace aiadmit {

enum class FlagResult { NotMine, Taken, Invalid };

// Takes args[i] (and its value) when it is one of these flags; on Invalid,
// `error` says why.
FlagResult takeServerFlag(const std::vector<std::string>& args, size_t& i, ServerOptions& options,
                          std::string* error);

// "HOST:PORT", "[::]:8443", ":9090" (every address): false when it is not
// one, or the port is not 0-65535. An IPv6 host comes without its brackets.
bool parseHostPort(const std::string& text, std::string& host, int& port);
// The reverse: "[::]:8443", "0.0.0.0:8443", an IPv6 address in brackets.
std::string hostPort(const std::string& host, int port);

// The help lines of these flags, with their defaults.
std::string serverFlagsHelp();

// A flag of these with its default as the help and the README write it
// ("8 MiB", "10s", "4096"), taken from ServerOptions and its TransportLimits.
struct ServerFlagDefault {
  std::string flag;
  std::string value;
};
std::vector<ServerFlagDefault> serverFlagDefaults();

}  // namespace aiadmit
