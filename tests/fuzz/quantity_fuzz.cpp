// Kubernetes quantities: parsing never crashes and its answers agree; a
// number takes every suffix, and the SI and exponent spellings of one amount
// ("1.5k", "1.5e3") are the same value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "webhook/model/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto quantity = aiadmit::Quantity::parse(text);
  if (!quantity) return 0;
  const auto whole = quantity->wholeValue();
  if (whole && !quantity->isWholeNumber()) __builtin_trap();
  if (whole && (*whole < 0) != quantity->isNegative()) __builtin_trap();
  if (whole && (*whole == 0) != quantity->isZero()) __builtin_trap();
  (void)quantity->approximate();

  if (text.find_first_not_of("+-.0123456789") != std::string_view::npos) return 0;
  const std::pair<const char*, const char*> spellings[] = {
      {"n", "e-9"}, {"u", "e-6"}, {"m", "e-3"}, {"k", "e3"},  {"M", "E6"},
      {"G", "e9"},  {"T", "e12"}, {"P", "e15"}, {"E", "e18"}, {"", "e0"}};
  for (const auto& [suffix, exponent] : spellings) {
    const auto si = aiadmit::Quantity::parse(std::string(text) + suffix);
    const auto decimal = aiadmit::Quantity::parse(std::string(text) + exponent);
    if (!si || !decimal || !si->sameValue(*decimal)) __builtin_trap();
  }
  for (const char* binary : {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}) {
    if (!aiadmit::Quantity::parse(std::string(text) + binary)) __builtin_trap();
  }
  return 0;
}
