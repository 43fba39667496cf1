#include "webhook/serving/server.h"

#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "mutators/mutator.h"
#include "webhook/engine/engine.h"
#include "webhook/engine/profiles_review.h"
#include "webhook/policy/profile_loader.h"
#include "webhook/serving/background_worker.h"
#include "webhook/serving/cluster_view_feed.h"
#include "webhook/serving/http_transport.h"
#include "webhook/serving/logging.h"
#include "webhook/serving/metrics.h"
#include "webhook/serving/metrics_listener.h"
#include "webhook/serving/profile_watch.h"
#include "webhook/serving/server_flags.h"
#include "webhook/serving/tls.h"

namespace aiadmit {

namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr int kHandledSignals[] = {SIGTERM, SIGINT,  SIGQUIT, SIGHUP,
                                   SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM};

// The cores this process may run on (a cpuset narrows them; a CPU quota does
// not, which is what --io-threads is for).
size_t usableCores() {
  cpu_set_t cores;
  CPU_ZERO(&cores);
  if (sched_getaffinity(0, sizeof cores, &cores) == 0 && CPU_COUNT(&cores) > 0) {
    return static_cast<size_t>(CPU_COUNT(&cores));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// "SIGTERM", as the logs have always named it.
std::string signalName(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation != nullptr ? std::string("SIG") + abbreviation : std::to_string(signal);
}

// The profiles ConfigMap's own check (webhook/engine/profiles_review.h), run
// on a worker of its own: at most this many queued or running, each answered
// within this wait (the webhook's timeout is 5 s).
constexpr std::string_view kProfilesPath = "/validate-profiles";
constexpr size_t kProfilesReviewsPending = 2;
constexpr std::chrono::milliseconds kProfilesReviewWait{4000};
// A ConfigMap holds at most 1 MiB; an UPDATE's review carries it twice, as
// JSON. A larger body is no review of one, and its YAML would keep the
// worker for seconds.
constexpr size_t kMaxProfilesReviewBytes = 4 * 1024 * 1024;

bool isAdmissionPath(std::string_view path) {
  return admissionRoute(path).has_value() || path == kProfilesPath;
}

// How long an answer waits for the API to confirm what the cluster view
// lacks before the answer from the view alone goes out; well within the
// webhook's timeout (3 s and more).
constexpr std::chrono::milliseconds kConfirmWait{1000};
// How long a controller's Pod waits for the claim templates of its workload
// to be created, within kConfirmWait: Helm creates the kinds it does not know
// after the workload, and a Pod placed before they exist is placed nowhere.
constexpr std::chrono::milliseconds kClaimPatience{750};

// A review's decision takes time linear in its body, about 3 ms per MiB: a
// body up to this size is decided on its I/O thread at once (a fraction of
// a millisecond, no hand-over), a larger one on the review workers, so that
// no review holds an I/O thread, and the connections it serves, for long.
constexpr size_t kDecidedInPlaceBytes = 64 * 1024;
// A review on the workers is answered by its request's own deadline (the
// API server's ?timeout=), which comes first.
constexpr std::chrono::hours kWorkerWait{1};

// The endpoints. Runs on the I/O threads; the engine never blocks.
class Endpoints final : public HttpApplication {
 public:
  // `lookup` (null without a live cluster view) confirms absences with the
  // API; `profilesWorker` checks profiles ConfigMaps off the I/O threads.
  // With `authenticatedCallers` (--client-ca), every path but the probes
  // needs a caller with a verified client certificate.
  Endpoints(const Engine& engine, Metrics& metrics, const std::atomic<bool>& ready,
            ApiLookup* lookup, BackgroundWorker& profilesWorker, BackgroundWorker& reviewWorkers,
            bool authenticatedCallers)
      : engine_(engine),
        metrics_(metrics),
        ready_(ready),
        lookup_(lookup),
        profilesWorker_(profilesWorker),
        reviewWorkers_(reviewWorkers),
        authenticatedCallers_(authenticatedCallers) {}

  // The kubelet's probes carry no certificate; everything else, the reviews
  // and what the cluster view answers through them, goes only to callers
  // of the client CA (/metrics has its plain listener, --metrics-listen).
  bool needsAuthenticatedCaller(std::string_view path) const override {
    return authenticatedCallers_ && path != "/healthz" && path != "/readyz";
  }

  void handle(const HttpRequest& request, HttpAnswer& answer) override {
    if (isAdmissionPath(request.path)) {
      if (request.method != "POST") {
        answer.allow = "POST";
        return refuse(request.path, 405,
                      std::string(request.method) + " is not allowed; POST an AdmissionReview",
                      answer);
      }
      if (!hasJsonBody(request, answer)) return;
      if (request.path == kProfilesPath) return reviewProfiles(request, answer);
      const AdmissionRoute route = *admissionRoute(request.path);
      if (request.body.size() > kDecidedInPlaceBytes) return admitOnWorker(route, request, answer);
      return admit(route, request.body, request.started, answer);
    }
    if (answerOperations(request, metrics_, ready_, answer)) return;
    answer.contentType = "text/plain";
    answer.status = 404;
    answer.body = "not found\n";
  }

  void refuse(std::string_view path, int status, const std::string& message,
              HttpAnswer& answer) override {
    answer.status = status;
    if (isAdmissionPath(path) || path.empty()) {
      // The API server shows the message of an AdmissionReview it can read.
      answer.contentType = "application/json";
      answer.body =
          encodeAdmissionResponse("", AdmissionOutcome::refusedByTransport(status, message));
    } else {
      answer.contentType = "text/plain";
      answer.body = message + "\n";
    }
  }

 private:
  // False, with the 400 in `answer`, when the body is not said to be JSON.
  bool hasJsonBody(const HttpRequest& request, HttpAnswer& answer) {
    if (request.contentType.rfind("application/json", 0) == 0) return true;
    refuse(request.path, 400,
           "Content-Type must be application/json, got \"" +
               std::string(request.contentType.substr(0, 64)) + "\"",
           answer);
    return false;
  }

  // Loading YAML takes milliseconds and more: it is done on the profiles
  // worker, and the answer comes later. Should the worker be busy, or not
  // finish within kProfilesReviewWait, the answer is a 503, which the API
  // server takes as the webhook failing: its failurePolicy (Ignore) stores
  // the ConfigMap, and the replicas check it as they reload.
  void reviewProfiles(const HttpRequest& request, HttpAnswer& answer) {
    if (request.body.size() > kMaxProfilesReviewBytes) {
      return refuse(request.path, 413,
                    "a review of a profiles ConfigMap (at most 1 MiB) is at most 4 MiB", answer);
    }
    refuse(request.path, 503, "aiadmit did not finish checking the profiles in time", answer);
    answer.waitAtMost = kProfilesReviewWait;
    answer.later = [this, body = std::string(request.body),
                    started = request.started](AnswerLater reply) mutable {
      auto job = [this, body = std::move(body), started, reply] {
        ReviewAnswer result = answerProfilesReview(body);
        recordProfilesReview(result, started);
        HttpAnswer checked;
        checked.status = result.httpStatus;
        checked.body = std::move(result.body);
        reply(std::move(checked));
      };
      if (profilesWorker_.submit(std::move(job))) return;
      metrics_.recordProfileReview(Decision::Errored);
      HttpAnswer busy;
      refuse(kProfilesPath, 503, "aiadmit is checking other profiles; try again", busy);
      reply(std::move(busy));
    };
  }

  void recordProfilesReview(const ReviewAnswer& result, Clock::time_point started) {
    metrics_.recordProfileReview(result.decision);
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    logInfo("profiles review", {{"uid", result.uid},
                                {"operation", result.operation},
                                {"namespace", result.namespaceName},
                                {"name", result.name},
                                {"decision", decisionName(result.decision)},
                                {"latency_us", std::to_string(static_cast<int64_t>(seconds * 1e6))},
                                {"status", std::to_string(result.httpStatus)}});
  }

  // The review decoded once and decided; decided again on the same request
  // when its answer rests on what the view lacks.
  void admit(AdmissionRoute route, std::string_view body, Clock::time_point started,
             HttpAnswer& answer) {
    Review review(body);
    Decided decided;
    if (review.request() != nullptr) decided = engine_.decide(route, *review.request());
    if (lookup_ != nullptr && !decided.toConfirm.empty()) {
      return confirmThenAnswer(route, std::move(review), std::move(decided), started, answer);
    }
    send(route.endpoint, review.answer(std::move(decided)), started, answer);
  }

  void send(Endpoint endpoint, ReviewAnswer result, Clock::time_point started, HttpAnswer& answer) {
    answer.status = result.httpStatus;
    answer.body = std::move(result.body);
    record(endpoint, result, started);
  }

  // A large review is decided on a review worker; its body, moved out of
  // the connection, stays charged to the in-flight budget until then. When
  // every worker is taken and the queue full, or the decision comes after
  // the request's deadline, the answer is a 503: the API server applies the
  // webhook's failurePolicy.
  void admitOnWorker(AdmissionRoute route, const HttpRequest& request, HttpAnswer& answer) {
    struct Held {
      std::string body;
      BodyCharge charge;
    };
    auto held = std::make_shared<Held>();
    if (request.ownBody != nullptr) {
      held->body = std::move(*request.ownBody);
    } else {
      held->body = std::string(request.body);
    }
    if (request.charge != nullptr) held->charge = std::move(*request.charge);
    refuse(request.path, 503, "aiadmit did not decide the review in time", answer);
    answer.waitAtMost = kWorkerWait;
    answer.later = [this, route, held, path = std::string(request.path),
                    started = request.started](AnswerLater reply) {
      auto job = [this, route, held, started, reply] {
        HttpAnswer decided;
        admit(route, held->body, started, decided);
        std::string().swap(held->body);
        held->charge.release();
        metrics_.addReviewsOnWorkers(-1);
        reply(std::move(decided));
      };
      metrics_.addReviewsOnWorkers(1);
      if (reviewWorkers_.submit(std::move(job))) return;
      metrics_.addReviewsOnWorkers(-1);
      HttpAnswer busy;
      refuse(path, 503, "aiadmit is deciding as many reviews as it can hold; retry", busy);
      reply(std::move(busy));
    };
  }

  // The answer depends on objects the view lacks, which it may only not have
  // seen yet: a claim template that makes the Pod a GPU workload, or what a
  // denial of AIA017-AIA019 rests on. Ask the API, off the I/O thread, and
  // answer again with what it says. Should that not come in time, the answer
  // from the view alone goes, with what a denial rests on counted unknown
  // (a warning, not a refusal).
  void confirmThenAnswer(AdmissionRoute route, Review review, Decided decided,
                         Clock::time_point started, HttpAnswer& answer) {
    std::vector<ClusterRef> refs = std::move(decided.toConfirm);
    const std::chrono::milliseconds patience =
        decided.awaitClaims ? kClaimPatience : std::chrono::milliseconds(0);
    if (route.endpoint == Endpoint::Validate) {
      ClusterAnswers unknown;
      for (const ClusterRef& ref : refs) unknown.presence[ref] = Presence::Unknown;
      decided = engine_.decide(route, *review.request(), &unknown);
    }
    ReviewAnswer fallback = review.answer(std::move(decided));
    answer.status = fallback.httpStatus;
    answer.body = std::move(fallback.body);
    answer.waitAtMost = kConfirmWait;
    auto held = std::make_shared<const Review>(std::move(review));
    answer.later = [this, route, refs = std::move(refs), held, started,
                    patience](AnswerLater reply) mutable {
      lookup_->confirm(
          std::move(refs),
          [this, route, held, started, reply = std::move(reply)](ClusterAnswers answers) {
            HttpAnswer late;
            send(route.endpoint, held->answer(engine_.decide(route, *held->request(), &answers)),
                 started, late);
            reply(std::move(late));
          },
          patience);
    };
  }

  void record(Endpoint endpoint, const ReviewAnswer& result, Clock::time_point started) {
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    metrics_.recordRequest(endpoint, kubernetesKindOf(result.group, result.kind),
                           result.evaluation.workloadClass, result.decision, seconds);
    for (const Violation& v : result.evaluation.denials) {
      metrics_.recordRuleHit(v.rule, RuleAction::Deny);
    }
    for (const Violation& v : result.evaluation.warnings) {
      metrics_.recordRuleHit(v.rule, RuleAction::Warn);
    }
    for (const Violation& v : result.evaluation.audited) {
      metrics_.recordRuleHit(v.rule, RuleAction::Audit);
    }
    const std::string& controller = result.evaluation.unknownController;
    if (!controller.empty() && metrics_.recordUnknownController(controller)) {
      logInfo("objects of a controller no WorkloadType names are placed, not judged",
              {{"controller", controller},
               {"fix", "add a WorkloadType for it: aiadmit workload-types suggest on its CRD"}});
    }
    logRequest(endpoint, result, seconds);
  }

  const Engine& engine_;
  Metrics& metrics_;
  const std::atomic<bool>& ready_;
  ApiLookup* const lookup_;
  BackgroundWorker& profilesWorker_;
  BackgroundWorker& reviewWorkers_;
  const bool authenticatedCallers_;
};

// Profiles and certificate, reloaded when their files change (polled: a
// ConfigMap or Secret volume swaps its ..data symlink, which inotify on the
// files would not see reliably) and on SIGHUP.
class Reloader {
 public:
  Reloader(const ServerOptions& options, Engine& engine, CertificateStore& certificates,
           ProfileWatch& watch, Metrics& metrics)
      : options_(options),
        engine_(engine),
        certificates_(certificates),
        watch_(watch),
        metrics_(metrics) {}

  void poll(bool forced) {
    if (watch_.changed() || forced) reloadProfiles();
    std::string error;
    if (forced ? certificates_.load(&error) : certificates_.reloadIfChanged(&error)) {
      metrics_.setCertificateExpiry(certificates_.expiry());
      metrics_.recordCertificateReload(true);
      logLifecycle("certificate reloaded", {{"file", options_.certFile}});
    } else if (!error.empty()) {
      metrics_.recordCertificateReload(false);
      metrics_.recordCertificateRefusal(certificates_.problem());
      logError("certificate reload failed; serving the previous one",
               {{"reason", std::string(certificateProblemName(certificates_.problem()))},
                {"error", error}});
    }
  }

 private:
  void reloadProfiles() {
    ProfileLoadResult reloaded = loadProfileDirectory(options_.profilesDir, mutationSwitches());
    if (reloaded.ok()) {
      const std::string count = std::to_string(reloaded.set->profiles().size());
      metrics_.setProfilesLoaded(reloaded.set->profiles().size());
      engine_.replaceProfiles(std::move(reloaded.set));
      metrics_.recordProfileReload(true, unixNow());
      logLifecycle("profiles reloaded", {{"dir", options_.profilesDir}, {"profiles", count}});
      return;
    }
    metrics_.recordProfileReload(false, unixNow());
    for (const ProfileError& error : reloaded.errors) {
      logError("invalid profile", {{"error", error.format()}});
    }
    logError("profile reload refused; keeping the last good set",
             {{"dir", options_.profilesDir}, {"errors", std::to_string(reloaded.errors.size())}});
  }

  const ServerOptions& options_;
  Engine& engine_;
  CertificateStore& certificates_;
  ProfileWatch& watch_;
  Metrics& metrics_;
};

// Signals, reloads and the drain, on the main thread's own loop.
class Control {
 public:
  Control(const ServerOptions& options, HttpTransport& transport, Reloader& reloader,
          std::atomic<bool>& ready)
      : options_(options),
        transport_(transport),
        reloader_(reloader),
        ready_(ready),
        signals_(context_),
        timer_(context_) {
    // Drain on a request to stop; reload on SIGHUP; log and go on for the
    // user signals and alarms, whose default would kill the process.
    for (int signal : kHandledSignals) signals_.add(signal);
  }

  void run() {
    waitSignal();
    // Blocked until the handlers were in place; taken on this thread only.
    sigset_t all;
    sigemptyset(&all);
    for (int signal : kHandledSignals) sigaddset(&all, signal);
    pthread_sigmask(SIG_UNBLOCK, &all, nullptr);
    schedulePoll();
    context_.run();
  }

 private:
  void waitSignal() {
    signals_.async_wait([this](const boost::system::error_code& error, int signal) {
      if (error) return;
      if (signal == SIGHUP) {
        logLifecycle("reloading", {{"signal", "SIGHUP"}});
        reloader_.poll(true);
      } else if (signal == SIGTERM || signal == SIGINT || signal == SIGQUIT) {
        if (!draining_) beginDrain(signal);
      } else {
        logLifecycle("signal ignored", {{"signal", signalName(signal)}});
      }
      waitSignal();
    });
  }

  void schedulePoll() {
    timer_.expires_after(options_.reloadInterval);
    timer_.async_wait([this](const boost::system::error_code& error) {
      if (error || draining_) return;
      reloader_.poll(false);
      schedulePoll();
    });
  }

  void beginDrain(int signal) {
    draining_ = true;
    ready_.store(false);
    transport_.beginDrain();
    logLifecycle("shutting down", {{"signal", signalName(signal)}});
    timer_.expires_after(options_.shutdownDelay);
    timer_.async_wait([this](const boost::system::error_code& error) {
      if (error && error != asio::error::operation_aborted) return;
      transport_.stopAccepting();
      // Requests in progress finish within their deadlines.
      drainDeadline_ = Clock::now() + options_.limits.maxRequestTimeout +
                       options_.limits.writeTimeout + std::chrono::seconds(3);
      waitForConnections();
    });
  }

  void waitForConnections() {
    if (transport_.openConnections() == 0 || Clock::now() > drainDeadline_) {
      context_.stop();
      return;
    }
    timer_.expires_after(std::chrono::milliseconds(20));
    timer_.async_wait([this](const boost::system::error_code&) { waitForConnections(); });
  }

  const ServerOptions& options_;
  HttpTransport& transport_;
  Reloader& reloader_;
  std::atomic<bool>& ready_;
  asio::io_context context_{1};
  asio::signal_set signals_;
  asio::steady_timer timer_;
  bool draining_ = false;
  Clock::time_point drainDeadline_;
};

// Binds `listener` (the webhook's transport or the metrics listener) to
// `host`; "::" on a kernel without IPv6 (ipv6.disable=1), which cannot open
// an IPv6 socket at all, means every IPv4 address instead, and `host` says
// which was bound. False (logged) when neither can be.
template <class Listener>
bool listenOn(Listener& listener, std::string& host, int port) {
  std::string error;
  if (listener.listen(host, port, &error)) return true;
  std::string ipv4Error;
  if (host != "::" || !listener.listen("0.0.0.0", port, &ipv4Error)) {
    logError("cannot listen", {{"address", hostPort(host, port)}, {"error", error}});
    return false;
  }
  logLifecycle("no IPv6 on this host; listening on IPv4 alone", {{"error", error}});
  host = "0.0.0.0";
  return true;
}

// The plain-HTTP metrics listener when --metrics-listen asks for one, started;
// `listener` stays null when it is off. False (logged) when it cannot listen.
bool startMetricsListener(const ServerOptions& options, Metrics& metrics,
                          const std::atomic<bool>& ready,
                          std::unique_ptr<MetricsListener>& listener) {
  if (options.metricsPort < 0) return true;
  listener = std::make_unique<MetricsListener>(options.limits, metrics, ready);
  std::string host = options.metricsHost;
  if (!listenOn(*listener, host, options.metricsPort)) return false;
  listener->start();
  logLifecycle("metrics listening", {{"address", hostPort(host, listener->port())}});
  return true;
}

// The live cluster view when --cluster-view and the credentials call for it,
// not started yet; `feed` stays null when it is off. False (logged) when it
// must run and cannot: the server does not start then.
bool prepareClusterView(const ClusterViewSettings& settings, Engine& engine,
                        std::unique_ptr<ClusterViewFeed>& feed) {
  ClusterViewSource source;
  std::string error;
  if (!resolveClusterViewSource(settings, InClusterEnvironment::fromProcess(), source, error)) {
    logError("cluster view: cannot start; not starting", {{"error", error}});
    return false;
  }
  if (!source.config) {
    if (settings.waitingMetrics) {
      logError("--waiting-metrics needs the cluster view; not starting",
               {{"reason", source.reason}});
      return false;
    }
    logLifecycle("cluster view off; decisions use the profiles alone", {{"reason", source.reason}});
    return true;
  }
  feed = std::make_unique<ClusterViewFeed>(std::move(*source.config), engine, ClusterWatchOptions{},
                                           ApiLookupOptions{}, settings.waitingMetrics);
  return true;
}

// Said once each time the fit changes (a reload, a node group added or gone),
// not on every request: each request the profile touches is warned.
void logPoolFit(const PoolFit& fit) {
  if (fit.unmatched.empty()) {
    logLifecycle("every profile's pool matches a GPU node of the cluster");
    return;
  }
  for (const auto& [name, pool] : fit.unmatched) {
    logWarn("profile misconfigured for this cluster",
            {{"profile", name},
             {"file", pool.sourceFile + ":" + std::to_string(pool.sourceLine)},
             {"problem", pool.problem()},
             {"fix", std::string(UnmatchedPool::fix())}});
  }
}

// The serving certificate, loaded and set on the TLS context; false (logged)
// when it cannot be.
bool setUpTls(CertificateStore& certificates, asio::ssl::context& tls, Metrics& metrics) {
  std::string error;
  if (!certificates.load(&error)) {
    logError("cannot load TLS certificate; not starting",
             {{"reason", std::string(certificateProblemName(certificates.problem()))},
              {"error", error}});
    return false;
  }
  metrics.setCertificateExpiry(certificates.expiry());
  metrics.recordCertificateReload(true);
  if (!certificates.configure(*tls.native_handle(), &error)) {
    logError("TLS setup failed", {{"error", error}});
    return false;
  }
  // OpenSSL reads the socket itself: a whole record (or more) per read call,
  // not its header and then its body.
  SSL_CTX_set_read_ahead(tls.native_handle(), 1);
  return true;
}

}  // namespace

int runServer(const ServerOptions& options) {
  struct FlushLogsOnReturn {
    ~FlushLogsOnReturn() { flushLogging(); }
  } flushLogsOnReturn;
  // Signals go to the control loop only: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : kHandledSignals) sigaddset(&signals, signal);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Buffers of 1 MiB and more (large bodies, their parsed copies) are mapped
  // and unmapped on their own, so memory goes back to the system as soon as
  // a burst of large reviews is over. Left to itself glibc raises this
  // threshold after the first large free and keeps later ones in its heap.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);

  Metrics metrics;
  // Watched from before the first load, so that a change during start-up is not missed.
  ProfileWatch profileWatch(options.profilesDir);
  ProfileLoadResult loaded = loadProfileDirectory(options.profilesDir, mutationSwitches());
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
  engine.onPoolFitChange([&metrics](std::shared_ptr<const PoolFit> fit) {
    logPoolFit(*fit);
    metrics.setPoolFit(std::move(fit));
  });

  CertificateStore certificates(
      {options.certFile, options.keyFile, options.clientCaFile, options.tlsServerName});
  asio::ssl::context tls(asio::ssl::context::tls_server);
  if (!setUpTls(certificates, tls, metrics)) return 1;
  // Declared before the transport, so that it outlives every /metrics
  // answer; stopped after the drain.
  std::unique_ptr<ClusterViewFeed> clusterView;
  if (!prepareClusterView(options.clusterView, engine, clusterView)) return 1;

  std::atomic<bool> ready{true};
  const size_t threads = options.ioThreads != 0 ? options.ioThreads : usableCores();
  BackgroundWorker profilesWorker(kProfilesReviewsPending);
  // One for every two I/O threads: a large review costs up to about 15
  // times its size while it is decided, so how many are decided at once is
  // what bounds memory (sixteen 3 MiB reviews at once peaked at 140 MB with
  // two workers, against the Pod's 256 Mi); they are rare, and the small
  // ones never wait for them. A connection waits for at most one review, so
  // the queue is bounded by the connections, and the bodies it holds by the
  // in-flight budget.
  BackgroundWorker reviewWorkers(options.limits.maxConnections, std::max<size_t>(1, threads / 2));
  Endpoints endpoints(engine, metrics, ready, clusterView ? &clusterView->lookup() : nullptr,
                      profilesWorker, reviewWorkers, !options.clientCaFile.empty());
  HttpTransport transport(options.limits, threads, endpoints, metrics, &tls);
  // Stopped before the transport goes, on every way out: a job's answer is
  // for one of the transport's connections.
  struct StopBeforeTheTransport {
    BackgroundWorker& worker;
    ~StopBeforeTheTransport() { worker.stop(); }
  } stopProfilesWorker{profilesWorker}, stopReviewWorkers{reviewWorkers};
  std::string host = options.host;
  if (!listenOn(transport, host, options.port)) return 1;
  transport.start();
  Reloader reloader(options, engine, certificates, profileWatch, metrics);
  Control control(options, transport, reloader, ready);
  logLifecycle("listening", {{"address", hostPort(host, transport.port())},
                             {"profiles", options.profilesDir},
                             {"io_threads", std::to_string(threads)}});
  std::unique_ptr<MetricsListener> metricsListener;
  if (!startMetricsListener(options, metrics, ready, metricsListener)) {
    transport.stop();
    return 1;
  }
  std::string error;
  // Started once serving: requests never wait for it, and until it has
  // listed everything the profiles alone decide.
  if (clusterView) {
    if (!clusterView->start(&error)) {
      logError("cluster view: cannot start; not starting", {{"error", error}});
      transport.stop();
      if (metricsListener) metricsListener->stop();
      return 1;
    }
    metrics.setClusterView(&clusterView->watcher());
    metrics.setWaitingGauges(clusterView->waitingGauges());
  }
  if (clusterView && options.clientCaFile.empty()) {
    // Its answers say whether objects exist in any namespace.
    logWarn("reviews are answered to any caller; --client-ca keeps them to the API server",
            {{"cluster_view", "on"}});
  }
  control.run();
  // A signal from here on waits until the process has exited.
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  transport.stop();
  // Scraped until the webhook has drained, so the drain itself shows.
  if (metricsListener) metricsListener->stop();
  if (clusterView) clusterView->stop();
  logLifecycle("stopped");
  return 0;
}

}  // namespace aiadmit
