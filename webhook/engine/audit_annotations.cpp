#include "webhook/engine/audit_annotations.h"

#include <algorithm>
#include <array>

#include "webhook/codec/json_pointer.h"
#include "webhook/codec/text.h"
#include "webhook/codec/warnings.h"

namespace aiadmit {

namespace {

// What stands for the `left` items that do not fit.
std::string moreItems(size_t left) {
  return concat("+", std::to_string(left), " more");
}

// Items joined by ",", as many as fit in the value budget, then ",+N more".
std::string joinWithin(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    const size_t left = items.size() - i;
    // The last item needs no room for a "+N more" after it.
    size_t limit = kMaxAuditAnnotationValue;
    if (left > 1) limit -= std::min(kMaxAuditAnnotationValue, moreItems(left).size());
    const size_t needed = out.size() + (out.empty() ? 0 : 1) + items[i].size();
    if (needed > limit) {
      if (!out.empty()) out += ",";
      return out + moreItems(left);
    }
    if (!out.empty()) out += ",";
    out += items[i];
  }
  return out;
}

// Free text within the value budget.
std::string within(std::string_view text) {
  return cutAtUtf8(text, kMaxAuditAnnotationValue);
}

// The first segments of a JSON Pointer, enough to name a field; views into
// the pointer, still escaped (RFC 6901).
struct PointerHead {
  static constexpr size_t kDepth = 8;
  std::array<std::string_view, kDepth> segments{};
  size_t size = 0;

  explicit PointerHead(std::string_view pointer) {
    if (pointer.empty() || pointer[0] != '/') return;
    size_t start = 1;
    while (size < kDepth) {
      const size_t slash = pointer.find('/', start);
      segments[size++] =
          pointer.substr(start, slash == std::string_view::npos ? slash : slash - start);
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
  }
  std::string_view operator[](size_t i) const { return segments[i]; }
};

bool isIndex(std::string_view segment) {
  return !segment.empty() &&
         std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool isContainerList(std::string_view field) {
  return field == "containers" || field == "initContainers" || field == "ephemeralContainers";
}

// "/spec/template/spec/containers/0/readinessProbe" -> "containers[0].readinessProbe";
// "/spec/template/metadata/annotations/aiadmit.dev~1class" -> "template.metadata.annotations";
// "/spec/backoffLimit" -> "backoffLimit". Label and annotation keys are left out.
std::string shortField(const PointerHead& s) {
  if (s.size == 0) return "object";
  if (s[0] == "metadata")
    return s.size > 1 ? "metadata." + unescapedPointerToken(s[1]) : "metadata";
  if (s[0] != "spec") return unescapedPointerToken(s[0]);
  size_t p = 1;
  while (p + 1 < s.size && (s[p] == "template" || s[p] == "jobTemplate")) {
    if (s[p + 1] == "metadata") {
      return p + 2 < s.size ? "template.metadata." + unescapedPointerToken(s[p + 2])
                            : "template.metadata";
    }
    if (s[p + 1] != "spec") break;
    p += 2;
  }
  if (p >= s.size) return "spec";
  std::string field = unescapedPointerToken(s[p]);
  if (isContainerList(s[p]) && p + 1 < s.size && isIndex(s[p + 1])) {
    field += "[" + std::string(s[p + 1]) + "]";
    if (p + 2 < s.size) field += "." + unescapedPointerToken(s[p + 2]);
  }
  return field;
}

// The class, and for an AI workload whether it was declared or inferred.
void pushClass(const Evaluation& evaluation, std::vector<AuditAnnotation>& out) {
  out.push_back({std::string(kAuditClass), std::string(className(evaluation.workloadClass))});
  if (evaluation.workloadClass == WorkloadClass::None) return;
  out.push_back(
      {std::string(kAuditClassBasis), evaluation.classDeclared ? "declared" : "inferred"});
}

}  // namespace

std::string mutatedFieldsOf(const std::vector<std::string>& patchPaths) {
  std::vector<std::string> fields;
  for (const std::string& path : patchPaths) {
    std::string field = shortField(PointerHead(path));
    if (std::find(fields.begin(), fields.end(), field) == fields.end()) {
      fields.push_back(std::move(field));
    }
  }
  return joinWithin(fields);
}

std::vector<AuditAnnotation> mutationAuditAnnotations(const Evaluation& evaluation) {
  std::vector<AuditAnnotation> out;
  const std::vector<std::string>& patchPaths = evaluation.patchPaths;
  if (evaluation.workloadClass == WorkloadClass::None && patchPaths.empty()) return out;
  out.reserve(5);  // at most: class, class-basis, profile, profile-error, mutated
  pushClass(evaluation, out);
  if (!evaluation.profile.empty()) {
    out.push_back({std::string(kAuditProfile), within(evaluation.profile)});
  }
  if (!evaluation.profileError.empty()) {
    out.push_back({std::string(kAuditProfileError), within(evaluation.profileError)});
  }
  if (!patchPaths.empty()) out.push_back({std::string(kAuditMutated), mutatedFieldsOf(patchPaths)});
  return out;
}

std::vector<AuditAnnotation> validationAuditAnnotations(const Evaluation& evaluation,
                                                        RuleAction enforcement) {
  std::vector<AuditAnnotation> out;
  if (evaluation.workloadClass == WorkloadClass::None && evaluation.rules.empty()) return out;
  out.reserve(7);  // at most: class, class-basis, profile, profile-error, rules, capped,
                   // enforcement
  pushClass(evaluation, out);
  if (!evaluation.profile.empty()) {
    out.push_back({std::string(kAuditProfile), within(evaluation.profile)});
  }
  if (!evaluation.profileError.empty()) {
    out.push_back({std::string(kAuditProfileError), within(evaluation.profileError)});
  }
  std::vector<std::string> rules, capped;
  for (const Evaluation::RuleDecision& decision : evaluation.rules) {
    rules.push_back(concat(decision.rule.name(), "=", actionName(decision.applied)));
    if (decision.applied != decision.configured) {
      capped.push_back(concat(decision.rule.name(), "=", actionName(decision.configured)));
    }
  }
  if (!rules.empty()) out.push_back({std::string(kAuditRules), joinWithin(rules)});
  // A refused profile is capped like a rule.
  if (!capped.empty() || (!evaluation.profileError.empty() && enforcement != RuleAction::Deny)) {
    if (!capped.empty()) out.push_back({std::string(kAuditCapped), joinWithin(capped)});
    out.push_back({std::string(kAuditEnforcement), std::string(actionName(enforcement))});
  }
  return out;
}

}  // namespace aiadmit
