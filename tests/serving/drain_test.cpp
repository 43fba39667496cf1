// A drain under load: clients that reuse connections as the API server does
// keep sending while the server is told to stop. Every request sent is
// answered, exactly; clients are moved off by Connection: close during the
// shutdown delay and only then find the listener closed.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;

struct ReviewCall {
  std::string path;
  std::string name;
  std::string body;
};

// The reference GPU Pod and Deployment reviews, each to /mutate and /validate.
std::vector<ReviewCall> reviewCalls() {
  std::vector<ReviewCall> calls;
  for (const char* file : {"bench/reviews/gpu-pod.json", "bench/reviews/gpu-deployment.json"}) {
    for (const char* path : {"/mutate", "/validate"}) {
      calls.push_back({path, file, readFile(sourceDir() + "/" + file)});
    }
  }
  return calls;
}

// What the shipped profiles answer, by the code the server runs.
std::vector<std::string> expectedAnswers(const std::vector<ReviewCall>& calls) {
  ProfileLoadResult loaded = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
  EXPECT_TRUE(loaded.ok());
  const Engine engine(loaded.set);
  std::vector<std::string> answers;
  for (const ReviewCall& call : calls) {
    const Endpoint endpoint = call.path == "/mutate" ? Endpoint::Mutate : Endpoint::Validate;
    answers.push_back(answerReview(engine, endpoint, call.body).body);
  }
  return answers;
}

TEST(DrainUnderLoad, LosesNoRequestOfClientsThatReuseConnections) {
  WebhookServer::Options options;
  options.extraArgs = {"--shutdown-delay", "2s"};
  WebhookServer server(options);
  const std::vector<ReviewCall> calls = reviewCalls();
  const std::vector<std::string> answers = expectedAnswers(calls);
  const std::string caFile = devCertificates().file("ca.crt");

  // Clients as the API server: keep-alive, a new connection only when the
  // server closed the last one, back to back. Each stops once it is refused
  // a connection (the listener is closed), or after a bounded time.
  struct Tally {
    size_t answered = 0, answeredAfterSignal = 0, refused = 0;
    std::vector<std::string> lost;
  };
  constexpr int kClients = 6;
  std::vector<Tally> tallies(kClients);
  std::atomic<bool> signalled{false};
  // How many answers came before the signal is sent: a condition, not a spin.
  std::mutex answeredMutex;
  std::condition_variable answeredChanged;
  size_t answered = 0;
  std::vector<std::thread> clients;
  const auto started = Clock::now();
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      Tally& tally = tallies[static_cast<size_t>(c)];
      httplib::SSLClient client("127.0.0.1", server.port());
      client.set_ca_cert_path(caFile.c_str());
      client.enable_server_certificate_verification(true);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_connection_timeout(5, 0);
      client.set_read_timeout(10, 0);
      for (size_t i = static_cast<size_t>(c); Clock::now() - started < std::chrono::seconds(20);
           ++i) {
        const size_t call = i % calls.size();
        const bool afterSignal = signalled.load();
        const httplib::Result result =
            client.Post(calls[call].path.c_str(), calls[call].body, "application/json");
        if (!result && (result.error() == httplib::Error::Connection ||
                        result.error() == httplib::Error::SSLConnection)) {
          // Never sent: the API server would have sent it to another replica.
          ++tally.refused;
          if (afterSignal) break;
          continue;
        }
        if (!result || result->status != 200 || result->body != answers[call]) {
          tally.lost.push_back(calls[call].name + " " + calls[call].path + ": " +
                               (result ? "HTTP " + std::to_string(result->status)
                                       : httplib::to_string(result.error())));
          continue;
        }
        ++tally.answered;
        {
          std::lock_guard<std::mutex> lock(answeredMutex);
          ++answered;
        }
        answeredChanged.notify_all();
        if (afterSignal) ++tally.answeredAfterSignal;
      }
    });
  }
  {
    std::unique_lock<std::mutex> lock(answeredMutex);
    answeredChanged.wait_until(lock, started + std::chrono::seconds(10),
                               [&] { return answered >= 200; });
  }
  signalled.store(true);
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  ASSERT_TRUE(server.waitForOutput("\"msg\":\"stopped\"", 20)) << server.output();
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(server.terminate(), 0);

  size_t total = 0, afterSignal = 0;
  for (const Tally& tally : tallies) {
    total += tally.answered;
    afterSignal += tally.answeredAfterSignal;
    EXPECT_TRUE(tally.lost.empty()) << tally.lost.size() << " lost, first: " << tally.lost.front();
    EXPECT_GT(tally.answeredAfterSignal, 0u) << "served during the shutdown delay";
    EXPECT_GT(tally.refused, 0u) << "ended by the closed listener";
  }
  std::cout << "[ faults ] drain: " << total << " requests answered, " << afterSignal
            << " of them during the shutdown delay\n";
}

}  // namespace
}  // namespace aiadmit
