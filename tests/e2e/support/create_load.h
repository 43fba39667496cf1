// GPU Pods created through the API server by a few clients at once while a
// fault happens, each create's outcome kept with its time, so that a test
// can say what the API server's callers saw in any stretch of the run.
//
// Each create is a server-side dry run (dryRun=All) of a bare GPU Pod in an
// opted-in namespace: it goes through all of admission, aiadmit's Fail tier
// (applied.*) among it, and stores nothing, so a run of thousands leaves no
// Pods behind for the scheduler or the namespace's deletion.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace aiadmit::e2e {

using Clock = std::chrono::steady_clock;

enum class CreateOutcome {
  // Stored (as a dry run) with aiadmit's class stamp.
  Created,
  // Refused because the API server could not call aiadmit's Fail tier
  // ("failed calling webhook"), or created without aiadmit's stamp.
  RefusedByFailTier,
  // No answer from the API server, or an error of its own (it restarts).
  ApiServerFailed,
};

struct CreateRecord {
  Clock::time_point started;
  Clock::time_point finished;
  CreateOutcome outcome;
  // What the API server said, when it was not a create.
  std::string error;
};

// What the creates started in a stretch of time came to.
struct LoadSummary {
  int attempted = 0;
  int created = 0;
  int refused = 0;
  int apiServerFailed = 0;
  // The longest time in the stretch with no create finishing successfully.
  double longestGapSeconds = 0;
  // From the first refused or failed create's start to the last one's end:
  // how long callers saw errors.
  double failingSeconds = 0;
  // One refusal's or failure's message, for the test's output.
  std::string sampleError;
};

class CreateLoad {
 public:
  // Starts `clients` threads, each creating a Pod in `namespaceName` every
  // `interval` (at once when the previous create took longer).
  CreateLoad(const std::string& namespaceName, int clients, std::chrono::milliseconds interval);
  ~CreateLoad();
  CreateLoad(const CreateLoad&) = delete;
  CreateLoad& operator=(const CreateLoad&) = delete;

  // Waits until `count` more creates have succeeded; false after `timeout`.
  bool waitForCreated(int count, std::chrono::seconds timeout);
  void stop();
  LoadSummary summary(Clock::time_point from, Clock::time_point to) const;

 private:
  void run();
  void record(CreateRecord entry);

  std::string namespace_;
  std::chrono::milliseconds interval_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> created_{0};
  mutable std::mutex mutex_;
  std::vector<CreateRecord> records_;
  std::vector<std::thread> threads_;
};

}  // namespace aiadmit::e2e
