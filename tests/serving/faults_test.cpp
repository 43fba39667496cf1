// Faults under load, against the real server over TLS: the serving
// certificate replaced every second through a Secret volume, and the profiles
// swapped through a ConfigMap volume to a changed set and then to a broken
// one, while keep-alive clients and clients that open a new connection per
// request send real AdmissionReviews. No request may fail, every answer must
// be exactly the one a profile set gives (never a mix), and the new
// certificate and profiles must be in service within seconds.
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;
using Files = std::map<std::string, std::string>;

double millisecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// --- certificates --------------------------------------------------------------

std::string sha256Fingerprint(X509* certificate) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (certificate == nullptr || X509_digest(certificate, EVP_sha256(), digest, &length) != 1) {
    return "";
  }
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02X", digest[i]);
    hex += byte;
  }
  return hex;
}

// The fingerprint of the first certificate in a PEM text.
std::string fingerprintOfPem(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> in(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> certificate(
      PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr), X509_free);
  return sha256Fingerprint(certificate.get());
}

// What `openssl s_client` is served, verified against `caFile`.
std::string servedFingerprintByOpensslClient(int port, const std::string& caFile) {
  const CommandResult result =
      runCommand({"openssl", "s_client", "-connect", "127.0.0.1:" + std::to_string(port), "-CAfile",
                  caFile, "-verify_return_error", "-servername", "localhost"});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  const size_t begin = result.out.find("-----BEGIN CERTIFICATE-----");
  if (begin == std::string::npos) return "";
  return fingerprintOfPem(result.out.substr(begin));
}

// --- what the clients send -----------------------------------------------------

struct ReviewCall {
  std::string path;  // /mutate or /validate
  std::string name;  // where the review came from, for failure messages
  std::string body;
};

// The reference GPU Pod and Deployment reviews, and the first Pod,
// Deployment, Job and CronJob of the corpus, each to /mutate and /validate.
std::vector<ReviewCall> reviewCalls() {
  std::vector<std::pair<std::string, std::string>> reviews;
  for (const char* file : {"bench/reviews/gpu-pod.json", "bench/reviews/gpu-deployment.json"}) {
    reviews.emplace_back(file, readFile(sourceDir() + "/" + file));
  }
  std::set<std::string> kinds;
  for (const CorpusObject& object : corpusObjects()) {
    const bool wanted = object.kind == "Pod" || object.kind == "Deployment" ||
                        object.kind == "Job" || object.kind == "CronJob";
    if (!wanted || !kinds.insert(object.kind).second) continue;
    const std::string uid = "faults-" + std::to_string(reviews.size());
    reviews.emplace_back(object.file + "#" + std::to_string(object.index),
                         makeReview(object.json, "CREATE", uid, "", "ml-team"));
  }
  EXPECT_EQ(kinds.size(), 4u);
  std::vector<ReviewCall> calls;
  for (const auto& [name, body] : reviews) {
    for (const char* path : {"/mutate", "/validate"}) calls.push_back({path, name, body});
  }
  return calls;
}

// The answer to each call from a profile directory, by the code the server runs.
std::vector<std::string> expectedAnswers(const std::vector<ReviewCall>& calls,
                                         const std::string& profilesDir) {
  ProfileLoadResult loaded = loadProfileDirectory(profilesDir, mutationSwitches());
  EXPECT_TRUE(loaded.ok()) << profilesDir;
  std::vector<std::string> answers;
  if (!loaded.ok()) return std::vector<std::string>(calls.size());
  const Engine engine(loaded.set);
  for (const ReviewCall& call : calls) {
    const ReviewAnswer answer = answerReview(
        engine, call.path == "/mutate" ? Endpoint::Mutate : Endpoint::Validate, call.body);
    EXPECT_EQ(answer.httpStatus, 200) << call.name << " " << call.path << ": " << answer.body;
    answers.push_back(answer.body);
  }
  return answers;
}

// --- the load ------------------------------------------------------------------

