#include "webhook/model/scheduling.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <utility>

#include "webhook/codec/text.h"

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

Toleration tolerationFromJson(const JsonValue& item) {
  Toleration toleration;
  toleration.key = std::string(stringMember(&item, "key"));
  const std::string_view op = stringMember(&item, "operator");
  toleration.op = op.empty() ? "Equal" : std::string(op);
  toleration.value = std::string(stringMember(&item, "value"));
  toleration.effect = std::string(stringMember(&item, "effect"));
  if (const JsonValue* seconds = member(&item, "tolerationSeconds");
      seconds != nullptr && seconds->IsInt64()) {
    toleration.tolerationSeconds = seconds->GetInt64();
  }
  return toleration;
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

std::string describeToleration(const Toleration& toleration) {
  const bool exists = toleration.op == "Exists";
  const std::string_view key = toleration.key.empty() ? "*" : std::string_view(toleration.key);
  const std::string_view value = exists ? "" : std::string_view(toleration.value);
  return concat(key, exists ? "" : "=", value, toleration.effect.empty() ? "" : ":",
                toleration.effect);
}

// ---------------------------------------------------------------------------
// Node labels.

LabelValues::LabelValues(const JsonValue* array) {
  if (isArray(array)) {
    array_ = array;
    count_ = array->Size();
  }
}

std::string_view LabelValues::operator[](size_t index) const {
  if (list_ != nullptr) return (*list_)[index];
  if (array_ != nullptr) return stringOf(&(*array_)[static_cast<rapidjson::SizeType>(index)]);
  return single_;
}

bool LabelValues::contains(std::string_view value) const {
  for (size_t i = 0; i < count_; ++i) {
    if ((*this)[i] == value) return true;
  }
  return false;
}

namespace {

bool parseOperator(std::string_view text, LabelOperator& out) {
  static constexpr std::pair<std::string_view, LabelOperator> kOperators[] = {
      {"In", LabelOperator::In},         {"NotIn", LabelOperator::NotIn},
      {"Exists", LabelOperator::Exists}, {"DoesNotExist", LabelOperator::DoesNotExist},
      {"Gt", LabelOperator::Gt},         {"Lt", LabelOperator::Lt}};
  for (const auto& [name, op] : kOperators) {
    if (text == name) {
      out = op;
      return true;
    }
  }
  return false;
}

// Node label values compare as integers for Gt and Lt (strconv.ParseInt).
bool parseLabelInteger(std::string_view text, int64_t& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

bool isPositive(LabelOperator op) {
  return op == LabelOperator::In || op == LabelOperator::Exists || op == LabelOperator::Gt ||
         op == LabelOperator::Lt;
}

// The states of one node label that decide every question about two
// requirements: the label absent, each listed value, a value no list names,
// and integers around each Gt/Lt bound (as many as there are listed values,
// so that a list of exclusions cannot hide a solution).
template <typename Visit>
bool anyLabelState(const LabelRequirement& a, const LabelRequirement& b, Visit&& visit) {
  if (visit(false, std::string_view{})) return true;
  for (const LabelRequirement* r : {&a, &b}) {
    for (size_t i = 0; i < r->values.size(); ++i) {
      if (visit(true, r->values[i])) return true;
    }
  }
  if (visit(true, std::string_view{"\x01unlisted"})) return true;
  const int64_t spread =
      static_cast<int64_t>(std::min<size_t>(a.values.size() + b.values.size(), 64)) + 1;
  for (const LabelRequirement* r : {&a, &b}) {
    if (r->op != LabelOperator::Gt && r->op != LabelOperator::Lt) continue;
    int64_t bound = 0;
    if (r->values.size() != 1 || !parseLabelInteger(r->values[0], bound)) continue;
    for (int64_t delta = -spread; delta <= spread; ++delta) {
      if ((delta > 0 && bound > INT64_MAX - delta) || (delta < 0 && bound < INT64_MIN - delta)) {
        continue;
      }
      char buffer[24];
      const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, bound + delta);
      if (ec != std::errc()) continue;
      if (visit(true, std::string_view(buffer, static_cast<size_t>(end - buffer)))) return true;
    }
  }
  return false;
}

}  // namespace

LabelRequirement LabelRequirement::equals(std::string_view key, std::string_view value) {
  LabelRequirement r;
  r.key = key;
  r.op = LabelOperator::In;
  r.values = LabelValues(value);
  return r;
}

bool LabelRequirement::fromJson(const JsonValue& expression, LabelRequirement& out) {
  out.key = stringMember(&expression, "key");
  if (out.key.empty() || !parseOperator(stringMember(&expression, "operator"), out.op)) {
    return false;
  }
  out.values = LabelValues(member(&expression, "values"));
  return true;
}

LabelRequirement LabelRequirement::fromProfile(const NodeSelectorRequirement& requirement) {
  LabelRequirement r;
  r.key = requirement.key;
  parseOperator(requirement.op, r.op);
  r.values = LabelValues(requirement.values);
  return r;
}

bool LabelRequirement::matches(bool present, std::string_view value) const {
  switch (op) {
    case LabelOperator::In:
      return present && values.contains(value);
    case LabelOperator::NotIn:
      return !present || !values.contains(value);
    case LabelOperator::Exists:
      return present;
    case LabelOperator::DoesNotExist:
      return !present;
    case LabelOperator::Gt:
    case LabelOperator::Lt: {
      int64_t bound = 0, actual = 0;
      if (!present || values.size() != 1 || !parseLabelInteger(values[0], bound) ||
          !parseLabelInteger(value, actual)) {
        return false;
      }
      return op == LabelOperator::Gt ? actual > bound : actual < bound;
    }
  }
  return false;
}

bool compatible(const LabelRequirement& a, const LabelRequirement& b) {
  return anyLabelState(a, b, [&](bool present, std::string_view value) {
    return a.matches(present, value) && b.matches(present, value);
  });
}

bool implies(const LabelRequirement& a, const LabelRequirement& b) {
  const bool aIsSatisfiable = anyLabelState(
      a, a, [&](bool present, std::string_view value) { return a.matches(present, value); });
  return aIsSatisfiable && !anyLabelState(a, b, [&](bool present, std::string_view value) {
           return a.matches(present, value) && !b.matches(present, value);
         });
}

std::string describeRequirement(const LabelRequirement& requirement) {
  std::string out;
  if (requirement.op == LabelOperator::DoesNotExist) out += '!';
  out += requirement.key;
  auto list = [&] {
    out += " (";
    for (size_t i = 0; i < requirement.values.size(); ++i) {
      if (i > 0) out += ", ";
      out += requirement.values[i];
    }
    out += ")";
  };
  switch (requirement.op) {
    case LabelOperator::In:
    case LabelOperator::NotIn: {
      const bool in = requirement.op == LabelOperator::In;
      if (requirement.values.size() == 1) {
        out += in ? "=" : "!=";
        out += requirement.values[0];
      } else {
        out += in ? " in" : " notin";
        list();
      }
      break;
    }
    case LabelOperator::Exists:
      break;
    case LabelOperator::DoesNotExist:
      break;
    case LabelOperator::Gt:
    case LabelOperator::Lt:
      out += requirement.op == LabelOperator::Gt ? ">" : "<";
      if (requirement.values.size() > 0) out += requirement.values[0];
      break;
  }
  return out;
}

// ---------------------------------------------------------------------------
// A PodSpec's required node affinity.

namespace {

constexpr std::string_view kRequiredNodeAffinitySteps[] = {
    "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"};
constexpr std::string_view kTermsMember = "nodeSelectorTerms";

// The object that holds the terms, or nullptr.
template <class Json>
Json* requiredNodeAffinity(Json* podSpec) {
  Json* at = podSpec;
  for (std::string_view step : kRequiredNodeAffinitySteps) at = member(at, step);
  return at;
}

}  // namespace

const JsonValue* requiredNodeSelectorTerms(const JsonValue* podSpec) {
  return member(requiredNodeAffinity(podSpec), kTermsMember);
}

JsonValue* requiredNodeSelectorTerms(JsonValue* podSpec) {
  return member(requiredNodeAffinity(podSpec), kTermsMember);
}

JsonValue& ensureRequiredNodeSelectorTerms(JsonValue& podSpec, JsonAllocator& alloc) {
  JsonValue* at = &podSpec;
  for (std::string_view step : kRequiredNodeAffinitySteps) at = &ensureObject(*at, step, alloc);
  return ensureArray(*at, kTermsMember, alloc);
}

// ---------------------------------------------------------------------------
// A Pod's node selection against a pool.

std::string SelectionSite::fieldPath() const {
  switch (part) {
    case Part::None:
      return {};
    case Part::NodeSelector:
      return "nodeSelector";
    case Part::NodeAffinity: {
      std::string path(kRequiredNodeSelectorTermsPath);
      if (term >= 0) {
        path += '[';
        path += std::to_string(term);
        path += ']';
        if (expression >= 0) {
          path += ".matchExpressions[";
          path += std::to_string(expression);
          path += ']';
        }
      }
      return path;
    }
  }
  return {};
}

namespace {

// Calls `visit` with each requirement every node of the pool satisfies; stops
// when it returns true.
template <typename Visit>
bool anyPoolRequirement(const Placement& pool, Visit&& visit) {
  for (const auto& [key, value] : pool.nodeSelector) {
    if (visit(LabelRequirement::equals(key, value))) return true;
  }
  for (const NodeSelectorRequirement& requirement : pool.requiredNodeAffinity) {
    if (visit(LabelRequirement::fromProfile(requirement))) return true;
  }
  return false;
}

// The pool requirement that `r` contradicts, if any.
bool contradictsPool(const LabelRequirement& r, const Placement& pool, LabelRequirement* which) {
  return anyPoolRequirement(pool, [&](const LabelRequirement& p) {
    if (p.key != r.key || compatible(r, p)) return false;
    *which = p;
    return true;
  });
}

// The positive pool requirement that `r` implies, if any.
bool selectsPool(const LabelRequirement& r, const Placement& pool, LabelRequirement* which) {
  return anyPoolRequirement(pool, [&](const LabelRequirement& p) {
    if (p.key != r.key || !isPositive(p.op) || !implies(r, p)) return false;
    *which = p;
    return true;
  });
}

struct TermVerdict {
  PoolRelation relation = PoolRelation::Unrelated;
  int expression = -1;
  LabelRequirement podRequirement;
  LabelRequirement poolRequirement;
};

TermVerdict relateTerm(const JsonValue& term, const Placement& pool) {
  TermVerdict verdict;
  const JsonValue* expressions = member(&term, "matchExpressions");
  const JsonValue* fields = member(&term, "matchFields");
  const bool noExpressions = !isArray(expressions) || expressions->Empty();
  if (noExpressions && (!isArray(fields) || fields->Empty())) {
    // An empty term matches no node at all, so none of the pool.
    verdict.relation = PoolRelation::Excludes;
    return verdict;
  }
  if (noExpressions) return verdict;
  for (rapidjson::SizeType i = 0; i < expressions->Size(); ++i) {
    LabelRequirement r;
    if (!LabelRequirement::fromJson((*expressions)[i], r)) continue;
    LabelRequirement p;
    if (contradictsPool(r, pool, &p)) {
      verdict = {PoolRelation::Excludes, static_cast<int>(i), r, p};
      return verdict;
    }
    if (verdict.relation == PoolRelation::Unrelated && selectsPool(r, pool, &p)) {
      verdict = {PoolRelation::Selects, static_cast<int>(i), r, p};
    }
  }
  return verdict;
}

}  // namespace

PoolVerdict relatePodToPool(const JsonValue* podSpec, const Placement& pool) {
  PoolVerdict selects;
  const JsonValue* nodeSelector = member(podSpec, "nodeSelector");
  if (isObject(nodeSelector)) {
    for (auto it = nodeSelector->MemberBegin(); it != nodeSelector->MemberEnd(); ++it) {
      const std::string_view key{it->name.GetString(), it->name.GetStringLength()};
      const LabelRequirement r = LabelRequirement::equals(key, stringOf(&it->value));
      LabelRequirement p;
      if (contradictsPool(r, pool, &p)) {
        PoolVerdict verdict;
        verdict.relation = PoolRelation::Excludes;
        verdict.site = {SelectionSite::Part::NodeSelector, key, -1, -1, r, p};
        return verdict;
      }
      if (selects.relation == PoolRelation::Unrelated && selectsPool(r, pool, &p)) {
        selects.relation = PoolRelation::Selects;
        selects.site = {SelectionSite::Part::NodeSelector, key, -1, -1, r, p};
      }
    }
  }

  const JsonValue* terms = requiredNodeSelectorTerms(podSpec);
  if (isArray(terms) && !terms->Empty()) {
    bool allExclude = true;
    bool allSelect = true;
    TermVerdict first;
    for (rapidjson::SizeType i = 0; i < terms->Size(); ++i) {
      const TermVerdict term = relateTerm((*terms)[i], pool);
      if (i == 0) first = term;
      allExclude = allExclude && term.relation == PoolRelation::Excludes;
      allSelect = allSelect && term.relation == PoolRelation::Selects;
    }
    const bool single = terms->Size() == 1;
    auto site = [&] {
      return single ? SelectionSite{SelectionSite::Part::NodeAffinity,
                                    first.podRequirement.key,
                                    0,
                                    first.expression,
                                    first.podRequirement,
                                    first.poolRequirement}
                    : SelectionSite{SelectionSite::Part::NodeAffinity, {}, -1, -1, {}, {}};
    };
    if (allExclude) {
      PoolVerdict verdict;
      verdict.relation = PoolRelation::Excludes;
      verdict.site = site();
      return verdict;
    }
    if (allSelect && selects.relation == PoolRelation::Unrelated) {
      selects.relation = PoolRelation::Selects;
      selects.site = site();
    }
  }
  return selects;
}

namespace {

// Whether the Pod's nodeSelector already keeps it within `poolRequirement`.
bool nodeSelectorImplies(const JsonValue* podSpec, const LabelRequirement& poolRequirement) {
  const JsonValue* value = member(member(podSpec, "nodeSelector"), poolRequirement.key);
  return value != nullptr && value->IsString() &&
         implies(LabelRequirement::equals(poolRequirement.key, stringOf(value)), poolRequirement);
}

// The first expression of `term` on the key of `poolRequirement` when none of
// the term's expressions on that key implies it; -1 otherwise.
int expressionBeyondPool(const JsonValue& term, const LabelRequirement& poolRequirement,
                         LabelRequirement* own) {
  const JsonValue* expressions = member(&term, "matchExpressions");
  if (!isArray(expressions)) return -1;
  int first = -1;
  for (rapidjson::SizeType i = 0; i < expressions->Size(); ++i) {
    LabelRequirement r;
    if (!LabelRequirement::fromJson((*expressions)[i], r) || r.key != poolRequirement.key) continue;
    if (implies(r, poolRequirement)) return -1;
    if (first < 0) {
      first = static_cast<int>(i);
      *own = r;
    }
  }
  return first;
}

}  // namespace

std::optional<SelectionSite> firstTermBeyondPool(const JsonValue* podSpec, const Placement& pool) {
  const JsonValue* terms = requiredNodeSelectorTerms(podSpec);
  if (!isArray(terms)) return std::nullopt;
  for (const NodeSelectorRequirement& wanted : pool.requiredNodeAffinity) {
    const LabelRequirement poolRequirement = LabelRequirement::fromProfile(wanted);
    if (nodeSelectorImplies(podSpec, poolRequirement)) continue;
    for (rapidjson::SizeType i = 0; i < terms->Size(); ++i) {
      LabelRequirement own;
      const int expression = expressionBeyondPool((*terms)[i], poolRequirement, &own);
      if (expression < 0) continue;
      return SelectionSite{SelectionSite::Part::NodeAffinity,
                           own.key,
                           static_cast<int>(i),
                           expression,
                           own,
                           poolRequirement};
    }
  }
  return std::nullopt;
}

bool placementDefinesPool(const Placement& pool) {
  if (!pool.nodeSelector.empty() || !pool.requiredNodeAffinity.empty()) return true;
  for (const Toleration& toleration : pool.tolerations) {
    if (!toleration.key.empty()) return true;
  }
  return false;
}

const Toleration* firstUntoleratedPoolTaint(const JsonValue* tolerations, const Placement& pool) {
  for (const Toleration& wanted : pool.tolerations) {
    if (wanted.key.empty() || wanted.effect == "PreferNoSchedule") continue;
    if (!anyTolerationCovers(tolerations, wanted)) return &wanted;
  }
  return nullptr;
}

int explicitPoolToleration(const JsonValue* tolerations, const Placement& pool) {
  if (!isArray(tolerations)) return -1;
  for (rapidjson::SizeType i = 0; i < tolerations->Size(); ++i) {
    const JsonValue& existing = (*tolerations)[i];
    if (stringMember(&existing, "key").empty()) continue;
    for (const Toleration& wanted : pool.tolerations) {
      if (!wanted.key.empty() && tolerationCovers(existing, wanted)) return static_cast<int>(i);
    }
  }
  return -1;
}

std::string_view podGroupOf(const JsonValue* podSpec) {
  const std::string_view group = stringMember(member(podSpec, "schedulingGroup"), "podGroupName");
  return group.empty() ? stringMember(member(podSpec, "workloadRef"), "name") : group;
}

}  // namespace aiadmit
