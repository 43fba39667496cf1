// Writing JSON back as YAML that reads back the same (`aiadmit check -o yaml`).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>

#include "webhook/codec/yaml_scalars.h"
#include "webhook/codec/yaml_write.h"

namespace aiadmit {

namespace {

void emitNumber(YAML::Emitter& out, const JsonValue& value) {
  if (value.IsInt64()) {
    out << value.GetInt64();
  } else if (value.IsUint64()) {
    out << value.GetUint64();
  } else {
    // The shortest text that reads back as the same double (0.1, not 0.10000000000000001).
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.Double(value.GetDouble());
    out << std::string(buffer.GetString(), buffer.GetSize());
  }
}

void emit(YAML::Emitter& out, const JsonValue& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      out << YAML::Null;
      break;
    case rapidjson::kFalseType:
      out << false;
      break;
    case rapidjson::kTrueType:
      out << true;
      break;
    case rapidjson::kNumberType:
      emitNumber(out, value);
      break;
    case rapidjson::kStringType: {
      const std::string text(value.GetString(), value.GetStringLength());
      JsonDocument scratch;
      const bool hasControl = std::any_of(text.begin(), text.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == '\x7F';
      });
      if (text.find('\x7F') != std::string::npos) {
        // yaml-cpp writes DEL as is, which YAML readers refuse; escaping all
        // but ASCII is its only way to escape it.
        out << YAML::EscapeNonAscii << YAML::DoubleQuoted << text;
      } else if (hasControl || text == kMergeKey || text.starts_with("---") ||
                 text.starts_with("...") ||
                 !resolvePlainScalar(text, scratch.GetAllocator()).IsString()) {
        // yaml-cpp would write a carriage return into a plain scalar, where
        // reading it back drops it, and `---` at the start of a line where it
        // reads as a document marker.
        out << YAML::DoubleQuoted << text;
      } else {
        out << text;
      }
      break;
    }
    case rapidjson::kArrayType:
      if (value.Empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const JsonValue& item : value.GetArray()) emit(out, item);
      out << YAML::EndSeq;
      break;
    case rapidjson::kObjectType:
      if (value.ObjectEmpty()) out << YAML::Flow;
      out << YAML::BeginMap;
      for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
        // A key written as `key:` must stay under 1024 characters to be read
        // back; escaping at most quadruples it.
        if (it->name.GetStringLength() > kMaxSimpleKey / 4) out << YAML::LongKey;
        out << YAML::Key;
        emit(out, it->name);
        out << YAML::Value;
        emit(out, it->value);
      }
      out << YAML::EndMap;
      break;
  }
}

}  // namespace

std::string toYaml(const JsonValue& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  emit(out, value);
  return std::string(out.c_str(), out.size()) + "\n";
}

}  // namespace aiadmit
