#include "webhook/engine/audit_annotations.h"

#include <algorithm>

#include "webhook/kube/json.h"

namespace aiadmit {

namespace {

// Items joined by ",", as many as fit in the value budget, then ",+N more".
std::string joinWithin(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string more = "+" + std::to_string(items.size() - i) + " more";
    const size_t room = kMaxAuditAnnotationValue - std::min(kMaxAuditAnnotationValue, more.size());
    // The last item needs no room for a "+N more" after it.
    const size_t limit = i + 1 == items.size() ? kMaxAuditAnnotationValue : room;
    const size_t needed = out.size() + (out.empty() ? 0 : 1) + items[i].size();
    if (needed > limit) {
      if (!out.empty()) out += ",";
      return out + more;
    }
    if (!out.empty()) out += ",";
    out += items[i];
  }
  return out;
}

// Cuts free text at a UTF-8 boundary within the value budget.
std::string within(std::string_view text) {
  if (text.size() <= kMaxAuditAnnotationValue) return std::string(text);
  size_t cut = kMaxAuditAnnotationValue - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::vector<std::string> pointerSegments(std::string_view pointer) {
  std::vector<std::string> segments;
  if (pointer.empty() || pointer[0] != '/') return segments;
  std::string segment;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      segments.push_back(std::move(segment));
      segment.clear();
    } else if (pointer[i] == '~' && i + 1 < pointer.size()) {
      segment.push_back(pointer[++i] == '1' ? '/' : '~');
    } else {
      segment.push_back(pointer[i]);
    }
  }
  return segments;
}

bool isIndex(const std::string& segment) {
  return !segment.empty() &&
         std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool isContainerList(const std::string& field) {
  return field == "containers" || field == "initContainers" || field == "ephemeralContainers";
}

// "/spec/template/spec/containers/0/readinessProbe" -> "containers[0].readinessProbe";
// "/spec/template/metadata/annotations/aiadmit.dev~1class" -> "template.metadata.annotations";
// "/spec/backoffLimit" -> "backoffLimit". Label and annotation keys are left out.
std::string shortField(const std::vector<std::string>& s) {
  if (s.empty()) return "object";
  if (s[0] == "metadata") return s.size() > 1 ? "metadata." + s[1] : "metadata";
  if (s[0] != "spec") return s[0];
  size_t p = 1;
  while (p + 1 < s.size() && (s[p] == "template" || s[p] == "jobTemplate")) {
    if (s[p + 1] == "metadata") {
      return p + 2 < s.size() ? "template.metadata." + s[p + 2] : "template.metadata";
    }
    if (s[p + 1] != "spec") break;
    p += 2;
  }
  if (p >= s.size()) return "spec";
  std::string field = s[p];
  if (isContainerList(field) && p + 1 < s.size() && isIndex(s[p + 1])) {
    field += "[" + s[p + 1] + "]";
    if (p + 2 < s.size()) field += "." + s[p + 2];
  }
  return field;
}

}  // namespace

std::string mutatedFields(std::string_view jsonPatch) {
  JsonDocument patch;
  if (patch.Parse(jsonPatch.data(), jsonPatch.size()).HasParseError() || !patch.IsArray())
    return "";
  std::vector<std::string> fields;
  for (const JsonValue& op : patch.GetArray()) {
    std::string field = shortField(pointerSegments(stringMember(&op, "path")));
    if (std::find(fields.begin(), fields.end(), field) == fields.end()) {
      fields.push_back(std::move(field));
    }
  }
  return joinWithin(fields);
}

std::vector<AuditAnnotation> mutationAuditAnnotations(const Evaluation& evaluation,
                                                      std::string_view jsonPatch) {
  std::vector<AuditAnnotation> out;
  if (evaluation.workloadClass == WorkloadClass::None && jsonPatch.empty()) return out;
  out.push_back({std::string(kAuditClass), std::string(className(evaluation.workloadClass))});
  if (!evaluation.profile.empty()) {
    out.push_back({std::string(kAuditProfile), within(evaluation.profile)});
  }
  if (!evaluation.profileError.empty()) {
    out.push_back({std::string(kAuditProfileError), within(evaluation.profileError)});
  }
  if (!jsonPatch.empty()) out.push_back({std::string(kAuditMutated), mutatedFields(jsonPatch)});
  return out;
}

std::vector<AuditAnnotation> validationAuditAnnotations(const Evaluation& evaluation,
                                                        RuleAction enforcement) {
  std::vector<AuditAnnotation> out;
  if (evaluation.workloadClass == WorkloadClass::None && evaluation.rules.empty()) return out;
  out.push_back({std::string(kAuditClass), std::string(className(evaluation.workloadClass))});
  if (!evaluation.profile.empty()) {
    out.push_back({std::string(kAuditProfile), within(evaluation.profile)});
  }
  if (!evaluation.profileError.empty()) {
    out.push_back({std::string(kAuditProfileError), within(evaluation.profileError)});
  }
  std::vector<std::string> rules, capped;
  for (const Evaluation::RuleDecision& decision : evaluation.rules) {
    rules.push_back(decision.rule.name() + "=" + std::string(actionName(decision.applied)));
    if (decision.applied != decision.configured) {
      capped.push_back(decision.rule.name() + "=" + std::string(actionName(decision.configured)));
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
