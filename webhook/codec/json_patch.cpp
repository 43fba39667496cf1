#include "webhook/codec/json_patch.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace aiadmit {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// One step of the JSON Pointer of the current position: a member's name or
// an element's index. The steps live on the call stack, each linked to its
// parent's, and the pointer is rendered only when an operation is written:
// most of an object (managedFields, status, unchanged containers) is equal
// and needs no path at all.
struct PathStep {
  const PathStep* parent;
  std::string_view name;
  rapidjson::SizeType index;
  bool isIndex;
};

// Walks both documents together.
class PatchBuilder {
 public:
  explicit PatchBuilder(std::vector<std::string>* paths) : writer_(buffer_), paths_(paths) {
    writer_.StartArray();
  }

  std::string finish() {
    if (operations_ == 0) return {};
    writer_.EndArray();
    return {buffer_.GetString(), buffer_.GetSize()};
  }

  void diff(const JsonValue& before, const JsonValue& after, const PathStep* at) {
    if (sameBits(before, after)) return;
    if (before.IsObject() && after.IsObject()) {
      diffObjects(before, after, at);
    } else if (before.IsArray() && after.IsArray()) {
      diffArrays(before, after, at);
    } else if (!sameScalar(before, after)) {
      operation("replace", &after, at);
    }
  }

 private:
  using Member = JsonValue::Member;

  static std::string_view nameOf(const JsonValue& name) {
    return {name.GetString(), name.GetStringLength()};
  }

  // Values that are the same bit for bit are the same value: a scalar, a
  // string of the same text at the same address, a container over the same
  // members. Most of a copy is: its strings are the original's own.
  static bool sameBits(const JsonValue& a, const JsonValue& b) {
    return std::memcmp(&a, &b, sizeof(JsonValue)) == 0;
  }

  static bool sameString(const JsonValue& a, const JsonValue& b) {
    if (sameBits(a, b)) return true;
    const rapidjson::SizeType length = a.GetStringLength();
    if (length != b.GetStringLength()) return false;
    const char* x = a.GetString();
    const char* y = b.GetString();
    return x == y || std::memcmp(x, y, length) == 0;
  }

  static bool sameScalar(const JsonValue& a, const JsonValue& b) {
    if (a.IsString() && b.IsString()) return sameString(a, b);
    return a == b;
  }

  // The members of an object as a range; RapidJSON recomputes its end at
  // every comparison of an iterator.
  struct Members {
    const Member* begin;
    const Member* end;
    explicit Members(const JsonValue& object)
        : begin(object.MemberCount() == 0 ? nullptr : &*object.MemberBegin()),
          end(begin + object.MemberCount()) {}
    size_t size() const { return static_cast<size_t>(end - begin); }
  };

  // The first member of `members` named `name`, looked for at `hint` first:
  // members usually keep their order in a copy.
  static const Member* find(const Members& members, const Member* hint, const JsonValue& name) {
    if (hint != members.end && sameString(hint->name, name)) return hint;
    for (const Member* it = members.begin; it != members.end; ++it) {
      if (sameString(it->name, name)) return it;
    }
    return members.end;
  }

  static PathStep member(const PathStep* parent, const JsonValue& name) {
    return {parent, nameOf(name), 0, false};
  }
  static PathStep element(const PathStep* parent, rapidjson::SizeType index) {
    return {parent, {}, index, true};
  }

  void diffObjects(const JsonValue& beforeObject, const JsonValue& afterObject,
                   const PathStep* at) {
    const Members before(beforeObject);
    const Members after(afterObject);
    // Most objects keep their members, in order: compared pairwise, with no
    // search and nothing removed.
    bool sameNames = before.size() == after.size();
    for (size_t i = 0; sameNames && i < before.size(); ++i) {
      sameNames = sameString(before.begin[i].name, after.begin[i].name);
    }
    if (sameNames) {
      for (size_t i = 0; i < before.size(); ++i) {
        if (sameBits(before.begin[i].value, after.begin[i].value)) continue;
        const PathStep step = member(at, after.begin[i].name);
        diff(before.begin[i].value, after.begin[i].value, &step);
      }
      return;
    }
    const Member* next = after.begin;
    for (const Member* it = before.begin; it != before.end; ++it) {
      const Member* kept = find(after, next, it->name);
      if (kept != after.end) {
        next = kept + 1;
        continue;
      }
      const PathStep step = member(at, it->name);
      operation("remove", nullptr, &step);
    }
    const Member* hint = before.begin;
    for (const Member* it = after.begin; it != after.end; ++it) {
      const Member* old = find(before, hint, it->name);
      const PathStep step = member(at, it->name);
      if (old == before.end) {
        operation("add", &it->value, &step);
      } else {
        diff(old->value, it->value, &step);
        hint = old + 1;
      }
    }
  }

  void diffArrays(const JsonValue& before, const JsonValue& after, const PathStep* at) {
    const rapidjson::SizeType beforeSize = before.Size();
    const rapidjson::SizeType afterSize = after.Size();
    const rapidjson::SizeType common = std::min(beforeSize, afterSize);
    // Remove from the end first so that earlier indices stay valid.
    for (rapidjson::SizeType i = beforeSize; i > afterSize; --i) {
      const PathStep step = element(at, i - 1);
      operation("remove", nullptr, &step);
    }
    const JsonValue* old = common == 0 ? nullptr : &*before.Begin();
    const JsonValue* now = afterSize == 0 ? nullptr : &*after.Begin();
    for (rapidjson::SizeType i = 0; i < common; ++i) {
      const PathStep step = element(at, i);
      diff(old[i], now[i], &step);
    }
    for (rapidjson::SizeType i = common; i < afterSize; ++i) {
      const PathStep step = element(at, i);
      operation("add", &now[i], &step);
    }
  }

  // The pointer of `at`, root first.
  void render(const PathStep* at) {
    if (at == nullptr) return;
    render(at->parent);
    if (at->isIndex) {
      pointer_.push_back('/');
      pointer_ += std::to_string(at->index);
    } else {
      appendEscapedPointerToken(pointer_, at->name);
    }
  }

  void operation(const char* op, const JsonValue* value, const PathStep* at) {
    ++operations_;
    pointer_.clear();
    render(at);
    writer_.StartObject();
    writer_.Key("op");
    writer_.String(op);
    writer_.Key("path");
    writer_.String(pointer_.data(), static_cast<rapidjson::SizeType>(pointer_.size()));
    if (paths_ != nullptr) paths_->push_back(pointer_);
    if (value != nullptr) {
      writer_.Key("value");
      value->Accept(writer_);
    }
    writer_.EndObject();
  }

  rapidjson::StringBuffer buffer_;
  Writer writer_;
  std::string pointer_;
  std::vector<std::string>* paths_;
  size_t operations_ = 0;
};

}  // namespace

std::string diffToJsonPatch(const JsonValue& before, const JsonValue& after,
                            std::vector<std::string>* paths) {
  PatchBuilder builder(paths);
  builder.diff(before, after, nullptr);
  return builder.finish();
}

}  // namespace aiadmit
