// Parsing JSON into a RapidJSON document: in place or into a copy, with the
// nesting depth and the number of values bounded in the same pass. The copy
// goes through a short reader for the JSON the API server sends
// (json_parse.cpp), held equal to RapidJSON's own reader by the differential
// fuzz target tests/fuzz/json_short_reader_fuzz.cpp.
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "webhook/codec/json.h"

namespace aiadmit {

// Passes every SAX event on to `handler` (a RapidJSON document, usually).
// Filters derive from it and hide only the events they look at.
template <typename Handler>
class ForwardingHandler {
 public:
  explicit ForwardingHandler(Handler& handler) : handler_(handler) {}

  bool Null() { return handler_.Null(); }
  bool Bool(bool b) { return handler_.Bool(b); }
  bool Int(int i) { return handler_.Int(i); }
  bool Uint(unsigned u) { return handler_.Uint(u); }
  bool Int64(int64_t i) { return handler_.Int64(i); }
  bool Uint64(uint64_t u) { return handler_.Uint64(u); }
  bool Double(double d) { return handler_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
    return handler_.RawNumber(s, n, copy);
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return handler_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return handler_.Key(s, n, copy); }
  bool StartObject() { return handler_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return handler_.EndObject(n); }
  bool StartArray() { return handler_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return handler_.EndArray(n); }

 protected:
  Handler& handler_;
};

// A count with a bound: take() counts one more and says whether it is still
// within the bound; once it is not, `exceeded` stays set.
struct BoundedCount {
  size_t bound;
  size_t taken = 0;
  bool exceeded = false;

  bool take() {
    if (++taken <= bound) return true;
    exceeded = true;
    return false;
  }
};

// Forwards SAX events while counting depth, refusing nesting deeper than
// `maxDepth` in the same pass so that no recursive walk further down can
// exhaust the stack.
template <typename Handler>
class DepthLimiter : public ForwardingHandler<Handler> {
 protected:
  using ForwardingHandler<Handler>::handler_;

 public:
  DepthLimiter(Handler& handler, size_t maxDepth)
      : ForwardingHandler<Handler>(handler), depth_{.bound = maxDepth} {}

  bool StartObject() { return depth_.take() && handler_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) {
    --depth_.taken;
    return handler_.EndObject(n);
  }
  bool StartArray() { return depth_.take() && handler_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) {
    --depth_.taken;
    return handler_.EndArray(n);
  }
  bool tooDeep() const { return depth_.exceeded; }

 private:
  BoundedCount depth_;
};

// Parses `text` in place into `document` (strings point into `text`, which
// must outlive the document), refusing nesting deeper than `maxDepth` in the
// same pass so that no recursive walk further down can exhaust the stack.
// Validates UTF-8. Returns "" on success, else what is wrong and where.
std::string parseJsonInSitu(char* text, size_t size, size_t maxDepth, JsonDocument& document);

// A member a parse leaves out of the document: `key`, in each object that
// `path` leads to from the top object down (at each step, the keys that
// lead on: several where paths share the rest). Its value is still read to
// the end, and a malformed one refused.
struct OmittedMember {
  std::span<const std::span<const std::string_view>> path;
  std::string_view key;
};

// The same for a copy of `text` made in `buffer`, which the document's
// strings then point into (it must outlive the document): the same document
// and the same errors. The JSON the API server sends (ASCII, integers) is
// read by a shorter reader than RapidJSON's (webhook/codec/json_parse.cpp).
// Leaves out the `omitted` member, when given, and refuses a document of
// more than `maxValues` values (keys aside; the omitted member's are not
// counted where the short reader takes the text).
std::string parseJsonCopy(std::string_view text, size_t maxDepth, std::string& buffer,
                          JsonDocument& document, const OmittedMember* omitted = nullptr,
                          size_t maxValues = std::numeric_limits<size_t>::max());

}  // namespace aiadmit
