#include "webhook/kube/workload_update.h"

#include "webhook/kube/annotations.h"
#include "webhook/kube/json_patch.h"
#include "webhook/kube/json_pointer.h"

namespace aiadmit {

namespace {

constexpr std::string_view kAnyToken = "*";
// Deeper than any Kubernetes object: a deeper value is compared whole.
constexpr size_t kMaxDepth = 64;

using Pattern = std::vector<std::string>;

bool matchesExactly(const std::vector<std::string>& tokens, const Pattern& pattern) {
  if (tokens.size() != pattern.size()) return false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (pattern[i] != kAnyToken && pattern[i] != tokens[i]) return false;
  }
  return true;
}

struct Comparison {
  std::vector<Pattern> ignored;
  std::vector<std::string> tokens;

  bool isIgnored() const {
    for (const Pattern& pattern : ignored) {
      if (matchesExactly(tokens, pattern)) return true;
    }
    return false;
  }

  // An absent side counts as a change unless the field is ignored.
  bool same(const JsonValue* before, const JsonValue* after) {
    if (isIgnored()) return true;
    if (before == nullptr || after == nullptr) return before == after;
    if (tokens.size() >= kMaxDepth) return *before == *after;
    if (before->IsObject() && after->IsObject()) return sameObjects(*before, *after);
    if (before->IsArray() && after->IsArray()) {
      if (before->Size() != after->Size()) return false;
      for (rapidjson::SizeType i = 0; i < before->Size(); ++i) {
        if (!descend(std::to_string(i), &(*before)[i], &(*after)[i])) return false;
      }
      return true;
    }
    return *before == *after;
  }

  bool sameObjects(const JsonValue& before, const JsonValue& after) {
    for (auto it = before.MemberBegin(); it != before.MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      if (!descend(key, &it->value, member(&after, key))) return false;
    }
    for (auto it = after.MemberBegin(); it != after.MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      if (member(&before, key) == nullptr && !descend(key, nullptr, &it->value)) return false;
    }
    return true;
  }

  bool descend(const std::string& token, const JsonValue* before, const JsonValue* after) {
    tokens.push_back(token);
    const bool result = same(before, after);
    tokens.pop_back();
    return result;
  }
};

bool isTrue(const JsonValue* value) {
  return value != nullptr && value->IsBool() && value->GetBool();
}

// The aiadmit.dev/ annotations of an object, which say what aiadmit reads.
bool sameAiadmitAnnotations(const JsonValue& before, const JsonValue& after) {
  const JsonValue* old = member(member(&before, "metadata"), "annotations");
  const JsonValue* now = member(member(&after, "metadata"), "annotations");
  auto covered = [](const JsonValue* from, const JsonValue* to) {
    if (from == nullptr || !from->IsObject()) return true;
    for (auto it = from->MemberBegin(); it != from->MemberEnd(); ++it) {
      const std::string_view key(it->name.GetString(), it->name.GetStringLength());
      if (key.rfind(kAnnotationPrefix, 0) != 0) continue;
      const JsonValue* other = member(to, key);
      if (other == nullptr || !(*other == it->value)) return false;
    }
    return true;
  };
  return covered(old, now) && covered(now, old);
}

// The concrete, escaped pointers of `root` that a pattern matches.
void collectMatches(const JsonValue& value, const Pattern& pattern, size_t depth,
                    std::string& pointer, std::vector<std::string>& out) {
  if (depth == pattern.size()) {
    out.push_back(pointer);
    return;
  }
  const size_t size = pointer.size();
  auto descend = [&](const JsonValue& child, std::string_view token) {
    appendEscapedPointerToken(pointer, token);
    collectMatches(child, pattern, depth + 1, pointer, out);
    pointer.resize(size);
  };
  if (pattern[depth] != kAnyToken) {
    if (const JsonValue* child = childAt(&value, pattern[depth])) descend(*child, pattern[depth]);
  } else if (value.IsObject()) {
    for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
      descend(it->value, std::string_view(it->name.GetString(), it->name.GetStringLength()));
    }
  } else if (value.IsArray()) {
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) descend(value[i], std::to_string(i));
  }
}

