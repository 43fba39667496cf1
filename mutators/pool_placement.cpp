// Aims a pod that asks for one of the profile's accelerators at the profile's
// pool: the profile's nodeSelector merged key by key, and its required node
// affinity added to every node selector term the pod has (terms are
// alternatives, so each must require the pool), or as a term of its own.
// A key the pod already sets, to any value, is left alone: a different value
// is a contradiction that validation reports (AIA008), not something to
// overwrite.
#include "mutators/mutator.h"

#include <algorithm>
#include <string>

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
  return elementWith(member(&term, "matchExpressions"), "key", key) != nullptr;
}

// "(A100, H100)" for a JSON list of values.
std::string describeValues(const JsonValue& values) {
  std::string out = "(";
  for (rapidjson::SizeType i = 0; i < values.Size(); ++i) {
    if (i > 0) out += ", ";
    out += stringOf(&values[i]);
  }
  return out + ")";
}

// A term whose only expression on the pool's key is an In, under a pool
// requirement that is an In too, keeps to the pool when its values are cut to
// those the pool allows: the term then asks for exactly the intersection. An
// empty intersection, or any other shape, is left for validation (AIA008).
// Returns the description of the change, or "" when it changed nothing.
std::string narrowToPool(JsonValue& term, const NodeSelectorRequirement& requirement) {
  if (requirement.op != "In") return {};
  JsonValue* expressions = member(&term, "matchExpressions");
  JsonValue* only = nullptr;
  for (JsonValue& expression : expressions->GetArray()) {
    if (stringMember(&expression, "key") != requirement.key) continue;
    if (only != nullptr) return {};
    only = &expression;
  }
  JsonValue* values = member(only, "values");
  if (stringMember(only, "operator") != "In" || !isArray(values)) return {};
  const auto allowed = [&](const JsonValue& value) {
    return value.IsString() && std::find(requirement.values.begin(), requirement.values.end(),
                                         stringOf(&value)) != requirement.values.end();
  };
  const auto kept = std::count_if(values->Begin(), values->End(), allowed);
  if (kept == 0 || static_cast<rapidjson::SizeType>(kept) == values->Size()) return {};
  std::string change =
      "narrowed required node affinity " + requirement.key + " In " + describeValues(*values);
  for (auto it = values->Begin(); it != values->End();) {
    it = allowed(*it) ? it + 1 : values->Erase(it);
  }
  return change + " to " + describeValues(*values);
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
  JsonValue* terms = requiredNodeSelectorTerms(context.existingPodSpec());

  if (!isArray(terms) || terms->Empty()) {
    JsonValue term(rapidjson::kObjectType);
    JsonValue expressions(rapidjson::kArrayType);
    for (const NodeSelectorRequirement& requirement : wanted) {
      expressions.PushBack(requirementToJson(requirement, context.alloc), context.alloc);
      context.report("added required node affinity " + describeRequirement(requirement));
    }
    term.AddMember("matchExpressions", expressions, context.alloc);
    ensureRequiredNodeSelectorTerms(context.podSpec(), context.alloc).PushBack(term, context.alloc);
    return true;
  }

  bool changed = false;
  for (const NodeSelectorRequirement& requirement : wanted) {
    size_t added = 0;
    for (JsonValue& term : terms->GetArray()) {
      if (!term.IsObject() || isEmptyTerm(term)) continue;
      if (hasExpressionFor(term, requirement.key)) {
        std::string narrowed = narrowToPool(term, requirement);
        if (narrowed.empty()) continue;
        context.report(std::move(narrowed));
        changed = true;
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

bool aimAtPool(MutationContext& context) {
  const Profile& profile = context.profile;
  if (profile.placement.nodeSelector.empty() && profile.placement.requiredNodeAffinity.empty()) {
    return false;
  }
  if (!usesProfilePool(context.pod(), profile, context.cluster)) return false;
  const bool selectorChanged = mergeNodeSelector(context);
  return mergeRequiredNodeAffinity(context) || selectorChanged;
}

}  // namespace

extern const MutatorDeclaration kPoolPlacementMutator{
    "pool-placement", {{"placement"}}, kInjectPlacement, Runs::AlsoOnControllersObjects, aimAtPool};

}  // namespace aiadmit
