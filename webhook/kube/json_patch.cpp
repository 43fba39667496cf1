#include "webhook/kube/json_patch.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

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
  PatchBuilder() : writer_(buffer_) { writer_.StartArray(); }

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
    } else if (before != after) {
      operation("replace", &after);
    }
  }

 private:
  using Token = std::variant<std::string_view, rapidjson::SizeType>;

  static std::string_view nameOf(const JsonValue& name) {
    return {name.GetString(), name.GetStringLength()};
  }

  void diffObjects(const JsonValue& before, const JsonValue& after) {
    for (auto it = before.MemberBegin(); it != before.MemberEnd(); ++it) {
      if (!after.HasMember(it->name)) {
        path_.emplace_back(nameOf(it->name));
        operation("remove", nullptr);
        path_.pop_back();
      }
    }
    // Members usually keep their order in a copy: look at the same position
    // first and search only when it differs.
    auto hint = before.MemberBegin();
    for (auto it = after.MemberBegin(); it != after.MemberEnd(); ++it) {
      auto old = before.MemberEnd();
      if (hint != before.MemberEnd() && hint->name == it->name) {
        old = hint;
      } else {
        old = before.FindMember(it->name);
      }
      path_.emplace_back(nameOf(it->name));
      if (old == before.MemberEnd()) {
        operation("add", &it->value);
      } else {
        diff(old->value, it->value);
        hint = old + 1;
      }
      path_.pop_back();
    }
  }

  void diffArrays(const JsonValue& before, const JsonValue& after) {
    const rapidjson::SizeType common = std::min(before.Size(), after.Size());
    // Remove from the end first so that earlier indices stay valid.
    for (rapidjson::SizeType i = before.Size(); i > after.Size(); --i) {
      path_.emplace_back(i - 1);
      operation("remove", nullptr);
      path_.pop_back();
    }
    for (rapidjson::SizeType i = 0; i < common; ++i) {
      path_.emplace_back(i);
      diff(before[i], after[i]);
      path_.pop_back();
    }
    for (rapidjson::SizeType i = common; i < after.Size(); ++i) {
      path_.emplace_back(i);
      operation("add", &after[i]);
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
  size_t operations_ = 0;
};

}  // namespace

std::string diffToJsonPatch(const JsonValue& before, const JsonValue& after) {
  PatchBuilder builder;
  builder.diff(before, after);
  return builder.finish();
}

}  // namespace aiadmit