struct Exchange {
  int client = 0;
  bool freshConnection = false;
  size_t call = 0;
  Clock::time_point sent;
  Clock::time_point received;
  unsigned generations = 0;  // bit g: the answer is exactly profile generation g's
  std::string failure;       // why, when no generation matches
  std::string certificate;   // new connections: the certificate served to this request
};

struct Handshake {
  int client = 0;
  bool freshConnection = false;
  Clock::time_point at;
  std::string certificate;
};

// Client threads sending `calls` round-robin until stopped, bounded in count
// and time. Keep-alive clients hold one cpp-httplib connection each, as the
// API server reuses idle ones; the others open a new connection (a full TLS
// handshake) per request. Every client verifies the server against `caFile`.
class Load {
 public:
  struct Shape {
    int keepAliveClients = 4;
    int freshConnectionClients = 2;
  };

  Load(int port, std::string caFile, std::vector<ReviewCall> calls,
       std::vector<std::vector<std::string>> generations, Shape shape)
      : port_(port),
        caFile_(std::move(caFile)),
        calls_(std::move(calls)),
        generations_(std::move(generations)),
        started_(Clock::now()) {
    clients_ = shape.keepAliveClients + shape.freshConnectionClients;
    running_ = clients_;
    for (int client = 0; client < clients_; ++client) {
      const bool fresh = client >= shape.keepAliveClients;
      threads_.emplace_back([this, client, fresh] { run(client, fresh); });
    }
  }
  ~Load() { stop(); }
  Load(const Load&) = delete;
  Load& operator=(const Load&) = delete;

  void stop() {
    stop_ = true;
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

  // Waits until every client has `count` answers to requests sent after
  // `since`; false after `seconds` or when the load ended before.
  bool waitForAnswersSince(Clock::time_point since, int count, double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto enough = [&] {
      std::vector<int> answered(static_cast<size_t>(clients_), 0);
      for (const Exchange& exchange : exchanges_) {
        if (exchange.sent > since) ++answered[static_cast<size_t>(exchange.client)];
      }
      return std::all_of(answered.begin(), answered.end(), [&](int n) { return n >= count; });
    };
    return changed_.wait_for(lock, std::chrono::duration<double>(seconds), [&] {
      return enough() || running_ == 0;
    }) && enough();
  }

  // Waits until a new connection is served `certificate`; when it was.
  std::optional<Clock::time_point> waitForCertificate(const std::string& certificate,
                                                      double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::optional<Clock::time_point> seen;
    changed_.wait_for(lock, std::chrono::duration<double>(seconds), [&] {
      for (const Handshake& handshake : handshakes_) {
        if (handshake.freshConnection && handshake.certificate == certificate) {
          seen = handshake.at;
          return true;
        }
      }
      return running_ == 0;
    });
    return seen;
  }

  std::vector<Exchange> exchanges() {
    std::lock_guard<std::mutex> lock(mutex_);
    return exchanges_;
  }
  std::vector<Handshake> handshakes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return handshakes_;
  }
  int clients() const { return clients_; }

 private:
  // Paced so that the load stays bounded on a shared machine; a slow server
  // slows the clients down instead of building a backlog.
  static constexpr auto kKeepAlivePeriod = std::chrono::milliseconds(8);
  static constexpr auto kFreshConnectionPeriod = std::chrono::milliseconds(20);
  static constexpr int kMaxRequestsPerClient = 5000;
  static constexpr auto kMaxDuration = std::chrono::seconds(25);

  struct ClientContext {
    Load* load = nullptr;
    int client = 0;
    bool freshConnection = false;
    std::string certificate;  // served in this client's latest handshake
  };

  static int contextIndex() {
    static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
  }
  static int seenIndex() {
    static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
  }

