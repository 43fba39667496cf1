// Kubernetes quantities: parsing never crashes and its answers agree.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "webhook/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto quantity = aiadmit::Quantity::parse(text);
  if (!quantity) return 0;
  const auto whole = quantity->wholeValue();
  if (whole && !quantity->isWholeNumber()) __builtin_trap();
  if (whole && (*whole < 0) != quantity->isNegative()) __builtin_trap();
  if (whole && (*whole == 0) != quantity->isZero()) __builtin_trap();
  (void)quantity->approximate();
  return 0;
}
