#include "webhook/serving/server_flags.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "webhook/serving/duration.h"

namespace aiadmit {

namespace {

using std::chrono::milliseconds;

// A flag sets a field of the options or of their transport limits.
template <class T>
struct Flag {
  const char* name;
  const char* help;
  T minimum;
  T maximum;
  T ServerOptions::*direct;
  T TransportLimits::*limit;

  T& in(ServerOptions& options) const {
    return direct != nullptr ? options.*direct : options.limits.*limit;
  }
  const T& in(const ServerOptions& options) const {
    return direct != nullptr ? options.*direct : options.limits.*limit;
  }
};
using SizeFlag = Flag<size_t>;
using DurationFlag = Flag<milliseconds>;

constexpr size_t kMiB = 1024 * 1024;

const SizeFlag kSizeFlags[] = {
    {"--max-connections", "open connections; past it the longest-idle one is closed", 4, 1 << 20,
     nullptr, &TransportLimits::maxConnections},
    {"--max-header-bytes", "request line and headers, bytes (431 past it)", 1024, 1 * kMiB, nullptr,
     &TransportLimits::maxHeaderBytes},
    {"--max-request-line-bytes", "request line, bytes (414 past it)", 256, 1 * kMiB, nullptr,
     &TransportLimits::maxRequestLineBytes},
    {"--max-body-bytes", "request body, bytes (413 before it is read)", 1024, 1024 * kMiB, nullptr,
     &TransportLimits::maxBodyBytes},
    {"--max-inflight-body-bytes",
     "bodies of all requests in flight, bytes, as they arrive (503 past it)", 1024,
     64 * 1024 * kMiB, nullptr, &TransportLimits::maxInflightBodyBytes},
    {"--io-threads", "I/O threads (0: one per usable core)", 0, 256, &ServerOptions::ioThreads,
     nullptr},
};

const DurationFlag kDurationFlags[] = {
    {"--handshake-timeout", "TLS handshake deadline", milliseconds(100), milliseconds(3600000),
     nullptr, &TransportLimits::handshakeTimeout},
    {"--header-timeout", "request headers deadline, from their first byte (408)", milliseconds(100),
     milliseconds(3600000), nullptr, &TransportLimits::headerTimeout},
    {"--body-timeout", "request deadline when it has no ?timeout= (408)", milliseconds(100),
     milliseconds(3600000), nullptr, &TransportLimits::bodyTimeout},
    {"--max-request-timeout", "ceiling on a request's ?timeout=", milliseconds(100),
     milliseconds(3600000), nullptr, &TransportLimits::maxRequestTimeout},
    {"--write-timeout", "deadline for the client to take an answer", milliseconds(100),
     milliseconds(3600000), nullptr, &TransportLimits::writeTimeout},
    {"--idle-timeout", "keep-alive connection idle timeout", milliseconds(100),
     milliseconds(3600000), nullptr, &TransportLimits::idleTimeout},
    {"--shutdown-delay", "from SIGTERM to closing the listener", milliseconds(0),
     milliseconds(3600000), &ServerOptions::shutdownDelay, nullptr},
};

constexpr const char* kMetricsListenFlag = "--metrics-listen";
constexpr const char* kMetricsListenHelp =
    "GET /metrics, /healthz and /readyz over plain HTTP on this address (\"off\": none)";

// "--flag value" or "--flag=value"; nullopt when args[i] is another flag.
std::optional<std::string> valueOf(const std::vector<std::string>& args, size_t& i,
                                   const std::string& flag, bool* missing) {
  const std::string& arg = args[i];
  if (arg == flag) {
    if (i + 1 >= args.size()) {
      *missing = true;
      return std::string();
    }
    return args[++i];
  }
  if (arg.rfind(flag + "=", 0) == 0) return arg.substr(flag.size() + 1);
  return std::nullopt;
}

std::string describeSize(size_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes);
}

std::string describeDuration(milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + "s";
  return std::to_string(duration.count()) + "ms";
}

std::string describeDefault(const SizeFlag& flag, const ServerOptions& defaults) {
  const size_t value = flag.in(defaults);
  return std::string_view(flag.name).find("bytes") != std::string_view::npos
             ? describeSize(value)
             : std::to_string(value);
}

std::string describeDefault(const DurationFlag& flag, const ServerOptions& defaults) {
  return describeDuration(flag.in(defaults));
}

std::string describeMetricsListen(const ServerOptions& defaults) {
  if (defaults.metricsPort < 0) return "off";
  return hostPort(defaults.metricsHost, defaults.metricsPort);
}

}  // namespace