// Sets the value at `pointer` of `mutated` back to the request's, or removes
// it when the request had none.
void setBack(JsonValue& mutated, const std::string& pointer, const JsonValue* sent,
             JsonAllocator& alloc) {
  JsonValue* target = const_cast<JsonValue*>(valueAt(mutated, pointer));
  if (target == nullptr) return;
  if (sent != nullptr) {
    target->CopyFrom(*sent, alloc);
    return;
  }
  const std::vector<std::string> tokens = pointerTokens(pointer);
  std::string parentPointer;
  for (size_t i = 0; i + 1 < tokens.size(); ++i)
    appendEscapedPointerToken(parentPointer, tokens[i]);
  JsonValue* parent = const_cast<JsonValue*>(valueAt(mutated, parentPointer));
  if (parent != nullptr && parent->IsObject()) {
    parent->RemoveMember(rapidjson::StringRef(tokens.back().data(), tokens.back().size()));
  }
}

}  // namespace

std::vector<std::string> keepFixedParts(const WorkloadType& type, const JsonValue& old,
                                        const JsonValue& sent, JsonValue& mutated,
                                        JsonAllocator& alloc) {
  std::vector<std::string> setBackParts;
  for (const std::string& part : type.updates.immutable) {
    std::vector<std::string> pointers;
    std::string pointer;
    collectMatches(mutated, pointerTokens(part), 0, pointer, pointers);
    for (const std::string& concrete : pointers) {
      const JsonValue* now = valueAt(mutated, concrete);
      const JsonValue* before = valueAt(old, concrete);
      if (now != nullptr && before != nullptr && *now == *before) continue;
      const JsonValue* fromRequest = valueAt(sent, concrete);
      if (now != nullptr && fromRequest != nullptr && *now == *fromRequest) continue;
      setBack(mutated, concrete, fromRequest, alloc);
      setBackParts.push_back(concrete);
    }
  }
  return setBackParts;
}

bool sameIgnoring(const JsonValue* before, const JsonValue* after, std::string_view at,
                  const std::vector<std::string>& ignored) {
  Comparison comparison;
  for (const std::string& pattern : ignored) comparison.ignored.push_back(pointerTokens(pattern));
  comparison.tokens = pointerTokens(at);
  return comparison.same(before, after);
}

bool changesOnlyControllerFields(const WorkloadType& type, const JsonValue& before,
                                 const JsonValue& after) {
  const JsonValue* labelsBefore = member(member(&before, "metadata"), "labels");
  const JsonValue* labelsAfter = member(member(&after, "metadata"), "labels");
  const bool sameLabels = labelsBefore == nullptr || labelsAfter == nullptr
                              ? (labelsBefore == nullptr || labelsBefore->ObjectEmpty()) ==
                                    (labelsAfter == nullptr || labelsAfter->ObjectEmpty())
                              : *labelsBefore == *labelsAfter;
  if (!sameLabels || !sameAiadmitAnnotations(before, after)) return false;
  std::vector<std::string> ignored = type.updates.scale;
  if (!type.updates.suspend.empty()) {
    ignored.push_back(type.updates.suspend);
    if (isTrue(valueAt(before, type.updates.suspend))) {
      for (const TemplateSlot& slot : type.templates) {
        if (slot.shape != TemplateShape::PodSpec) continue;
        for (const char* field : {"nodeSelector", "affinity", "tolerations", "schedulingGates"}) {
          ignored.push_back(slot.spec + "/" + field);
        }
        if (slot.metadata.empty() || slot.metadata == "/metadata") continue;
        ignored.push_back(slot.metadata + "/labels");
        ignored.push_back(slot.metadata + "/annotations");
      }
    }
  }
  return sameIgnoring(member(&before, "spec"), member(&after, "spec"), "/spec", ignored);
}

bool pointerWithin(std::string_view pointer, std::string_view pattern) {
  const std::vector<std::string> tokens = pointerTokens(pointer);
  const Pattern expected = pointerTokens(pattern);
  if (tokens.size() < expected.size()) return false;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != kAnyToken && expected[i] != tokens[i]) return false;
  }
  return true;
}

}  // namespace aiadmit
