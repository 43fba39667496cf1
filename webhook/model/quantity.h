// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource) in the
// forms a manifest can carry them: "1", 1, "1e0", "1000m", "0.5", "1Ki", "-1".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "webhook/codec/json.h"

namespace aiadmit {

// An exact quantity: mantissa * 10^exponent10 * 2^exponent2 (binary suffixes).
class Quantity {
 public:
  static std::optional<Quantity> parse(std::string_view text);
  // A JSON number or string, as the API server accepts both in resources.
  static std::optional<Quantity> fromJson(const JsonValue& value);

  bool isNegative() const { return negative_ && !isZero(); }
  bool isZero() const { return mantissa_ == 0; }
  bool isWholeNumber() const;
  // The value when it is a whole number that fits; nullopt otherwise.
  std::optional<int64_t> wholeValue() const;
  // Approximate value for messages and comparisons of non-integers.
  double approximate() const;
  // Whether both denote the same amount, whatever their spelling: "1", 1,
  // "1e0" and "1000m" are equal, and so are "1Ki" and "1024".
  bool sameValue(const Quantity& other) const;

 private:
  static Quantity ofInteger(bool negative, uint64_t magnitude);

  bool negative_ = false;
  uint64_t mantissa_ = 0;  // trailing zeros folded into exponent10_
  int exponent10_ = 0;
  int exponent2_ = 0;
  bool droppedFraction_ = false;
};

// Whether `value` is a quantity of exactly 0, whatever its spelling (0, "0",
// "0m", "0Gi", "-0"). Of an extended resource it asks for none: the API
// server accepts it, and kube-scheduler and the kubelet's device manager skip
// it, so the container runs as one without that resource.
bool isZeroQuantity(const JsonValue& value);

// The text of a quantity as the manifest wrote it, for messages.
std::string quantityText(const JsonValue& value);

}  // namespace aiadmit
