#include "webhook/model/quantity.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aiadmit {

namespace {

struct Suffix {
  std::string_view text;
  int exponent10;
  int exponent2;
};

// Longest first so that "Ki" is not read as "K"+"i".
constexpr Suffix kSuffixes[] = {
    {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50},
    {"Ei", 0, 60}, {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},
    {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},
};

constexpr uint64_t kMaxMantissa = std::numeric_limits<uint64_t>::max() / 10 - 10;

// "e3", "E-2": a decimal exponent. "E" alone is the exa suffix and "Ei" the
// exbi suffix: nullopt, and the suffix table decides.
std::optional<int> decimalExponent(std::string_view rest) {
  if (rest.empty() || (rest[0] != 'e' && rest[0] != 'E')) return std::nullopt;
  const std::string_view text = rest.substr(1);
  size_t j = 0;
  bool negative = false;
  if (j < text.size() && (text[j] == '+' || text[j] == '-')) {
    negative = text[j] == '-';
    ++j;
  }
  if (j >= text.size()) return std::nullopt;
  int exponent = 0;
  for (; j < text.size(); ++j) {
    const char c = text[j];
    if (c < '0' || c > '9' || exponent > 10000) return std::nullopt;
    exponent = exponent * 10 + (c - '0');
  }
  return negative ? -exponent : exponent;
}

const Suffix* suffixOf(std::string_view rest) {
  for (const Suffix& suffix : kSuffixes) {
    if (rest == suffix.text) return &suffix;
  }
  return nullptr;
}

}  // namespace

std::optional<Quantity> Quantity::parse(std::string_view text) {
  Quantity q;
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    q.negative_ = text[i] == '-';
    ++i;
  }
  bool sawDigit = false;
  bool sawPoint = false;
  int droppedDigits = 0;  // digits beyond uint64 precision, kept as exponent
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      sawDigit = true;
      if (q.mantissa_ > kMaxMantissa) {
        // Beyond 19 significant digits: keep the magnitude, and remember a
        // non-zero fraction so that "99999999999999999999.5" is not whole.
        if (!sawPoint) {
          ++droppedDigits;
        } else if (c != '0') {
          q.droppedFraction_ = true;
        }
        continue;
      }
      q.mantissa_ = q.mantissa_ * 10 + static_cast<uint64_t>(c - '0');
      if (sawPoint) --q.exponent10_;
    } else if (c == '.' && !sawPoint) {
      sawPoint = true;
    } else {
      break;
    }
  }
  if (!sawDigit) return std::nullopt;
  q.exponent10_ += droppedDigits;

  const std::string_view rest = text.substr(i);
  if (!rest.empty()) {
    if (const std::optional<int> exponent = decimalExponent(rest)) {
      q.exponent10_ += *exponent;
    } else if (const Suffix* suffix = suffixOf(rest)) {
      q.exponent10_ += suffix->exponent10;
      q.exponent2_ += suffix->exponent2;
    } else {
      return std::nullopt;
    }
  }
  while (q.mantissa_ != 0 && q.mantissa_ % 10 == 0) {
    q.mantissa_ /= 10;
    ++q.exponent10_;
  }
  if (q.mantissa_ == 0) q.exponent10_ = 0;
  return q;
}

Quantity Quantity::ofInteger(bool negative, uint64_t magnitude) {
  Quantity q;
  q.negative_ = negative;
  q.mantissa_ = magnitude;
  while (q.mantissa_ != 0 && q.mantissa_ % 10 == 0) {
    q.mantissa_ /= 10;
    ++q.exponent10_;
  }
  return q;
}

std::optional<Quantity> Quantity::fromJson(const JsonValue& value) {
  if (value.IsString()) return parse({value.GetString(), value.GetStringLength()});
  // Integers are the common case in manifests; read them without text.
  if (value.IsUint64()) return ofInteger(false, value.GetUint64());
  if (value.IsInt64()) {
    const int64_t n = value.GetInt64();
    return ofInteger(n < 0, n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n));
  }
  if (value.IsDouble()) {
    const double d = value.GetDouble();
    if (!std::isfinite(d)) return std::nullopt;
    char buffer[64];
    snprintf(buffer, sizeof buffer, "%.17g", d);
    return parse(buffer);
  }
  return std::nullopt;
}

bool Quantity::isWholeNumber() const {
  if (droppedFraction_) return false;
  if (mantissa_ == 0 || exponent10_ >= 0) return true;
  // "1.5Ki" is 1536: a binary multiplier can make a fraction whole.
  if (exponent10_ < -18 || exponent2_ > 60) return false;
  unsigned __int128 scaled = static_cast<unsigned __int128>(mantissa_) << exponent2_;
  unsigned __int128 divisor = 1;
  for (int k = 0; k < -exponent10_; ++k) divisor *= 10;
  return scaled % divisor == 0;
}

std::optional<int64_t> Quantity::wholeValue() const {
  if (!isWholeNumber()) return std::nullopt;
  if (exponent10_ > 18 || exponent2_ > 62) return std::nullopt;
  __int128 value = static_cast<__int128>(mantissa_) << exponent2_;
  for (int k = 0; k < exponent10_; ++k) {
    if (value > std::numeric_limits<int64_t>::max()) return std::nullopt;
    value *= 10;
  }
  for (int k = 0; k < -exponent10_; ++k) value /= 10;
  if (value > std::numeric_limits<int64_t>::max()) return std::nullopt;
  const auto result = static_cast<int64_t>(value);
  return negative_ ? -result : result;
}

double Quantity::approximate() const {
  const double magnitude =
      static_cast<double>(mantissa_) * std::pow(10.0, exponent10_) * std::ldexp(1.0, exponent2_);
  return negative_ ? -magnitude : magnitude;
}

bool Quantity::sameValue(const Quantity& other) const {
  if (isZero() || other.isZero()) return isZero() && other.isZero();
  if (negative_ != other.negative_) return false;
  // Scale both to the smaller exponents and compare exactly while the numbers
  // fit; beyond that the amounts are far from anything a manifest means, and
  // the approximation decides.
  constexpr unsigned __int128 kLimit = static_cast<unsigned __int128>(1) << 120;
  auto scaled = [&](const Quantity& q, unsigned __int128& out) {
    const int tens = q.exponent10_ - std::min(exponent10_, other.exponent10_);
    const int twos = q.exponent2_ - std::min(exponent2_, other.exponent2_);
    if (tens > 36 || twos > 120) return false;
    out = q.mantissa_;
    for (int k = 0; k < tens; ++k) {
      if (out > kLimit / 10) return false;
      out *= 10;
    }
    for (int k = 0; k < twos; ++k) {
      if (out > kLimit / 2) return false;
      out *= 2;
    }
    return true;
  };
  unsigned __int128 mine = 0, theirs = 0;
  if (scaled(*this, mine) && scaled(other, theirs)) return mine == theirs;
  const double a = approximate(), b = other.approximate();
  return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b));
}

bool isZeroQuantity(const JsonValue& value) {
  const auto quantity = Quantity::fromJson(value);
  return quantity && quantity->isZero();
}

std::string quantityText(const JsonValue& value) {
  if (value.IsString()) return {value.GetString(), value.GetStringLength()};
  if (value.IsNumber()) return toJson(value);
  return value.IsNull() ? "<null>" : "<not a quantity>";
}

}  // namespace aiadmit