  // Runs inside the client's handshake: the certificate the server chose.
  // TLS 1.3 reports "done" again for each session ticket; a connection counts once.
  static void onTlsEvent(const SSL* ssl, int where, int) {
    if ((where & SSL_CB_HANDSHAKE_DONE) == 0) return;
    SSL* connection = const_cast<SSL*>(ssl);
    if (SSL_get_ex_data(connection, seenIndex()) != nullptr) return;
    SSL_set_ex_data(connection, seenIndex(), connection);
    auto* context =
        static_cast<ClientContext*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), contextIndex()));
    if (context == nullptr) return;
    context->certificate = sha256Fingerprint(SSL_get0_peer_certificate(ssl));
    Handshake handshake{context->client, context->freshConnection, Clock::now(),
                        context->certificate};
    std::lock_guard<std::mutex> lock(context->load->mutex_);
    context->load->handshakes_.push_back(std::move(handshake));
    context->load->changed_.notify_all();
  }

  std::unique_ptr<httplib::SSLClient> connect(ClientContext& context) const {
    auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", port_);
    client->set_ca_cert_path(caFile_.c_str());
    client->enable_server_certificate_verification(true);
    client->set_keep_alive(!context.freshConnection);
    client->set_tcp_nodelay(true);  // as Go clients, the API server among them
    client->set_connection_timeout(5, 0);
    client->set_read_timeout(10, 0);
    SSL_CTX_set_ex_data(client->ssl_context(), contextIndex(), &context);
    SSL_CTX_set_info_callback(client->ssl_context(), &Load::onTlsEvent);
    return client;
  }

  void run(int client, bool freshConnection) {
    ClientContext context{this, client, freshConnection, ""};
    std::unique_ptr<httplib::SSLClient> kept;
    const auto period = freshConnection ? kFreshConnectionPeriod : kKeepAlivePeriod;
    auto next = Clock::now();
    for (int i = 0; i < kMaxRequestsPerClient && !stop_ && Clock::now() - started_ < kMaxDuration;
         ++i) {
      std::this_thread::sleep_until(next);
      next = std::max(next + period, Clock::now());
      std::unique_ptr<httplib::SSLClient> fresh;
      if (freshConnection) {
        fresh = connect(context);
      } else if (!kept) {
        kept = connect(context);
      }
      httplib::SSLClient& http = freshConnection ? *fresh : *kept;

      Exchange exchange;
      exchange.client = client;
      exchange.freshConnection = freshConnection;
      exchange.call = static_cast<size_t>(client * 5 + i) % calls_.size();
      const ReviewCall& call = calls_[exchange.call];
      context.certificate.clear();
      exchange.sent = Clock::now();
      const httplib::Result result = http.Post(call.path.c_str(), call.body, "application/json");
      exchange.received = Clock::now();
      if (!result) {
        exchange.failure = "no answer: " + httplib::to_string(result.error());
      } else if (result->status != 200) {
        exchange.failure = "HTTP " + std::to_string(result->status) + ": " + result->body;
      } else {
        for (size_t g = 0; g < generations_.size(); ++g) {
          if (result->body == generations_[g][exchange.call]) exchange.generations |= 1u << g;
        }
        if (exchange.generations == 0) exchange.failure = "unexpected answer: " + result->body;
      }
      if (!exchange.failure.empty()) {
        exchange.failure = call.name + " " + call.path + ": " + exchange.failure.substr(0, 400);
      }
      if (freshConnection) exchange.certificate = context.certificate;
      std::lock_guard<std::mutex> lock(mutex_);
      exchanges_.push_back(std::move(exchange));
      changed_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
    changed_.notify_all();
  }

  int port_;
  std::string caFile_;
  std::vector<ReviewCall> calls_;
  std::vector<std::vector<std::string>> generations_;
  Clock::time_point started_;
  int clients_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Exchange> exchanges_;
  std::vector<Handshake> handshakes_;
  int running_ = 0;
};

// No failed request: every one answered 200 with a known answer.
void expectNoFailure(const std::vector<Exchange>& exchanges) {
  size_t failures = 0;
  for (const Exchange& exchange : exchanges) {
    if (exchange.generations != 0) continue;
    if (failures++ < 5) ADD_FAILURE() << "client " << exchange.client << ": " << exchange.failure;
  }
  EXPECT_EQ(failures, 0u) << "of " << exchanges.size() << " requests";
}

