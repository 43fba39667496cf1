#include "webhook/model/workload_update.h"

#include <optional>

#include "webhook/codec/json_patch.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/model/annotations.h"
#include "webhook/model/quantity.h"

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

// Whether a member holding this is one the object does not have: Go's types
// read a null, an empty map and an empty list as they read an absent field,
// and write an empty struct (a template's `metadata: {}`) where none was.
bool isEmptyValue(const JsonValue* value) {
  return value == nullptr || value->IsNull() || (value->IsObject() && value->ObjectEmpty()) ||
         (value->IsArray() && value->Empty());
}

// What a value holds, for comparing it as an operator's Go types do: a
// resource quantity is written in its canonical form (1 as "1", "1000m" as
// "1").
enum class Holds { Fields, Quantities, Quantity };

// What the member `key` of a value that holds `parent` holds.
Holds memberHolds(Holds parent, std::string_view key) {
  if (parent == Holds::Quantities) return Holds::Quantity;
  if (key == "limits" || key == "requests" || key == "overhead") return Holds::Quantities;
  return key == "sizeLimit" ? Holds::Quantity : Holds::Fields;
}

// Whether `a` and `b` are the same object once the API server has stored it
// and an operator has read it into its Go types (apimachinery's semantic
// equality, which JobSet's, Volcano's and the API server's immutability
// checks use): an empty or null member is an absent one, and quantities are
// compared by value.
bool sameStored(const JsonValue* a, const JsonValue* b, Holds holds = Holds::Fields,
                size_t depth = 0) {
  if (isEmptyValue(a) || isEmptyValue(b)) return isEmptyValue(a) && isEmptyValue(b);
  if (depth >= kMaxDepth) return *a == *b;
  if (a->IsObject() && b->IsObject()) {
    for (auto it = a->MemberBegin(); it != a->MemberEnd(); ++it) {
      const std::string_view key(it->name.GetString(), it->name.GetStringLength());
      if (!sameStored(&it->value, member(b, key), memberHolds(holds, key), depth + 1)) {
        return false;
      }
    }
    for (auto it = b->MemberBegin(); it != b->MemberEnd(); ++it) {
      const std::string_view key(it->name.GetString(), it->name.GetStringLength());
      if (member(a, key) == nullptr && !isEmptyValue(&it->value)) return false;
    }
    return true;
  }
  if (a->IsArray() && b->IsArray()) {
    if (a->Size() != b->Size()) return false;
    for (rapidjson::SizeType i = 0; i < a->Size(); ++i) {
      if (!sameStored(&(*a)[i], &(*b)[i], Holds::Fields, depth + 1)) return false;
    }
    return true;
  }
  if (holds == Holds::Quantity && !(*a == *b)) {
    const std::optional<Quantity> left = Quantity::fromJson(*a);
    const std::optional<Quantity> right = Quantity::fromJson(*b);
    return left && right && left->sameValue(*right);
  }
  return *a == *b;
}

// Cuts aiadmit's edit of the request's object down to what puts back the
// old object's values: `mutated` is `sent` as the mutators left it, `old`
// the stored object, all three at the same place. What aiadmit would write
// that the old object does not hold is left out; where it restored and
// where it left out are recorded (escaped pointers).
class Restorer {
 public:
  explicit Restorer(JsonAllocator& alloc) : alloc_(alloc) {}

  // Trims `mutated` at `pointer`; false when nothing of it may stay but
  // what the request sent (the caller sets that back).
  bool trim(JsonValue& mutated, const JsonValue* sent, const JsonValue* old,
            const std::string& pointer, Holds holds = Holds::Fields, size_t depth = 0) {
    if (sameStored(&mutated, sent, holds)) return true;
    if (depth < kMaxDepth && mutated.IsObject() && (sent == nullptr || sent->IsObject())) {
      trimMembers(mutated, sent, old, pointer, holds, depth);
      return sent != nullptr || !mutated.ObjectEmpty();
    }
    if (depth < kMaxDepth && mutated.IsArray() && (sent == nullptr || sent->IsArray()) &&
        mutated.Size() >= (sent != nullptr ? sent->Size() : 0)) {
      trimElements(mutated, sent, old, pointer, depth);
      return sent != nullptr || !mutated.Empty();
    }
    const bool restores = sameStored(&mutated, old, holds);
    (restores ? restored : leftOut).push_back(pointer);
    return restores;
  }

