#include "webhook/serving/server.h"

#include <httplib.h>
#include <malloc.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"
#include "webhook/serving/connection_threads.h"
#include "webhook/serving/logging.h"
#include "webhook/serving/metrics.h"
#include "webhook/serving/profile_watch.h"
#include "webhook/serving/tls.h"

namespace aiadmit {

namespace {

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Content-Length as a number; 0 when absent or not a number.
size_t contentLength(const httplib::Request& request) {
  const std::string text = request.get_header_value("Content-Length");
  size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || value > (SIZE_MAX - 9) / 10) return c < '0' || c > '9' ? 0 : SIZE_MAX;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  return value;
}

// Go durations as the API server writes ?timeout= ("10s", "500ms", "1m30s").
std::optional<std::chrono::milliseconds> parseGoDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    if (start == i) return std::nullopt;
    const double number = std::strtod(std::string(text.substr(start, i - start)).c_str(), nullptr);
    start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const std::string_view unit = text.substr(start, i - start);
    if (unit == "ms") {
      total += number;
    } else if (unit == "s") {
      total += number * 1000;
    } else if (unit == "m") {
      total += number * 60000;
    } else if (unit == "h") {
      total += number * 3600000;
    } else {
      return std::nullopt;
    }
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total));
}

void answer(httplib::Response& response, const AdmissionOutcome& outcome, bool closeConnection) {
  response.status = outcome.httpStatus();
  response.set_content(encodeAdmissionResponse("", outcome), "application/json");
  if (closeConnection) response.set_header("Connection", "close");
}

class AdmissionHandler {
 public:
  AdmissionHandler(const Engine& engine, Metrics& metrics, const ServerOptions& options,
                   Endpoint endpoint)
      : engine_(engine), metrics_(metrics), options_(options), endpoint_(endpoint) {}

  void operator()(const httplib::Request& request, httplib::Response& response,
                  const httplib::ContentReader& reader) const {
    const auto started = std::chrono::steady_clock::now();
    // Answer before the API server gives up on us: its ?timeout=, at most ours.
    auto budget = std::chrono::milliseconds(options_.requestDeadlineSeconds * 1000);
    if (auto timeout = parseGoDuration(request.get_param_value("timeout"))) {
      budget = std::min(budget, *timeout);
    }
    const auto deadline = started + budget;

    std::string body;
    const size_t declared = contentLength(request);
    body.reserve(std::min(declared, options_.maxBodyBytes));
    bool tooLarge = false;
    bool late = false;
    const bool complete = reader([&](const char* data, size_t length) {
      if (body.size() + length > options_.maxBodyBytes) {
        tooLarge = true;
        return false;
      }
      body.append(data, length);
      if (std::chrono::steady_clock::now() > deadline) {
        late = true;
        return false;
      }
      return true;
    });
    if (tooLarge) {
      answer(response,
             AdmissionOutcome::badRequest("request body is larger than " +
                                          std::to_string(options_.maxBodyBytes) + " bytes"),
             true);
      response.status = 413;
      return;
    }
    if (late || !complete) {
      answer(response,
             AdmissionOutcome::badRequest(late ? "request body did not arrive within the deadline"
                                               : "request body is incomplete"),
             true);
      return;
    }

    const std::string contentType = request.get_header_value("Content-Type");
    if (contentType.rfind("application/json", 0) != 0) {
      answer(response,
             AdmissionOutcome::badRequest("Content-Type must be application/json, got \"" +
                                          contentType.substr(0, 64) + "\""),
             false);
      return;
    }

    const ReviewAnswer result = answerReview(engine_, endpoint_, body);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    response.status = result.httpStatus;
    response.set_content(result.body, "application/json");
    metrics_.recordRequest(endpoint_, result.workloadKind, result.evaluation.workloadClass,
                           result.decision, seconds);
    for (const Violation& v : result.evaluation.denials) {
      metrics_.recordRuleHit(v.rule, RuleAction::Deny);
    }
    for (const Violation& v : result.evaluation.warnings) {
      metrics_.recordRuleHit(v.rule, RuleAction::Warn);
    }
    for (const Violation& v : result.evaluation.audited) {
      metrics_.recordRuleHit(v.rule, RuleAction::Audit);
    }
    logRequest(endpoint_, result, seconds);
  }