size_t countFresh(const std::vector<Exchange>& exchanges) {
  return static_cast<size_t>(std::count_if(exchanges.begin(), exchanges.end(),
                                           [](const Exchange& e) { return e.freshConnection; }));
}

// --- certificate rotation --------------------------------------------------------

TEST(FaultsUnderLoad, CertificateReplacedEverySecondIsServedWithoutAFailedRequest) {
  // Serving pairs, each from its own development CA. The clients trust all
  // the CAs, as the API server trusts a caBundle that spans a rotation.
  constexpr int kPairs = 6;
  std::vector<std::unique_ptr<TempDir>> pairs;
  std::vector<std::string> fingerprints;
  std::string caBundle;
  for (int i = 0; i < kPairs; ++i) {
    pairs.push_back(std::make_unique<TempDir>());
    const CommandResult made =
        runCommand({"bash", sourceDir() + "/certs/gen-dev-certs.sh", pairs.back()->path(), "2"});
    ASSERT_EQ(made.exitCode, 0) << made.err;
    caBundle += readFile(pairs.back()->file("ca.crt"));
    fingerprints.push_back(fingerprintOfPem(readFile(pairs.back()->file("tls.crt"))));
    ASSERT_FALSE(fingerprints.back().empty());
  }
  const auto servingPair = [&](int i) -> Files {
    return {{"tls.crt", readFile(pairs[static_cast<size_t>(i)]->file("tls.crt"))},
            {"tls.key", readFile(pairs[static_cast<size_t>(i)]->file("tls.key"))}};
  };
  const auto indexOf = [&](const std::string& fingerprint) {
    const auto at = std::find(fingerprints.begin(), fingerprints.end(), fingerprint);
    return at == fingerprints.end() ? -1 : static_cast<int>(at - fingerprints.begin());
  };
  TempDir trust;
  writeFile(trust.file("ca-bundle.crt"), caBundle);

  ProjectedVolume secret;
  secret.publish(servingPair(0));
  WebhookServer server({"", secret.file("tls.crt"), secret.file("tls.key"), {}});
  ASSERT_GT(server.port(), 0);
  const std::vector<ReviewCall> calls = reviewCalls();
  const auto loadStart = Clock::now();
  Load load(server.port(), trust.file("ca-bundle.crt"), calls,
            {expectedAnswers(calls, sourceDir() + "/profiles")}, Load::Shape{});
  ASSERT_TRUE(load.waitForAnswersSince(Clock::now(), 5, 20)) << server.output().substr(0, 2000);
  ASSERT_TRUE(load.waitForCertificate(fingerprints[0], 10));

  // One new pair a second, as often as anyone could rotate; the paced loop
  // shapes the fault, it does not wait for anything.
  std::vector<Clock::time_point> swaps;
  const auto rotationStart = Clock::now();
  for (int i = 1; i < kPairs; ++i) {
    std::this_thread::sleep_until(rotationStart + std::chrono::seconds(i - 1));
    secret.publish(servingPair(i));
    swaps.push_back(Clock::now());
  }
  const auto lastServed = load.waitForCertificate(fingerprints.back(), 15);
  ASSERT_TRUE(lastServed) << "the last certificate was never served";
  ASSERT_TRUE(load.waitForAnswersSince(*lastServed, 3, 10));
  load.stop();
  const auto loadEnd = Clock::now();

  const std::vector<Exchange> exchanges = load.exchanges();
  const std::vector<Handshake> handshakes = load.handshakes();
  expectNoFailure(exchanges);

  // Each swap is in service within seconds: a new connection is served that
  // pair or a later one (a pair replaced before the next poll is skipped).
  double slowest = 0;
  for (size_t s = 0; s < swaps.size(); ++s) {
    const int pair = static_cast<int>(s) + 1;
    std::optional<double> latency;
    for (const Handshake& handshake : handshakes) {
      if (!handshake.freshConnection || handshake.at < swaps[s]) continue;
      if (indexOf(handshake.certificate) < pair) continue;
      const double ms = millisecondsBetween(swaps[s], handshake.at);
      if (!latency || ms < *latency) latency = ms;
    }
    ASSERT_TRUE(latency) << "pair " << pair << " was never in service";
    EXPECT_LT(*latency, 3500.0) << "pair " << pair;
    slowest = std::max(slowest, *latency);
  }

  // New connections only ever move forward; kept connections keep the pair
  // they began with and never handshake again.
  std::map<int, int> newestPerClient;
  std::map<int, int> keptHandshakes;
  for (const Handshake& handshake : handshakes) {
    const int index = indexOf(handshake.certificate);
    EXPECT_GE(index, 0) << "served an unknown certificate";
    if (!handshake.freshConnection) {
      ++keptHandshakes[handshake.client];
      EXPECT_EQ(index, 0);
      continue;
    }
    EXPECT_GE(index, newestPerClient[handshake.client]) << "client " << handshake.client;
    newestPerClient[handshake.client] = std::max(newestPerClient[handshake.client], index);
  }
  EXPECT_EQ(keptHandshakes.size(), static_cast<size_t>(Load::Shape{}.keepAliveClients));
  for (const auto& [client, count] : keptHandshakes) EXPECT_EQ(count, 1) << "client " << client;
  EXPECT_EQ(servedFingerprintByOpensslClient(server.port(), trust.file("ca-bundle.crt")),
            fingerprints.back());

  const std::string output = server.output();
  size_t reloads = 0;
  for (size_t at = output.find("\"certificate reloaded\""); at != std::string::npos;
       at = output.find("\"certificate reloaded\"", at + 1)) {
    ++reloads;
  }
  EXPECT_GE(reloads, 1u);
  std::cout << "[ faults ] certificate rotation: " << exchanges.size() << " requests ("
            << countFresh(exchanges) << " on new connections) in "
            << millisecondsBetween(loadStart, loadEnd) / 1000 << " s, " << swaps.size()
            << " swaps, " << reloads << " reloads, new certificate served within " << slowest
            << " ms of a swap\n";
}

