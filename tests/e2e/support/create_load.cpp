#include "tests/e2e/support/create_load.h"

#include <httplib.h>

#include <algorithm>
#include <optional>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {

namespace {

// A bare GPU Pod, as a person applies one: the Fail tier's.
std::string gpuPodBody() {
  const json container = {{"name", "main"},
                          {"image", "registry.example/train:1"},
                          {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}};
  const json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"generateName", "load-"}, {"annotations", {{"aiadmit.dev/workload", "batch"}}}}},
      {"spec", {{"restartPolicy", "Never"}, {"containers", json::array({container})}}}};
  return pod.dump();
}

int apiServerPort() {
  const std::string& url = cluster().apiserver;
  return std::atoi(url.substr(url.rfind(':') + 1).c_str());
}

std::unique_ptr<httplib::SSLClient> apiServerClient() {
  const std::string pki = cluster().dir + "/pki/";
  auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", apiServerPort(),
                                                     pki + "admin.crt", pki + "admin.key");
  client->set_ca_cert_path((pki + "ca.crt").c_str());
  client->enable_server_certificate_verification(true);
  client->set_keep_alive(true);
  client->set_connection_timeout(2);
  // Above the webhooks' timeouts (5 s each, two tiers called in turn).
  client->set_read_timeout(30);
  return client;
}

CreateOutcome outcomeOf(const httplib::Result& result, std::string& error) {
  if (!result) {
    error = "no answer from the API server: " + httplib::to_string(result.error());
    return CreateOutcome::ApiServerFailed;
  }
  const bool stamped = result->body.find("aiadmit.dev/class") != std::string::npos;
  if (result->status == 201 || result->status == 200) {
    if (stamped) return CreateOutcome::Created;
    error = "created without aiadmit's stamp";
    return CreateOutcome::RefusedByFailTier;
  }
  error = std::to_string(result->status) + ": " + result->body.substr(0, 400);
  return result->body.find("failed calling webhook") != std::string::npos
             ? CreateOutcome::RefusedByFailTier
             : CreateOutcome::ApiServerFailed;
}

}  // namespace

CreateLoad::CreateLoad(const std::string& namespaceName, int clients,
                       std::chrono::milliseconds interval)
    : namespace_(namespaceName), interval_(interval) {
  for (int i = 0; i < clients; ++i) threads_.emplace_back([this] { run(); });
}

CreateLoad::~CreateLoad() {
  stop();
}

void CreateLoad::stop() {
  stopping_ = true;
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void CreateLoad::run() {
  const auto client = apiServerClient();
  const std::string path = "/api/v1/namespaces/" + namespace_ + "/pods?dryRun=All";
  const std::string body = gpuPodBody();
  while (!stopping_) {
    const Clock::time_point started = Clock::now();
    std::string error;
    const CreateOutcome outcome = outcomeOf(client->Post(path, body, "application/json"), error);
    record({started, Clock::now(), outcome, error});
    // Pacing, not synchronisation: the load's rate, so that 4 clients do
    // not take both cores from the processes under test.
    std::this_thread::sleep_until(started + interval_);
  }
}

void CreateLoad::record(CreateRecord entry) {
  std::lock_guard lock(mutex_);
  if (entry.outcome == CreateOutcome::Created) ++created_;
  records_.push_back(std::move(entry));
}

bool CreateLoad::waitForCreated(int count, std::chrono::seconds timeout) {
  const int target = created_ + count;
  return waitUntil([&] { return created_ >= target; }, timeout, std::chrono::milliseconds(50));
}

LoadSummary CreateLoad::summary(Clock::time_point from, Clock::time_point to) const {
  std::lock_guard lock(mutex_);
  LoadSummary result;
  std::vector<Clock::time_point> successes = {from, to};
  std::optional<Clock::time_point> firstFailure, lastFailure;
  for (const CreateRecord& entry : records_) {
    if (entry.started < from || entry.started > to) continue;
    ++result.attempted;
    if (result.sampleError.empty()) result.sampleError = entry.error;
    if (entry.outcome == CreateOutcome::Created) {
      ++result.created;
      successes.push_back(std::clamp(entry.finished, from, to));
    } else {
      if (!firstFailure) firstFailure = entry.started;
      lastFailure = std::max(lastFailure.value_or(entry.finished), entry.finished);
    }
    if (entry.outcome == CreateOutcome::RefusedByFailTier) ++result.refused;
    if (entry.outcome == CreateOutcome::ApiServerFailed) ++result.apiServerFailed;
  }
  if (firstFailure) {
    result.failingSeconds = std::chrono::duration<double>(*lastFailure - *firstFailure).count();
  }
  std::sort(successes.begin(), successes.end());
  for (size_t i = 1; i < successes.size(); ++i) {
    const std::chrono::duration<double> gap = successes[i] - successes[i - 1];
    result.longestGapSeconds = std::max(result.longestGapSeconds, gap.count());
  }
  return result;
}

}  // namespace aiadmit::e2e