 private:
  const Engine& engine_;
  Metrics& metrics_;
  const ServerOptions& options_;
  Endpoint endpoint_;
};

// cpp-httplib keeps an idle keep-alive connection (and its thread) until the
// keep-alive timeout, which is longer than the API server's idle timeout so
// that we never close a connection it is about to reuse. At shutdown that
// would hold the process for minutes. Once the listener is closed and the
// drain delay is over, half-close every connection socket for reading: idle
// ones end at once, and a request being answered can still write its answer.
void endIdleConnections() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) {
    const int fd = std::atoi(it->path().filename().c_str());
    struct stat info {};
    if (fstat(fd, &info) == 0 && S_ISSOCK(info.st_mode)) shutdown(fd, SHUT_RD);
  }
}

}  // namespace

int runServer(const ServerOptions& options) {
  // Signals are taken by a dedicated thread; block them before any other starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Connection threads would each get a malloc arena; two keep memory flat.
  mallopt(M_ARENA_MAX, 2);

  Metrics metrics;
  // Watched from before the first load, so that a change during start-up is
  // not missed.
  ProfileWatch profileWatch(options.profilesDir);
  ProfileLoadResult loaded = loadProfileDirectory(options.profilesDir);
  if (!loaded.ok()) {
    for (const ProfileError& error : loaded.errors) {
      logError("invalid profile", {{"error", error.format()}});
    }
    logError("no usable profiles; not starting", {{"dir", options.profilesDir}});
    return 1;
  }
  metrics.recordProfileReload(true, unixNow());
  metrics.setProfilesLoaded(loaded.set->profiles().size());
  logInfo("profiles loaded", {{"dir", options.profilesDir},
                              {"profiles", std::to_string(loaded.set->profiles().size())}});
  Engine engine(loaded.set, options.enforcement);
  metrics.setEnforcement(options.enforcement);

  CertificateStore certificates(options.certFile, options.keyFile);
  std::string tlsError;
  if (!certificates.load(&tlsError)) {
    logError("cannot load TLS certificate; not starting", {{"error", tlsError}});
    return 1;
  }
  metrics.setCertificateExpiry(certificates.expiry());

  httplib::SSLServer server([&](SSL_CTX& context) {
    if (certificates.configure(context, &tlsError)) return true;
    logError("TLS setup failed", {{"error", tlsError}});
    return false;
  });
  if (!server.is_valid()) return 1;

  std::atomic<bool> ready{true};
  const size_t maxConnections = options.maxConnections;
  server.new_task_queue = [maxConnections] {
    return new ConnectionThreads(maxConnections, 256 * 1024, 32);
  };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(std::numeric_limits<size_t>::max());
  server.set_keep_alive_timeout(options.keepAliveSeconds);
  server.set_read_timeout(options.readTimeoutSeconds, 0);
  server.set_write_timeout(options.writeTimeoutSeconds, 0);
  server.set_payload_max_length(options.maxBodyBytes);

  // A declared body over the limit is refused before a byte of it is read.
  server.set_pre_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
    if (contentLength(req) <= options.maxBodyBytes) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    answer(res,
           AdmissionOutcome::badRequest("request body is larger than " +
                                        std::to_string(options.maxBodyBytes) + " bytes"),
           true);
    res.status = 413;
    return httplib::Server::HandlerResponse::Handled;
  });
  server.Post("/mutate", AdmissionHandler(engine, metrics, options, Endpoint::Mutate));
  server.Post("/validate", AdmissionHandler(engine, metrics, options, Endpoint::Validate));
  for (const char* path : {"/mutate", "/validate"}) {
    const auto notAllowed = [](const httplib::Request& req, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "POST");
      res.set_content(encodeAdmissionResponse(
                          "", AdmissionOutcome::badRequest(req.method + " is not allowed; POST an "
                                                                        "AdmissionReview")),
                      "application/json");
    };
    server.Get(path, notAllowed);
    server.Put(path, notAllowed);
    server.Patch(path, notAllowed);
    server.Delete(path, notAllowed);
  }
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server.Get("/readyz", [&](const httplib::Request&, httplib::Response& res) {
    if (ready.load()) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content("shutting down\n", "text/plain");
    }
  });
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.render(), "text/plain; version=0.0.4");
  });
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        const AdmissionOutcome outcome = AdmissionOutcome::internalError("internal error");
        res.status = outcome.httpStatus();
        res.set_content(encodeAdmissionResponse("", outcome), "application/json");
      });

  int port = options.port;
  if (port == 0) {
    port = server.bind_to_any_port(options.host);
  } else if (!server.bind_to_port(options.host, port)) {
    port = -1;
  }
  if (port < 0) {
    logError("cannot listen", {{"address", options.host + ":" + std::to_string(options.port)}});
    return 1;
  }

  // Profiles and certificate are polled: a ConfigMap or Secret volume swaps
  // its ..data symlink, which inotify on the files would not see reliably.
  std::mutex stopMutex;
  std::condition_variable stopSignal;
  bool stopping = false;
  std::thread watcher([&] {
    std::unique_lock<std::mutex> lock(stopMutex);
    while (!stopSignal.wait_for(lock, std::chrono::milliseconds(options.reloadIntervalMillis),
                                [&] { return stopping; })) {
      if (profileWatch.changed()) {
        ProfileLoadResult reloaded = loadProfileDirectory(options.profilesDir);
        if (reloaded.ok()) {
          const std::string count = std::to_string(reloaded.set->profiles().size());
          metrics.setProfilesLoaded(reloaded.set->profiles().size());
          engine.replaceProfiles(std::move(reloaded.set));
          metrics.recordProfileReload(true, unixNow());
          logLifecycle("profiles reloaded", {{"dir", options.profilesDir}, {"profiles", count}});
        } else {
          metrics.recordProfileReload(false, unixNow());
          for (const ProfileError& error : reloaded.errors) {
            logError("invalid profile", {{"error", error.format()}});
          }
          logError(
              "profile reload refused; keeping the last good set",
              {{"dir", options.profilesDir}, {"errors", std::to_string(reloaded.errors.size())}});
        }
      }
      // A burst of large objects leaves freed pool chunks in malloc's
      // arenas; hand them back so that resident memory follows the load.
      malloc_trim(0);
      std::string error;
      if (certificates.reloadIfChanged(&error)) {
        metrics.setCertificateExpiry(certificates.expiry());
        logLifecycle("certificate reloaded", {{"file", options.certFile}});
      } else if (!error.empty()) {
        logError("certificate reload failed; serving the previous one", {{"error", error}});
      }
    }
  });

  std::thread signalThread([&] {
    int received = 0;
    sigwait(&signals, &received);
    ready.store(false);
    logLifecycle("shutting down", {{"signal", received == SIGTERM ? "SIGTERM" : "SIGINT"}});
    std::unique_lock<std::mutex> lock(stopMutex);
    stopSignal.wait_for(lock, std::chrono::seconds(options.shutdownDelaySeconds),
                        [&] { return stopping; });
    lock.unlock();
    server.stop();
    endIdleConnections();
  });

  const std::string address = options.host + ":" + std::to_string(port);
  logLifecycle("listening", {{"address", address}, {"profiles", options.profilesDir}});
  const bool clean = server.listen_after_bind();

  {
    std::lock_guard<std::mutex> lock(stopMutex);
    stopping = true;
  }
  stopSignal.notify_all();
  watcher.join();
  if (signalThread.joinable()) {
    // The server stopped on its own (not by a signal): wake the signal thread.
    pthread_kill(signalThread.native_handle(), SIGTERM);
    signalThread.join();
  }
  logLifecycle("stopped");
  return clean ? 0 : 1;
}

}  // namespace aiadmit