  std::vector<std::string> restored;
  std::vector<std::string> leftOut;

 private:
  void trimMembers(JsonValue& mutated, const JsonValue* sent, const JsonValue* old,
                   const std::string& pointer, Holds holds, size_t depth) {
    for (auto it = mutated.MemberBegin(); it != mutated.MemberEnd();) {
      const std::string_view key(it->name.GetString(), it->name.GetStringLength());
      std::string at = pointer;
      appendEscapedPointerToken(at, key);
      const JsonValue* sentValue = member(sent, key);
      if (trim(it->value, sentValue, member(old, key), at, memberHolds(holds, key), depth + 1)) {
        ++it;
      } else if (sentValue != nullptr) {
        it->value.CopyFrom(*sentValue, alloc_);
        ++it;
      } else {
        it = mutated.EraseMember(it);
      }
    }
    if (sent == nullptr) return;
    // What aiadmit took out stays out only where the old object has it out
    // too.
    for (auto it = sent->MemberBegin(); it != sent->MemberEnd(); ++it) {
      const std::string_view key(it->name.GetString(), it->name.GetStringLength());
      if (member(&mutated, key) != nullptr || isEmptyValue(&it->value)) continue;
      std::string at = pointer;
      appendEscapedPointerToken(at, key);
      if (isEmptyValue(member(old, key))) {
        restored.push_back(at);
        continue;
      }
      leftOut.push_back(at);
      mutated.AddMember(makeString(key, alloc_), JsonValue(it->value, alloc_), alloc_);
    }
  }

  // aiadmit edits a list's elements in place and appends to it (a
  // toleration, a volume): an appended element stays where the old list
  // holds it at the same index.
  void trimElements(JsonValue& mutated, const JsonValue* sent, const JsonValue* old,
                    const std::string& pointer, size_t depth) {
    const rapidjson::SizeType sentSize = sent != nullptr ? sent->Size() : 0;
    const auto oldElement = [&](rapidjson::SizeType i) -> const JsonValue* {
      return old != nullptr && old->IsArray() && i < old->Size() ? &(*old)[i] : nullptr;
    };
    for (rapidjson::SizeType i = 0; i < sentSize; ++i) {
      if (!trim(mutated[i], &(*sent)[i], oldElement(i), pointer + "/" + std::to_string(i),
                Holds::Fields, depth + 1)) {
        mutated[i].CopyFrom((*sent)[i], alloc_);
      }
    }
    rapidjson::SizeType kept = sentSize;
    while (kept < mutated.Size() && sameStored(&mutated[kept], oldElement(kept))) ++kept;
    if (kept > sentSize) restored.push_back(pointer);
    if (kept == mutated.Size()) return;
    leftOut.push_back(pointer);
    while (mutated.Size() > kept) mutated.PopBack();
  }

  JsonAllocator& alloc_;
};

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

Restoration keepFixedParts(const WorkloadType& type, const JsonValue& old, const JsonValue& sent,
                           JsonValue& mutated, JsonAllocator& alloc) {
  Restorer restorer(alloc);
  for (const std::string& part : type.updates.immutable) {
    std::vector<std::string> pointers;
    std::string pointer;
    collectMatches(mutated, pointerTokens(part), 0, pointer, pointers);
    for (const std::string& concrete : pointers) {
      JsonValue* now = const_cast<JsonValue*>(valueAt(mutated, concrete));
      const JsonValue* fromRequest = valueAt(sent, concrete);
      if (now != nullptr && restorer.trim(*now, fromRequest, valueAt(old, concrete), concrete)) {
        continue;
      }
      setBack(mutated, concrete, fromRequest, alloc);
    }
  }
  return {std::move(restorer.restored), std::move(restorer.leftOut)};
}

Restoration keepOnlyRestores(const JsonValue& old, const JsonValue& sent, JsonValue& mutated,
                             JsonAllocator& alloc) {
  Restorer restorer(alloc);
  if (!restorer.trim(mutated, &sent, &old, "")) mutated.CopyFrom(sent, alloc);
  return {std::move(restorer.restored), std::move(restorer.leftOut)};
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
