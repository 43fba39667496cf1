#include "webhook/json_patch.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace aiadmit {

void appendEscapedPointerToken(std::string& pointer, std::string_view token) {
  pointer.push_back('/');
  for (char c : token) {
    if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer.push_back(c);
    }
  }
}

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void appendIndex(std::string& path, rapidjson::SizeType index) {
  path.push_back('/');
  path += std::to_string(index);
}

class PatchBuilder {
 public:
  PatchBuilder() : writer_(buffer_) { writer_.StartArray(); }

  std::string finish() {
    if (operations_ == 0) return {};
    writer_.EndArray();
    return {buffer_.GetString(), buffer_.GetSize()};
  }

  void diff(const JsonValue& before, const JsonValue& after, std::string& path) {
    if (before.IsObject() && after.IsObject()) {
      diffObjects(before, after, path);
    } else if (before.IsArray() && after.IsArray()) {
      diffArrays(before, after, path);
    } else if (before != after) {
      operation("replace", path, &after);
    }
  }

 private:
  void diffObjects(const JsonValue& before, const JsonValue& after, std::string& path) {
    const size_t base = path.size();
    for (auto it = before.MemberBegin(); it != before.MemberEnd(); ++it) {
      if (!after.HasMember(it->name)) {
        appendEscapedPointerToken(path, {it->name.GetString(), it->name.GetStringLength()});
        operation("remove", path, nullptr);
        path.resize(base);
      }
    }
    for (auto it = after.MemberBegin(); it != after.MemberEnd(); ++it) {
      appendEscapedPointerToken(path, {it->name.GetString(), it->name.GetStringLength()});
      auto old = before.FindMember(it->name);
      if (old == before.MemberEnd()) {
        operation("add", path, &it->value);
      } else {
        diff(old->value, it->value, path);
      }
      path.resize(base);
    }
  }

  void diffArrays(const JsonValue& before, const JsonValue& after, std::string& path) {
    const size_t base = path.size();
    const rapidjson::SizeType common = std::min(before.Size(), after.Size());
    // Remove from the end first so that earlier indices stay valid.
    for (rapidjson::SizeType i = before.Size(); i > after.Size(); --i) {
      appendIndex(path, i - 1);
      operation("remove", path, nullptr);
      path.resize(base);
    }
    for (rapidjson::SizeType i = 0; i < common; ++i) {
      appendIndex(path, i);
      diff(before[i], after[i], path);
      path.resize(base);
    }
    for (rapidjson::SizeType i = common; i < after.Size(); ++i) {
      appendIndex(path, i);
      operation("add", path, &after[i]);
      path.resize(base);
    }
  }

  void operation(const char* op, const std::string& path, const JsonValue* value) {
    ++operations_;
    writer_.StartObject();
    writer_.Key("op");
    writer_.String(op);
    writer_.Key("path");
    writer_.String(path.data(), static_cast<rapidjson::SizeType>(path.size()));
    if (value != nullptr) {
      writer_.Key("value");
      value->Accept(writer_);
    }
    writer_.EndObject();
  }

  rapidjson::StringBuffer buffer_;
  Writer writer_;
  size_t operations_ = 0;
};

}  // namespace

std::string diffToJsonPatch(const JsonValue& before, const JsonValue& after) {
  PatchBuilder builder;
  std::string path;
  builder.diff(before, after, path);
  return builder.finish();
}

}  // namespace aiadmit
