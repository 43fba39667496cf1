#include "mutators/pool_placement.h"

#include "webhook/policy/accelerators.h"

namespace aiadmit {

namespace {

bool mergeNodeSelector(MutationContext& context) {
  bool changed = false;
  for (const auto& [key, value] : context.profile.placement.nodeSelector) {
    if (member(member(context.view().spec, "nodeSelector"), key) != nullptr) continue;
    JsonValue& selector = ensureObject(context.podSpec(), "nodeSelector", context.alloc);
    setString(selector, key, value, context.alloc);
    context.report("added node selector " + key + "=" + value);
    changed = true;
  }
  return changed;
}

JsonValue requirementToJson(const NodeSelectorRequirement& requirement, JsonAllocator& alloc) {
  JsonValue item(rapidjson::kObjectType);
  setString(item, "key", requirement.key, alloc);
  setString(item, "operator", requirement.op, alloc);
  if (!requirement.values.empty()) {
    JsonValue values(rapidjson::kArrayType);
    for (const std::string& value : requirement.values) {
      values.PushBack(makeString(value, alloc), alloc);
    }
    item.AddMember("values", values, alloc);
  }
  return item;
}

std::string describeRequirement(const NodeSelectorRequirement& requirement) {
  std::string out = requirement.key + " " + requirement.op;
  if (!requirement.values.empty()) {
    out += " (";
    for (size_t i = 0; i < requirement.values.size(); ++i) {
      if (i > 0) out += ", ";
      out += requirement.values[i];
    }
    out += ")";
  }
  return out;
}

bool hasExpressionFor(const JsonValue& term, std::string_view key) {
  const JsonValue* expressions = member(&term, "matchExpressions");
  if (!isArray(expressions)) return false;
  for (const JsonValue& expression : expressions->GetArray()) {
    if (stringMember(&expression, "key") == key) return true;
  }
  return false;
}

// A term with no requirement matches no node; adding the pool's would make it
// match, so such terms are left as they are.
bool isEmptyTerm(const JsonValue& term) {
  for (std::string_view field : {"matchExpressions", "matchFields"}) {
    const JsonValue* requirements = member(&term, field);
    if (isArray(requirements) && !requirements->Empty()) return false;
  }
  return true;
}

bool mergeRequiredNodeAffinity(MutationContext& context) {
  const auto& wanted = context.profile.placement.requiredNodeAffinity;
  if (wanted.empty()) return false;
  JsonValue* terms =
      member(member(member(member(context.existingPodSpec(), "affinity"), "nodeAffinity"),
                    "requiredDuringSchedulingIgnoredDuringExecution"),
             "nodeSelectorTerms");

  if (!isArray(terms) || terms->Empty()) {
    JsonValue& nodeAffinity = ensureObject(
        ensureObject(context.podSpec(), "affinity", context.alloc), "nodeAffinity", context.alloc);
    JsonValue& required =
        ensureObject(nodeAffinity, "requiredDuringSchedulingIgnoredDuringExecution", context.alloc);
    JsonValue term(rapidjson::kObjectType);
    JsonValue expressions(rapidjson::kArrayType);
    for (const NodeSelectorRequirement& requirement : wanted) {
      expressions.PushBack(requirementToJson(requirement, context.alloc), context.alloc);
      context.report("added required node affinity " + describeRequirement(requirement));
    }
    term.AddMember("matchExpressions", expressions, context.alloc);
    ensureArray(required, "nodeSelectorTerms", context.alloc).PushBack(term, context.alloc);
    return true;
  }

  bool changed = false;
  for (const NodeSelectorRequirement& requirement : wanted) {
    size_t added = 0;
    for (JsonValue& term : terms->GetArray()) {
      if (!term.IsObject() || isEmptyTerm(term) || hasExpressionFor(term, requirement.key)) {
        continue;
      }
      ensureArray(term, "matchExpressions", context.alloc)
          .PushBack(requirementToJson(requirement, context.alloc), context.alloc);
      ++added;
    }
    if (added == 0) continue;
    changed = true;
    context.report("added required node affinity " + describeRequirement(requirement) +
                   (terms->Size() > 1 ? " to " + std::to_string(added) + " terms" : ""));
  }
  return changed;
}

}  // namespace

bool PoolPlacementMutator::mutate(MutationContext& context) const {
  const Profile& profile = context.profile;
  if (!profile.mutations.placement) return false;
  if (profile.placement.nodeSelector.empty() && profile.placement.requiredNodeAffinity.empty()) {
    return false;
  }
  if (!usesProfilePool(context.pod(), profile)) return false;
  const bool selectorChanged = mergeNodeSelector(context);
  return mergeRequiredNodeAffinity(context) || selectorChanged;
}

}  // namespace aiadmit
