// Engine time per review, without TLS or HTTP: decode, classify, select,
// mutate or validate, encode. Run: build/bench/engine_bench
#include <benchmark/benchmark.h>
#include <rapidjson/document.h>

#include "bench/bench_inputs.h"
#include "webhook/engine/engine.h"

namespace aiadmit::bench {
namespace {

const std::string& review(const std::string& name) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(name, name == "big-pod" ? bigPodReview(1 << 20) : loadReview(name)).first;
  }
  return it->second;
}

const Engine& engineWith(size_t extraProfiles) {
  static std::map<size_t, std::unique_ptr<Engine>> engines;
  auto& engine = engines[extraProfiles];
  if (!engine) engine = std::make_unique<Engine>(profilesWithExtra(extraProfiles));
  return *engine;
}

void answer(benchmark::State& state, const std::string& name, Endpoint endpoint, size_t extra) {
  const std::string& body = review(name);
  const Engine& engine = engineWith(extra);
  for (auto _ : state) {
    ReviewAnswer result = answerReview(engine, endpoint, body);
    benchmark::DoNotOptimize(result.body.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}

// RapidJSON parse alone: the floor of any decode.
void parseOnly(benchmark::State& state, const std::string& name) {
  const std::string& body = review(name);
  for (auto _ : state) {
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    benchmark::DoNotOptimize(doc.IsObject());
  }
}

void registerAll() {
  for (const char* name : {"gpu-pod", "gpu-deployment", "plain-pod", "big-pod"}) {
    benchmark::RegisterBenchmark((std::string("parse/") + name).c_str(), parseOnly, name);
    for (size_t extra : {size_t{0}, size_t{997}}) {
      const std::string suffix = "/" + std::string(name) + "/profiles:" + std::to_string(3 + extra);
      benchmark::RegisterBenchmark(("mutate" + suffix).c_str(), answer, name, Endpoint::Mutate,
                                   extra);
      benchmark::RegisterBenchmark(("validate" + suffix).c_str(), answer, name, Endpoint::Validate,
                                   extra);
    }
  }
}

}  // namespace
}  // namespace aiadmit::bench

int main(int argc, char** argv) {
  aiadmit::bench::registerAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
