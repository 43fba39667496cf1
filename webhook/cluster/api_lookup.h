// Direct reads of single objects, for a rule about to deny because the
// cluster view lacks an object (AIA017-AIA019): the view is a watch cache and
// may lag a create by a moment (the same `kubectl apply -f` as the workload),
// so the server asks the API before it refuses. Asked on threads of its own,
// never on an I/O thread; each GET has a short timeout, the questions in
// flight are bounded (beyond the bound the answer is Unknown at once), and
// 404s are remembered for a moment so a burst of refused Pods asks once (not
// those of claims and claim templates, which decide what a workload is). What
// the API has comes back too (a claim template the Pod's class depends on).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "webhook/cluster/api_client.h"
#include "webhook/cluster/api_config.h"
#include "webhook/cluster/cluster_ref.h"

namespace aiadmit {

struct ApiLookupOptions {
  std::chrono::milliseconds timeout{500};  // connect and read, per GET
  size_t threads = 2;
  size_t maxPending = 16;                     // questions queued or being asked
  std::chrono::milliseconds absentFor{2000};  // how long a 404 is remembered
  size_t maxRemembered = 512;
};

struct ApiLookupCounts {
  uint64_t found = 0;    // 200: the view lagged behind
  uint64_t absent = 0;   // 404, asked or remembered
  uint64_t unknown = 0;  // no answer in time, another status, or over the bound
};

class ApiLookup {
 public:
  // The served "group/version" of a kind ("" when the view does not know it:
  // the answer is then Unknown).
  using ServedVersion = std::function<std::string(ClusterKind)>;
  using Done = std::function<void(ClusterAnswers)>;

  ApiLookup(ApiServerConfig config, ServedVersion servedVersion, ApiLookupOptions options = {});
  ~ApiLookup();
  ApiLookup(const ApiLookup&) = delete;
  ApiLookup& operator=(const ApiLookup&) = delete;

  // Asks about every ref; `done` runs once, on a lookup thread (or on the
  // caller's when no question needs a thread), with an answer for each. With
  // `patience`, a claim or claim template the API does not have is asked
  // for again, every kPatientStep, until it is there or `patience` is over:
  // a controller's Pod is made a moment after its workload is applied, and
  // the claim templates of the same apply are often created after the
  // workload (Helm creates the kinds it does not know last).
  void confirm(std::vector<ClusterRef> refs, Done done,
               std::chrono::milliseconds patience = std::chrono::milliseconds(0));
  static constexpr std::chrono::milliseconds kPatientStep{150};
  // Ends the threads; questions not yet asked are answered Unknown.
  void stop();
  ApiLookupCounts counts() const;

  // The API path of one object: "/apis/scheduling.k8s.io/v1/priorityclasses/ai-batch".
  // "" when the name is not one the API accepts (then it cannot exist).
  static std::string pathOf(const ClusterRef& ref, const std::string& apiVersion);

 private:
  struct Batch;
  struct Question {
    ClusterRef ref;
    std::shared_ptr<Batch> batch;
  };
  void run();
  Presence ask(const ClusterRef& ref, std::optional<ClusterObject>& found);
  bool rememberedAbsent(const ClusterRef& ref, std::chrono::steady_clock::time_point now);
  void remember(const ClusterRef& ref, std::chrono::steady_clock::time_point now);
  static void answer(const Question& question, Presence presence,
                     std::optional<ClusterObject> found = std::nullopt);

  ApiClient client_;
  const ServedVersion servedVersion_;
  const ApiLookupOptions options_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Question> queue_;
  size_t asking_ = 0;
  bool stopping_ = false;
  std::map<ClusterRef, std::chrono::steady_clock::time_point> absentUntil_;
  ApiLookupCounts counts_;
  std::vector<std::thread> threads_;
};

}  // namespace aiadmit
