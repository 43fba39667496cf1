// Any profile file is loaded or refused with errors naming a file position;
// never a crash. Seeds: profiles/*.yaml and tests/golden/profiles.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mutators/mutator.h"
#include "webhook/policy/profile_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const aiadmit::ProfileLoadResult result =
      aiadmit::loadProfileText(text, "fuzz.yaml", aiadmit::mutationSwitches());
  if (result.ok() == !result.errors.empty()) __builtin_trap();
  for (const aiadmit::ProfileError& error : result.errors) {
    if (error.format().rfind("fuzz.yaml", 0) != 0) __builtin_trap();
  }
  return 0;
}
