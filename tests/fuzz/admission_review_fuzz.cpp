// Any body on /mutate and /validate gets a well-formed answer and no crash,
// leak or undefined behaviour. Seeds: bench/reviews, shared/corpus/admissionreviews.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mutators/mutator.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace {
const aiadmit::Engine& engine() {
  static const aiadmit::Engine instance(
      aiadmit::loadProfileDirectory(AIADMIT_SOURCE_DIR "/profiles", aiadmit::mutationSwitches())
          .set);
  return instance;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (auto endpoint : {aiadmit::Endpoint::Mutate, aiadmit::Endpoint::Validate}) {
    const aiadmit::ReviewAnswer answer = aiadmit::answerReview(engine(), endpoint, body);
    if (answer.body.empty() || answer.body.front() != '{') __builtin_trap();
    if (answer.httpStatus != 200 && answer.httpStatus != 400) __builtin_trap();
  }
  return 0;
}