bool parseHostPort(const std::string& text, std::string& host, int& port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string digits = text.substr(colon + 1);
  int parsed = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || parsed < 0 ||
      parsed > 65535) {
    return false;
  }
  host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "::";
  port = parsed;
  return true;
}

std::string hostPort(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

FlagResult takeServerFlag(const std::vector<std::string>& args, size_t& i, ServerOptions& options,
                          std::string* error) {
  bool missing = false;
  if (const auto value = valueOf(args, i, kMetricsListenFlag, &missing)) {
    if (!missing && *value == "off") {
      options.metricsPort = -1;
      return FlagResult::Taken;
    }
    if (missing || !parseHostPort(*value, options.metricsHost, options.metricsPort)) {
      *error = std::string(kMetricsListenFlag) + ": HOST:PORT (\"[::]:8080\") or off";
      return FlagResult::Invalid;
    }
    return FlagResult::Taken;
  }
  for (const SizeFlag& flag : kSizeFlags) {
    const auto value = valueOf(args, i, flag.name, &missing);
    if (!value) continue;
    size_t parsed = 0;
    const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
    if (missing || ec != std::errc() || end != value->data() + value->size() ||
        parsed < flag.minimum || parsed > flag.maximum) {
      *error = std::string(flag.name) + ": a whole number from " + std::to_string(flag.minimum) +
               " to " + std::to_string(flag.maximum);
      return FlagResult::Invalid;
    }
    flag.in(options) = parsed;
    return FlagResult::Taken;
  }
  for (const DurationFlag& flag : kDurationFlags) {
    const auto value = valueOf(args, i, flag.name, &missing);
    if (!value) continue;
    const auto parsed = missing ? std::nullopt : parseDuration(*value, flag.maximum, true);
    if (!parsed || *parsed < flag.minimum || *parsed >= flag.maximum) {
      *error = std::string(flag.name) + ": a duration (\"10s\", \"500ms\", or seconds) from " +
               describeDuration(flag.minimum) + " to under " + describeDuration(flag.maximum);
      return FlagResult::Invalid;
    }
    flag.in(options) = *parsed;
    return FlagResult::Taken;
  }
  return FlagResult::NotMine;
}

std::string serverFlagsHelp() {
  const ServerOptions defaults;
  std::string out;
  const auto line = [&out](const std::string& flag, const std::string& help) {
    out += "  " + flag + std::string(flag.size() < 32 ? 32 - flag.size() : 1, ' ') + help + "\n";
  };
  for (const SizeFlag& flag : kSizeFlags) {
    line(std::string(flag.name) + " N",
         std::string(flag.help) + " (default " + describeDefault(flag, defaults) + ")");
  }
  for (const DurationFlag& flag : kDurationFlags) {
    line(std::string(flag.name) + " DUR",
         std::string(flag.help) + " (default " + describeDefault(flag, defaults) + ")");
  }
  line(std::string(kMetricsListenFlag) + " HOST:PORT",
       std::string(kMetricsListenHelp) + " (default " + describeMetricsListen(defaults) + ")");
  return out;
}

std::vector<ServerFlagDefault> serverFlagDefaults() {
  const ServerOptions defaults;
  std::vector<ServerFlagDefault> out;
  for (const SizeFlag& flag : kSizeFlags)
    out.push_back({flag.name, describeDefault(flag, defaults)});
  for (const DurationFlag& flag : kDurationFlags) {
    out.push_back({flag.name, describeDefault(flag, defaults)});
  }
  out.push_back({kMetricsListenFlag, describeMetricsListen(defaults)});
  return out;
}

}  // namespace aiadmit
