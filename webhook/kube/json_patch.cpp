#include "webhook/kube/json_patch.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstring>
#include <variant>
#include <vector>

namespace aiadmit {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// Walks both documents together. The JSON Pointer of the current position is
// kept as a stack of tokens and rendered only when an operation is written:
// most of an object (managedFields, status, unchanged containers) is equal
// and needs no path at all.
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

  void diff(const JsonValue& before, const JsonValue& after) {
    if (before.IsObject() && after.IsObject()) {
      diffObjects(before, after);
    } else if (before.IsArray() && after.IsArray()) {
      diffArrays(before, after);
    } else if (!sameScalar(before, after)) {
      operation("replace", &after);
    }
  }

 private:
  using Token = std::variant<std::string_view, rapidjson::SizeType>;
  using Member = JsonValue::Member;

  static std::string_view nameOf(const JsonValue& name) {
    return {name.GetString(), name.GetStringLength()};
  }

  // The copy's strings are the original's own, so most compare by address.
  static bool sameString(const JsonValue& a, const JsonValue& b) {
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

  void diffMember(const Member& before, const Member& after) {
    path_.emplace_back(nameOf(after.name));
    diff(before.value, after.value);
    path_.pop_back();
  }

  void diffObjects(const JsonValue& beforeObject, const JsonValue& afterObject) {
    const Members before(beforeObject);
    const Members after(afterObject);
    // Most objects keep their members, in order: compared pairwise, with no
    // search and nothing removed.
    bool sameNames = before.size() == after.size();
    for (size_t i = 0; sameNames && i < before.size(); ++i) {
      sameNames = sameString(before.begin[i].name, after.begin[i].name);
    }
    if (sameNames) {
      for (size_t i = 0; i < before.size(); ++i) diffMember(before.begin[i], after.begin[i]);
      return;
    }
    const Member* next = after.begin;
    for (const Member* it = before.begin; it != before.end; ++it) {
      const Member* kept = find(after, next, it->name);
      if (kept != after.end) {
        next = kept + 1;
        continue;
      }
      path_.emplace_back(nameOf(it->name));
      operation("remove", nullptr);
      path_.pop_back();
    }
    const Member* hint = before.begin;
    for (const Member* it = after.begin; it != after.end; ++it) {
      const Member* old = find(before, hint, it->name);
      if (old == before.end) {
        path_.emplace_back(nameOf(it->name));
        operation("add", &it->value);
        path_.pop_back();
      } else {
        diffMember(*old, *it);
        hint = old + 1;
      }
    }
  }

  void diffArrays(const JsonValue& before, const JsonValue& after) {
    const rapidjson::SizeType beforeSize = before.Size();
    const rapidjson::SizeType afterSize = after.Size();
    const rapidjson::SizeType common = std::min(beforeSize, afterSize);
    // Remove from the end first so that earlier indices stay valid.
    for (rapidjson::SizeType i = beforeSize; i > afterSize; --i) {
      path_.emplace_back(i - 1);
      operation("remove", nullptr);
      path_.pop_back();
    }
    const JsonValue* old = common == 0 ? nullptr : &*before.Begin();
    const JsonValue* now = afterSize == 0 ? nullptr : &*after.Begin();
    for (rapidjson::SizeType i = 0; i < common; ++i) {
      path_.emplace_back(i);
      diff(old[i], now[i]);
      path_.pop_back();
    }
    for (rapidjson::SizeType i = common; i < afterSize; ++i) {
      path_.emplace_back(i);
      operation("add", &now[i]);
      path_.pop_back();
    }
  }

  void operation(const char* op, const JsonValue* value) {
    ++operations_;
    pointer_.clear();
    for (const Token& token : path_) {
      if (const auto* name = std::get_if<std::string_view>(&token)) {
        appendEscapedPointerToken(pointer_, *name);
      } else {
        pointer_.push_back('/');
        pointer_ += std::to_string(std::get<rapidjson::SizeType>(token));
      }
    }
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
  std::vector<Token> path_;
  std::string pointer_;
  std::vector<std::string>* paths_;
  size_t operations_ = 0;
};

}  // namespace

std::string diffToJsonPatch(const JsonValue& before, const JsonValue& after,
                            std::vector<std::string>* paths) {
  PatchBuilder builder(paths);
  builder.diff(before, after);
  return builder.finish();
}

}  // namespace aiadmit
