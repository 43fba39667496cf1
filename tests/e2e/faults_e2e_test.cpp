// Faults as the API server lives through them, with aiadmit installed as it
// ships: two replicas behind the Service (tests/e2e/support/service_replicas.h),
// while 4 clients create GPU Pods through the Fail tier (server-side dry
// runs: tests/e2e/support/create_load.h). Each test runs one fault and
// reports, as a row of a table printed and written to DIR/faults.md
// (docs/install.md quotes it): the creates attempted from the fault's start
// until the load flows again, those refused by the Fail tier (the API
// server could not call aiadmit), those that failed at the API server
// itself, the longest stretch without a successful create, and how long
// after the fault aiadmit's cluster view had an object made right then.
//
// Asserted, as counts: no create refused through a rolling restart, a CA
// rotation or an etcd compaction, and every replica's view current again
// after each fault. Timings are reported, never asserted.
// Serial: the Fail tier calls the replicas, not the suite's aiadmit, for the
// duration. Labelled slow (tests/e2e/CMakeLists.txt).
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/e2e/support/create_load.h"
#include "tests/e2e/support/e2e_cluster.h"
#include "tests/e2e/support/service_replicas.h"

namespace aiadmit::e2e {
namespace {

constexpr int kClients = 4;
constexpr std::chrono::milliseconds kCreateInterval{100};
// Creates that must succeed before a fault (the load flows through the
// replicas) and after it (it flows again).
constexpr int kSteadyCreates = 20;

// One value of a replica's /metrics: the sum of the samples of `family`
// whose labels contain `labels`; -1 when the replica does not answer.
double replicaMetric(const std::string& address, const std::string& family,
                     const std::string& labels = "") {
  const size_t colon = address.rfind(':');
  httplib::SSLClient client(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
  client.enable_server_certificate_verification(false);
  client.set_connection_timeout(2);
  client.set_read_timeout(5);
  const auto response = client.Get("/metrics");
  if (!response || response->status != 200) return -1;
  std::istringstream lines(response->body);
  double sum = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(family, 0) != 0 || line.find(labels) == std::string::npos) continue;
    const char next = line[family.size()];
    if (next != ' ' && next != '{') continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

double replicasSum(const ServiceReplicas& replicas, const std::string& family) {
  double sum = 0;
  for (const std::string& address : replicas.addresses()) sum += replicaMetric(address, family);
  return sum;
}

int priorityClassesInCluster() {
  const CommandResult listed = kubectl({"get", "priorityclasses", "-o", "name"});
  if (listed.exitCode != 0) return -1;
  return static_cast<int>(std::count(listed.out.begin(), listed.out.end(), '\n'));
}

// Seconds from now until every replica's view holds a PriorityClass made
// now (and is synced); -1 when one never does within two minutes.
double secondsUntilViewCurrent(const ServiceReplicas& replicas) {
  const auto start = Clock::now();
  const std::string marker = "faults-view-" + std::to_string(getpid());
  const json priorityClass = {{"apiVersion", "scheduling.k8s.io/v1"},
                              {"kind", "PriorityClass"},
                              {"metadata", {{"name", marker}}},
                              {"value", 1000}};
  // The API server may only just be back: its first answers can fail.
  const bool made = waitUntil(
      [&] {
        return kubectl({"create", "-f", "-"}, toText(priorityClass)).exitCode == 0;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(500));
  const int expected = priorityClassesInCluster();
  const bool current =
      made && waitUntil(
                  [&] {
                    for (const std::string& address : replicas.addresses()) {
                      if (replicaMetric(address, "aiadmit_cluster_view_synced") != 1 ||
                          replicaMetric(address, "aiadmit_cluster_view_objects",
                                        "resource=\"priorityclasses\"") != expected) {
                        return false;
                      }
                    }
                    return true;
                  },
                  std::chrono::seconds(120), std::chrono::milliseconds(100));
  const std::chrono::duration<double> took = Clock::now() - start;
  kubectl({"delete", "priorityclass", marker, "--ignore-not-found"});
  return current ? took.count() : -1;
}

struct FaultRow {
  std::string fault;
  LoadSummary load;
  double viewSeconds = -1;
  double relists = 0;
  double expired = 0;
};

std::string fixed(double value, int decimals = 1) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string tableRow(const FaultRow& row) {
  return "| " + row.fault + " | " + std::to_string(row.load.attempted) + " | " +
         std::to_string(row.load.created) + " | " + std::to_string(row.load.refused) + " | " +
         std::to_string(row.load.apiServerFailed) + " | " + fixed(row.load.failingSeconds) + " | " +
         fixed(row.load.longestGapSeconds) + " | " +
         (row.viewSeconds < 0 ? "never" : fixed(row.viewSeconds)) + " | " + fixed(row.relists, 0) +
         " / " + fixed(row.expired, 0) + " |";
}

constexpr const char* kTableHeader =
    "| fault | creates attempted | created | refused by the Fail tier | failed at the API "
    "server | errors for (s) | longest gap without a create (s) | view current after (s) | view "
    "relists / 410 Gone |\n|---|---|---|---|---|---|---|---|---|\n";

// DIR/faults.md: the table, this fault's row replaced, in the order faults
// first wrote theirs.
void writeRow(const FaultRow& row) {
  const std::string path = cluster().dir + "/faults.md";
  std::ifstream in(path);
  std::string table = kTableHeader, line;
  bool replaced = false;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) != 0 || line.rfind("|---", 0) == 0 || line.rfind("| fault |", 0) == 0) {
      continue;
    }
    const bool same = line.rfind("| " + row.fault + " |", 0) == 0;
    table += (same ? tableRow(row) : line) + "\n";
    replaced = replaced || same;
  }
  if (!replaced) table += tableRow(row) + "\n";
  testing::writeFile(path, table);
  std::printf("%s%s\n", kTableHeader, tableRow(row).c_str());
}

// Runs `fault` under the load and returns its row.
FaultRow underLoad(const std::string& name, ServiceReplicas& replicas,
                   const std::function<bool()>& fault) {
  FaultRow row{name, {}, -1, 0, 0};
  Namespace ns("faults");
  const double relists = replicasSum(replicas, "aiadmit_cluster_view_relists_total");
  const double expired = replicasSum(replicas, "aiadmit_cluster_view_expired_total");
  CreateLoad load(ns.name(), kClients, kCreateInterval);
  EXPECT_TRUE(load.waitForCreated(kSteadyCreates, std::chrono::seconds(60)))
      << "the load never flowed through the replicas";
  EXPECT_GT(replicasSum(replicas, "aiadmit_requests_total"), 0)
      << "the API server does not call the replicas";
  const Clock::time_point from = Clock::now();
  EXPECT_TRUE(fault()) << name;
  row.viewSeconds = secondsUntilViewCurrent(replicas);
  EXPECT_TRUE(load.waitForCreated(kSteadyCreates, std::chrono::seconds(120)))
      << "the load never flowed again after " << name;
  row.load = load.summary(from, Clock::now());
  load.stop();
  row.relists = replicasSum(replicas, "aiadmit_cluster_view_relists_total") - relists;
  row.expired = replicasSum(replicas, "aiadmit_cluster_view_expired_total") - expired;
  EXPECT_GE(row.viewSeconds, 0) << "a replica's view never became current after " << name;
  writeRow(row);
  if (!row.load.sampleError.empty()) std::printf("first error: %s\n", row.load.sampleError.c_str());
  return row;
}

void expectNoCreateLost(const FaultRow& row) {
  EXPECT_EQ(row.load.refused, 0) << row.load.sampleError;
  EXPECT_EQ(row.load.apiServerFailed, 0) << row.load.sampleError;
  EXPECT_GT(row.load.created, 0);
}

// etcd's current revision, compacted away (its v3 HTTP gateway).
bool compactEtcd() {
  httplib::Client etcd(cluster().etcd);
  const auto range = etcd.Post("/v3/kv/range", R"({"key":"AA=="})", "application/json");
  if (!range || range->status != 200) return false;
  const json answer = json::parse(range->body, nullptr, false);
  if (!answer.is_object() || !answer.contains("header")) return false;
  const json compaction = {{"revision", answer["header"].value("revision", "0")},
                           {"physical", true}};
  const auto compacted = etcd.Post("/v3/kv/compaction", compaction.dump(), "application/json");
  return compacted && compacted->status == 200;
}

TEST(E2eFaultsSerial, RollingRestartOfBothReplicasRefusesNoCreate) {
  ServiceReplicas replicas;
  ASSERT_TRUE(replicas.ready());
  const FaultRow row = underLoad("rolling restart of both replicas", replicas,
                                 [&] { return replicas.rollingRestart(); });
  expectNoCreateLost(row);
}

TEST(E2eFaultsSerial, CaRotationRefusesNoCreate) {
  ServiceReplicas replicas;
  ASSERT_TRUE(replicas.ready());
  const FaultRow row =
      underLoad("certificate and CA rotation", replicas, [&] { return replicas.rotateCa(); });
  expectNoCreateLost(row);
}

TEST(E2eFaultsSerial, KilledReplicaRefusesCreatesUntilItsPodIsUnready) {
  ServiceReplicas replicas;
  ASSERT_TRUE(replicas.ready());
  const std::string victim = replicas.podNames().front();
  const FaultRow row = underLoad("kill -9 of one replica", replicas, [&] {
    return replicas.killAndRecover(victim) && replicas.waitForEndpoints(std::chrono::seconds(60));
  });
  // Reported, not asserted: how many the probe's detection time costs.
  EXPECT_GT(row.load.created, 0);
}

TEST(E2eFaultsSerial, ApiServerRestartLeavesTheViewCurrent) {
  ServiceReplicas replicas;
  ASSERT_TRUE(replicas.ready());
  const FaultRow row = underLoad("API server restart", replicas, [&] {
    const CommandResult restarted = e2eCluster("apiserver", {"restart"});
    EXPECT_EQ(restarted.exitCode, 0) << restarted.out << restarted.err;
    return restarted.exitCode == 0 && replicas.waitForEndpoints(std::chrono::seconds(60));
  });
  EXPECT_GT(row.load.created, 0);
}

TEST(E2eFaultsSerial, EtcdCompactionUnderTheWatchesRefusesNoCreate) {
  ServiceReplicas replicas;
  ASSERT_TRUE(replicas.ready());
  const FaultRow row = underLoad("etcd compaction", replicas, compactEtcd);
  expectNoCreateLost(row);
}

}  // namespace
}  // namespace aiadmit::e2e
