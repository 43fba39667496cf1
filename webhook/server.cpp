#include "webhook/server.h"

#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "webhook/engine.h"
#include "webhook/logging.h"
#include "webhook/metrics.h"
#include "webhook/profile_loader.h"
#include "webhook/profile_watch.h"
#include "webhook/tls.h"

namespace aiadmit {

namespace {

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void recordRules(Metrics& metrics, const Evaluation& evaluation) {
  for (const Violation& v : evaluation.denials) metrics.recordRuleHit(v.rule, RuleAction::Deny);
  for (const Violation& v : evaluation.warnings) metrics.recordRuleHit(v.rule, RuleAction::Warn);
}

void handleAdmission(const Engine& engine, Metrics& metrics, Endpoint endpoint,
                     const httplib::Request& request, httplib::Response& response) {
  const auto started = std::chrono::steady_clock::now();
  ReviewAnswer answer;
  const std::string contentType = request.get_header_value("Content-Type");
  if (contentType.rfind("application/json", 0) != 0) {
    const AdmissionOutcome outcome = AdmissionOutcome::badRequest(
        "Content-Type must be application/json, got \"" + contentType.substr(0, 64) + "\"");
    answer.decision = outcome.decision();
    answer.httpStatus = outcome.httpStatus();
    answer.body = encodeAdmissionResponse("", outcome);
  } else {
    answer = answerReview(engine, endpoint, request.body);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  response.status = answer.httpStatus;
  response.set_content(answer.body, "application/json");
  metrics.recordRequest(endpoint, answer.workloadKind,
                        answer.evaluation.workloadClass, answer.decision, seconds);
  recordRules(metrics, answer.evaluation);
  logRequest(endpoint, answer, seconds);
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
  Engine engine(loaded.set);

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
  const size_t workers = options.workerThreads;
  server.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(std::numeric_limits<size_t>::max());
  server.set_keep_alive_timeout(options.keepAliveSeconds);
  server.set_read_timeout(options.readTimeoutSeconds, 0);
  server.set_write_timeout(options.writeTimeoutSeconds, 0);
  server.set_payload_max_length(options.maxBodyBytes);

  server.Post("/mutate", [&](const httplib::Request& req, httplib::Response& res) {
    handleAdmission(engine, metrics, Endpoint::Mutate, req, res);
  });
  server.Post("/validate", [&](const httplib::Request& req, httplib::Response& res) {
    handleAdmission(engine, metrics, Endpoint::Validate, req, res);
  });
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
          logInfo("profiles reloaded", {{"dir", options.profilesDir}, {"profiles", count}});
        } else {
          metrics.recordProfileReload(false, unixNow());
          for (const ProfileError& error : reloaded.errors) {
            logError("invalid profile", {{"error", error.format()}});
          }
          logError("profile reload refused; keeping the last good set",
                   {{"dir", options.profilesDir},
                    {"errors", std::to_string(reloaded.errors.size())}});
        }
      }
      std::string error;
      if (certificates.reloadIfChanged(&error)) {
        metrics.setCertificateExpiry(certificates.expiry());
        logInfo("certificate reloaded", {{"file", options.certFile}});
      } else if (!error.empty()) {
        logError("certificate reload failed; serving the previous one", {{"error", error}});
      }
    }
  });

  std::thread signalThread([&] {
    int received = 0;
    sigwait(&signals, &received);
    ready.store(false);
    logInfo("shutting down", {{"signal", received == SIGTERM ? "SIGTERM" : "SIGINT"}});
    std::unique_lock<std::mutex> lock(stopMutex);
    stopSignal.wait_for(lock, std::chrono::seconds(options.shutdownDelaySeconds),
                        [&] { return stopping; });
    lock.unlock();
    server.stop();
  });

  const std::string address = options.host + ":" + std::to_string(port);
  logInfo("listening", {{"address", address}, {"profiles", options.profilesDir}});
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
  logInfo("stopped");
  return clean ? 0 : 1;
}

}  // namespace aiadmit