// --- profile reload -------------------------------------------------------------

Files shippedProfiles() {
  Files files;
  for (const char* name : {"training.yaml", "batch.yaml", "realtime.yaml"}) {
    files[name] = readFile(sourceDir() + "/profiles/" + name);
  }
  return files;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Every profile tolerates the pool taint with another value.
Files withTolerationValue(Files files, const std::string& value) {
  for (auto& [name, text] : files) text = replaced(text, "value: gpu\n", "value: " + value + "\n");
  return files;
}

void writeProfiles(const TempDir& dir, const Files& files) {
  for (const auto& [name, text] : files) writeFile(dir.file(name), text);
}

double metricValue(const std::string& metrics, const std::string& sample) {
  const size_t at = metrics.find("\n" + sample + " ");
  EXPECT_NE(at, std::string::npos) << sample << " in\n" << metrics;
  return at == std::string::npos ? -1 : std::stod(metrics.substr(at + sample.size() + 2));
}

TEST(FaultsUnderLoad, ProfileSwapsTakeEffectAtTheReloadAndABrokenSetKeepsTheLastGoodOne) {
  const Files first = shippedProfiles();
  const Files second = withTolerationValue(first, "gpu-v2");
  Files broken = withTolerationValue(first, "gpu-v3");
  broken["realtime.yaml"] =
      replaced(broken["realtime.yaml"], "effect: NoSchedule", "effect: NoSchedul");

  // What each set answers, from plain directories holding the same files.
  TempDir firstDir, secondDir, brokenDir;
  writeProfiles(firstDir, first);
  writeProfiles(secondDir, second);
  writeProfiles(brokenDir, broken);
  ASSERT_FALSE(loadProfileDirectory(brokenDir.path(), mutationSwitches()).ok());
  const std::vector<ReviewCall> calls = reviewCalls();
  const std::vector<std::vector<std::string>> generations = {
      expectedAnswers(calls, firstDir.path()), expectedAnswers(calls, secondDir.path())};
  size_t telling = 0;  // calls whose answer shows which set served them
  for (size_t i = 0; i < calls.size(); ++i) telling += generations[0][i] != generations[1][i];
  ASSERT_GE(telling, 4u);

  ProjectedVolume configMap;
  configMap.publish(first);
  WebhookServer server({configMap.path(), "", "", {}});
  ASSERT_GT(server.port(), 0);
  const auto loadStart = Clock::now();
  Load load(server.port(), devCertificates().file("ca.crt"), calls, generations, Load::Shape{});
  ASSERT_TRUE(load.waitForAnswersSince(Clock::now(), 5, 20)) << server.output().substr(0, 2000);

  const auto secondPublished = Clock::now();
  configMap.publish(second);
  ASSERT_TRUE(server.waitForOutput("\"msg\":\"profiles reloaded\"", 15)) << server.output();
  const auto reloadLogged = Clock::now();
  ASSERT_TRUE(load.waitForAnswersSince(reloadLogged, 5, 20));
  const double failedReloads =
      metricValue(server.get("/metrics").body, "aiadmit_profile_reloads_total{result=\"failure\"}");

  const auto brokenPublished = Clock::now();
  configMap.publish(broken);
  ASSERT_TRUE(
      server.waitForOutput("\"msg\":\"profile reload refused; keeping the last good set\"", 15))
      << server.output();
  const auto refusalLogged = Clock::now();
  ASSERT_TRUE(load.waitForAnswersSince(refusalLogged, 5, 20));
  const std::string metrics = server.get("/metrics").body;
  EXPECT_GT(metricValue(metrics, "aiadmit_profile_reloads_total{result=\"failure\"}"),
            failedReloads);
  EXPECT_EQ(metricValue(metrics, "aiadmit_profile_reloads_total{result=\"success\"}"), 2);
  EXPECT_EQ(metricValue(metrics, "aiadmit_profiles"), 3);
  EXPECT_EQ(server.get("/readyz").status, 200);
  load.stop();
  const auto loadEnd = Clock::now();

  const std::vector<Exchange> exchanges = load.exchanges();
  expectNoFailure(exchanges);
  constexpr unsigned kFirst = 1u, kSecond = 2u;
  std::optional<double> firstSecondAnswer;
  size_t beforeSwap = 0, afterReload = 0, afterRefusal = 0;
  std::map<int, bool> switched;  // per client: a telling answer from the second set was seen
  for (const Exchange& exchange : exchanges) {
    if (exchange.generations == 0) continue;
    if (exchange.received < secondPublished) {
      ++beforeSwap;
      EXPECT_TRUE(exchange.generations & kFirst) << calls[exchange.call].name;
    }
    // Anything sent once the reload line was printed meets the new set, and
    // the broken set published later never replaces it.
    if (exchange.sent > reloadLogged) {
      ++afterReload;
      EXPECT_TRUE(exchange.generations & kSecond) << calls[exchange.call].name;
    }
    if (exchange.sent > refusalLogged) ++afterRefusal;
    if (exchange.generations == kSecond) {
      const double ms = millisecondsBetween(secondPublished, exchange.received);
      if (!firstSecondAnswer || ms < *firstSecondAnswer) firstSecondAnswer = ms;
      switched[exchange.client] = true;
    } else if (exchange.generations == kFirst) {
      EXPECT_FALSE(switched[exchange.client])
          << "client " << exchange.client << " went back to the first set";
    }
  }
  EXPECT_GT(beforeSwap, 0u);
  EXPECT_GT(afterReload, 0u);
  EXPECT_GT(afterRefusal, 0u);
  ASSERT_TRUE(firstSecondAnswer);
  std::cout << "[ faults ] profile reload: " << exchanges.size() << " requests ("
            << countFresh(exchanges) << " on new connections) in "
            << millisecondsBetween(loadStart, loadEnd) / 1000 << " s; reload logged "
            << millisecondsBetween(secondPublished, reloadLogged)
            << " ms after the swap, first answer from the new set after " << *firstSecondAnswer
            << " ms; broken set refused " << millisecondsBetween(brokenPublished, refusalLogged)
            << " ms after its swap, " << afterRefusal
            << " answers after it from the last good set\n";
}

}  // namespace
}  // namespace aiadmit
