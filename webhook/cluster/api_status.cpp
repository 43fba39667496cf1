#include "webhook/cluster/api_status.h"

#include <cctype>

#include "webhook/codec/json.h"
#include "webhook/codec/json_parse.h"

namespace aiadmit {

namespace {

constexpr size_t kMaxDepth = 128;
constexpr std::string_view kTooLarge = "Too large resource version";

bool parseStatus(const ApiResponse& response, std::string& text, JsonDocument& status) {
  text = response.body;
  return parseJsonInSitu(text.data(), text.size(), kMaxDepth, status).empty() && status.IsObject();
}

}  // namespace

std::string urlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

std::string describeRefusal(const ApiResponse& response) {
  if (response.status == 0) return response.error;
  std::string described = "HTTP " + std::to_string(response.status);
  std::string text;
  JsonDocument status;
  if (parseStatus(response, text, status)) {
    const std::string_view reason = stringMember(&status, "reason");
    const std::string_view message = stringMember(&status, "message");
    if (!reason.empty()) described += " " + std::string(reason.substr(0, 60));
    if (!message.empty()) described += ": " + std::string(message.substr(0, 300));
  }
  return described;
}

bool isExpired(const ApiResponse& response) {
  if (response.status == 410) return true;
  std::string text;
  JsonDocument status;
  return response.status != 0 && parseStatus(response, text, status) &&
         stringMember(&status, "reason") == "Expired";
}

bool isTooLargeResourceVersion(const ApiResponse& response) {
  std::string text;
  JsonDocument status;
  if (response.status == 0 || !parseStatus(response, text, status)) return false;
  if (stringMember(&status, "message").find(kTooLarge) != std::string_view::npos) return true;
  const JsonValue* causes = member(member(&status, "details"), "causes");
  if (!isArray(causes)) return false;
  for (const JsonValue& cause : causes->GetArray()) {
    if (stringMember(&cause, "reason") == "ResourceVersionTooLarge") return true;
    if (stringMember(&cause, "message").find(kTooLarge) != std::string_view::npos) return true;
  }
  return false;
}

std::string objectKey(const JsonValue* object) {
  const JsonValue* metadata = member(object, "metadata");
  const std::string_view ns = stringMember(metadata, "namespace");
  const std::string_view name = stringMember(metadata, "name");
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

bool servedVersions(const std::string& body, std::vector<std::string>& versions,
                    std::string* error) {
  std::string text = body;
  JsonDocument group;
  const std::string parseError = parseJsonInSitu(text.data(), text.size(), kMaxDepth, group);
  const JsonValue* listed = member(&group, "versions");
  if (!parseError.empty() || !isArray(listed)) {
    if (error)
      *error = "the answer is not an APIGroup" + (parseError.empty() ? "" : ": " + parseError);
    return false;
  }
  versions.clear();
  for (const JsonValue& entry : listed->GetArray()) {
    const std::string_view version = stringMember(&entry, "version");
    if (!version.empty() && versions.size() < 64) versions.emplace_back(version.substr(0, 63));
  }
  return true;
}

}  // namespace aiadmit
