// The request path of `serve` without its transport: a body posted to
// /mutate or /validate is answered by answerReview on an engine loaded from
// a profile directory, as `serve` loads it. Rule and golden tests decide
// in-process; the transport has its own tests over TLS (tests/serving).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit::testing {

class EngineWebhook {
 public:
  struct Options {
    std::string profilesDir;  // default: the repository's profiles/
  };
  EngineWebhook() : EngineWebhook(Options{}) {}
  explicit EngineWebhook(const Options& options) {
    const std::string dir =
        options.profilesDir.empty() ? sourceDir() + "/profiles" : options.profilesDir;
    ProfileLoadResult loaded = loadProfileDirectory(dir, mutationSwitches());
    EXPECT_TRUE(loaded.ok()) << dir;
    if (loaded.set != nullptr) engine_ = std::make_unique<Engine>(std::move(loaded.set));
  }

  // The status and body `serve` would answer at `path` ("/mutate" or "/validate").
  HttpResponse post(const std::string& path, const std::string& body) const {
    HttpResponse response;
    EXPECT_TRUE(engine_ != nullptr);
    EXPECT_TRUE(path == "/mutate" || path == "/validate") << path;
    if (engine_ == nullptr) return response;
    const ReviewAnswer answer =
        answerReview(*engine_, path == "/mutate" ? Endpoint::Mutate : Endpoint::Validate, body);
    response.status = answer.httpStatus;
    response.body = answer.body;
    return response;
  }

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace aiadmit::testing
