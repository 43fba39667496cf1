// Cost of profiles: loading a directory of 1,000 profiles (parse, validate,
// tie detection, index), watching it for changes, and selecting one per
// request with the 3 shipped profiles and with 1,000.
//
// The 1,000 are shaped like a large multi-team cluster: for each of 333 teams
// and each class, one profile scoped to the team's namespace and its
// sub-namespaces (team-N, team-N-*), plus the three class defaults; a third of
// them also select by label.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "mutators/mutator.h"
#include "webhook/policy/classify.h"
#include "webhook/policy/profile_loader.h"
#include "webhook/serving/profile_watch.h"

namespace aiadmit {
namespace {

namespace fs = std::filesystem;

std::string profileDocument(const std::string& name, std::string_view cls, const std::string& ns,
                            bool byLabel) {
  std::string out = "apiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: " + name +
                    "\nspec:\n  class: " + std::string(cls) + "\n";
  if (!ns.empty()) {
    out += "  scope:\n    namespaces: [" + ns + ", \"" + ns + "-*\"]\n";
    if (byLabel) out += "    matchLabels: {tier: gold}\n";
  }
  out +=
      "  gpu:\n    resourceName: nvidia.com/gpu\n    gpusPerNode: 8\n"
      "  placement:\n    nodeSelector: {accelerator: nvidia}\n"
      "    tolerations:\n      - {key: accelerator, operator: Equal, value: gpu, effect: "
      "NoSchedule}\n"
      "  scheduling:\n    priorityClassName: ai-" +
      std::string(cls) + "\n";
  return out;
}

// A directory of one file per profile, as a ConfigMap volume would hold them.
class ThousandProfiles {
 public:
  ThousandProfiles() {
    std::string pattern = (fs::temp_directory_path() / "aiadmit-bench-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    int written = 0;
    for (std::string_view cls : {"training", "batch", "realtime"}) {
      write(std::string(cls), profileDocument(std::string(cls), cls, "", false));
      ++written;
    }
    for (int team = 0; written < 1000; ++team) {
      for (std::string_view cls : {"training", "batch", "realtime"}) {
        if (written == 1000) break;
        const std::string ns = "team-" + std::to_string(team);
        write(ns + "-" + std::string(cls),
              profileDocument(ns + "-" + std::string(cls), cls, ns, team % 3 == 0));
        ++written;
      }
    }
  }
  ~ThousandProfiles() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }

 private:
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name + ".yaml") << text;
  }
  std::string dir_;
};

const ThousandProfiles& thousandProfiles() {
  static const ThousandProfiles profiles;
  return profiles;
}

void BM_LoadThousandProfiles(benchmark::State& state) {
  const std::string& dir = thousandProfiles().dir();
  for (auto _ : state) {
    ProfileLoadResult result = loadProfileDirectory(dir, mutationSwitches());
    if (!result.ok()) state.SkipWithError(result.errors.front().format().c_str());
    benchmark::DoNotOptimize(result.set);
  }
  state.counters["profiles"] = 1000;
}
BENCHMARK(BM_LoadThousandProfiles)->Unit(benchmark::kMillisecond);

void BM_LoadShippedProfiles(benchmark::State& state) {
  for (auto _ : state) {
    ProfileLoadResult result =
        loadProfileDirectory(AIADMIT_DEFAULT_PROFILES_DIR, mutationSwitches());
    if (!result.ok()) state.SkipWithError(result.errors.front().format().c_str());
    benchmark::DoNotOptimize(result.set);
  }
}
BENCHMARK(BM_LoadShippedProfiles)->Unit(benchmark::kMicrosecond);

// What the server's watcher pays once a second to notice a change.
void BM_WatchThousandProfiles(benchmark::State& state) {
  ProfileWatch watch(thousandProfiles().dir());
  for (auto _ : state) {
    if (watch.changed()) state.SkipWithError("nothing changed");
  }
}
BENCHMARK(BM_WatchThousandProfiles)->Unit(benchmark::kMillisecond);

// One selection as the engine makes it per request: the class, the
// namespace, the object's and the template's labels.
void select(benchmark::State& state, const ProfileSet& set, std::string_view ns,
            const char* labelsJson, const char* expected) {
  JsonDocument labels;
  labels.Parse(labelsJson);
  for (auto _ : state) {
    ProfileSelection selection = set.select(WorkloadClass::Realtime, ns, &labels, nullptr, "");
    benchmark::DoNotOptimize(selection);
    if (selection.profile == nullptr || selection.profile->name != expected) {
      state.SkipWithError("unexpected profile");
      break;
    }
  }
}

std::shared_ptr<const ProfileSet> loaded(const std::string& dir) {
  static std::map<std::string, std::shared_ptr<const ProfileSet>> cache;
  auto& set = cache[dir];
  if (!set) set = loadProfileDirectory(dir, mutationSwitches()).set;
  return set;
}

void BM_SelectShipped(benchmark::State& state) {
  select(state, *loaded(AIADMIT_DEFAULT_PROFILES_DIR), "default", R"({"app":"vllm"})", "realtime");
}
BENCHMARK(BM_SelectShipped);

void BM_SelectThousandExactNamespace(benchmark::State& state) {
  select(state, *loaded(thousandProfiles().dir()), "team-200", R"({"app":"vllm"})",
         "team-200-realtime");
}
BENCHMARK(BM_SelectThousandExactNamespace);

// The worst case: no exact namespace, so every pattern profile of the class is
// tried before the class default wins.
void BM_SelectThousandFallsThroughToDefault(benchmark::State& state) {
  select(state, *loaded(thousandProfiles().dir()), "unlisted", R"({"app":"vllm"})", "realtime");
}
BENCHMARK(BM_SelectThousandFallsThroughToDefault);

void BM_SelectThousandPatternWithLabel(benchmark::State& state) {
  select(state, *loaded(thousandProfiles().dir()), "team-201-dev", R"({"tier":"gold"})",
         "team-201-realtime");
}
BENCHMARK(BM_SelectThousandPatternWithLabel);

}  // namespace
}  // namespace aiadmit

BENCHMARK_MAIN();
