#include "webhook/scheduling.h"

namespace aiadmit {

bool tolerationCovers(const JsonValue& existing, const Toleration& wanted) {
  if (!existing.IsObject()) return false;
  const std::string_view effect = stringMember(&existing, "effect");
  if (!effect.empty() && effect != wanted.effect) return false;

  std::string_view op = stringMember(&existing, "operator");
  if (op.empty()) op = "Equal";
  const std::string_view key = stringMember(&existing, "key");
  if (key.empty()) return op == "Exists";
  if (key != wanted.key) return false;
  if (op == "Exists") return true;
  // An Equal toleration covers only the one value; a wanted Exists needs Exists.
  return wanted.op != "Exists" && stringMember(&existing, "value") == wanted.value;
}

bool anyTolerationCovers(const JsonValue* tolerations, const Toleration& wanted) {
  if (!isArray(tolerations)) return false;
  for (const JsonValue& existing : tolerations->GetArray()) {
    if (tolerationCovers(existing, wanted)) return true;
  }
  return false;
}

JsonValue tolerationToJson(const Toleration& toleration, JsonAllocator& alloc) {
  JsonValue item(rapidjson::kObjectType);
  if (!toleration.key.empty()) setString(item, "key", toleration.key, alloc);
  setString(item, "operator", toleration.op, alloc);
  if (toleration.op != "Exists") setString(item, "value", toleration.value, alloc);
  if (!toleration.effect.empty()) setString(item, "effect", toleration.effect, alloc);
  if (toleration.tolerationSeconds) {
    item.AddMember("tolerationSeconds", JsonValue(*toleration.tolerationSeconds), alloc);
  }
  return item;
}

std::string describeToleration(const Toleration& toleration) {
  std::string out = toleration.key.empty() ? "*" : toleration.key;
  if (toleration.op != "Exists") out += "=" + toleration.value;
  if (!toleration.effect.empty()) out += ":" + toleration.effect;
  return out;
}

}  // namespace aiadmit
