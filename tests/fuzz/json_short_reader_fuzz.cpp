// The short reader is kept only because it gives RapidJSON's document: for
// every input, parseJsonCopy must give the document and the error that
// RapidJSON's reader gives, with and without the member a review's decoder
// leaves out. Seeds: bench/reviews, shared/corpus/admissionreviews.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "tests/support/json_differential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const aiadmit::OmittedMember* omitted :
       {static_cast<const aiadmit::OmittedMember*>(nullptr), &aiadmit::testing::kNoManagedFields}) {
    const std::string difference = aiadmit::testing::differenceFromRapidJson(text, omitted);
    if (!difference.empty()) {
      std::fprintf(stderr, "short reader differs from RapidJSON: %s\n", difference.c_str());
      __builtin_trap();
    }
  }
  return 0;
}
