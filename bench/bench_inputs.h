// Inputs shared by the engine benchmarks and the HTTP benchmark script: the
// reviews under bench/reviews, a 1 MiB Pod review and large profile sets.
#pragma once

#include <memory>
#include <string>

#include "webhook/policy/profile_set.h"

namespace aiadmit::bench {

std::string reviewPath(const std::string& name);  // bench/reviews/NAME.json
std::string loadReview(const std::string& name);

// A GPU Pod review of about `bytes` bytes: many containers, each with many
// env entries, as generated manifests of large inference graphs look.
std::string bigPodReview(size_t bytes);

// The shipped profiles plus `extra` namespace-scoped ones, as a large
// multi-tenant cluster would have (one per team namespace and class).
std::shared_ptr<const ProfileSet> profilesWithExtra(size_t extra);

}  // namespace aiadmit::bench
