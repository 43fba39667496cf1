#include "webhook/policy/admission_policy_export.h"

#include <rapidjson/error/en.h>

#include <algorithm>
#include <string_view>

#include "webhook/codec/text.h"
#include "webhook/codec/yaml_write.h"
#include "webhook/model/annotations.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/shared_memory.h"
#include "webhook/model/workload_type_builtin.h"
#include "webhook/policy/rule_messages.h"

namespace aiadmit {

namespace {

// Where the webhook's configuration sends requests: the opted-in namespaces
// (manifests/base/webhooks.yaml); the bindings select the same ones.
constexpr std::string_view kOptInLabel = "aiadmit.dev/enabled";
constexpr std::string_view kMirrorAnnotation = "kubernetes.io/config.mirror";

// ---------------------------------------------------------------------------
// Text of JSON and of CEL.

std::string json(std::string_view text) {
  std::string out;
  appendJsonString(out, text);
  return out;
}

// A CEL string literal.
std::string cel(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string celList(const std::vector<std::string_view>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? ", " : "") + cel(items[i]);
  return out + "]";
}

std::string joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? std::string(separator) : "") + parts[i];
  return out;
}

// ---------------------------------------------------------------------------
// Where a kind keeps the Pods it makes: a bare Pod's own spec, or the pod
// template of one of Kubernetes' own controllers, as the workload-type table
// puts it (a Deployment's spec.template, a CronJob's
// spec.jobTemplate.spec.template).

struct Site {
  const WorkloadType* type = nullptr;
  const TemplateSlot* slot = nullptr;
  std::vector<std::string> resources;  // every kind of the row's group with this slot
  std::string spec;                    // CEL: object.spec.template.spec
  std::string pointer;                 // JSON Pointer: /spec/template/spec
  std::string field;                   // kubectl's path: spec.template.spec
  std::string typeName;                // MutatingAdmissionPolicy's type: Object.spec.template.spec
  // The metadata the stamp writes, as pointers: the object's, a CronJob's
  // jobTemplate's, the template's.
  std::vector<std::string> metadata;
  std::string suffix;  // of the policies' names: pods, apps, jobs, cronjobs
};

// "/spec/template/spec" with `separator` between its tokens (none of the
// table's pointers for Kubernetes' own kinds needs escaping).
std::string pathOf(std::string_view pointer, std::string_view separator) {
  std::string out;
  for (const char c : pointer.substr(1))
    out += c == '/' ? std::string(separator) : std::string(1, c);
  return out;
}

// The object's field at `pointer`, each step optional: the map or list
// it holds, or `otherwise`.
std::string optionalAt(std::string_view pointer, std::string_view otherwise) {
  return "object." + pathOf(pointer, ".?") + ".orValue(" + std::string(otherwise) + ")";
}

std::vector<Site> sites() {
  static const std::vector<WorkloadType> types = builtInWorkloadTypes();
  std::vector<Site> out;
  for (const WorkloadType& type : types) {
    if (type.customResource || type.templates.size() != 1) continue;
    const TemplateSlot& slot = type.templates.front();
    // Kinds of one group whose Pods are at the same place and that have no
    // Job settings (Deployment, StatefulSet, ReplicaSet) share policies.
    auto same = std::find_if(out.begin(), out.end(), [&](const Site& site) {
      return site.type->group == type.group && site.slot->spec == slot.spec &&
             !site.slot->jobSettings.any() && !slot.jobSettings.any();
    });
    if (same != out.end()) {
      same->resources.push_back(type.resource);
      same->suffix = type.group;
      continue;
    }
    Site site{&type,
              &slot,
              {type.resource},
              "object." + pathOf(slot.spec, "."),
              slot.spec,
              pathOf(slot.spec, "."),
              "Object." + pathOf(slot.spec, "."),
              {"/metadata"},
              type.resource};
    if (!type.objectIsPod) {
      if (!slot.intermediateMetadata.empty()) site.metadata.push_back(slot.intermediateMetadata);
      site.metadata.push_back(slot.metadata);
    }
    out.push_back(std::move(site));
  }
  return out;
}

// Whether the profile's class is one the kind may declare (AIA002 refuses
// the others, and stays with the webhook).
bool classFitsKind(const Profile& profile, const WorkloadType& type) {
  if (type.lifecycle == Lifecycle::Either) return true;
  return (type.lifecycle == Lifecycle::LongRunning) ==
         (profile.workloadClass == WorkloadClass::Realtime);
}

// ---------------------------------------------------------------------------
// CEL over a Pod or a pod template. `c` is a container.

// The annotations the webhook reads a declaration from: the object's and,
// on a controller, its template's.
std::string annotationSources(const Site& site) {
  std::string out = "[" + optionalAt("/metadata/annotations", "{}");
  if (!site.type->objectIsPod) out += ", " + optionalAt(site.slot->metadata + "/annotations", "{}");
  return out + "]";
}

std::string annotationIs(std::string_view annotations, std::string_view key,
                         std::string_view value) {
  return std::string(annotations) + "[?" + cel(key) + "].orValue('') == " + cel(value);
}

// The GPUs a container asks for, as the pod reader counts them: its request,
// else its limit (which the API server copies into the request).
std::string gpuAsk(const std::string& resource) {
  const std::string in = " in c.resources.";
  return "quantity(string(has(c.resources) && has(c.resources.requests) && " + resource + in +
         "requests ? c.resources.requests[" + resource + "] : (has(c.resources) && " +
         "has(c.resources.limits) && " + resource + in + "limits ? c.resources.limits[" + resource +
         "] : '0')))";
}

std::string asksGpus(const std::string& resource) {
  return gpuAsk(resource) + ".isGreaterThan(quantity('0'))";
}

// Resources of containers whose quantities the export reads as the webhook
// does: CPU, memory, storage, huge pages and, where `gpu` is set, whole
// GPUs of the profile's resource; no DRA claim.
std::string resourcesReadExactly(std::string_view list, const std::string& gpu) {
  std::string keyAllowed =
      "k in ['cpu', 'memory', 'ephemeral-storage'] || k.startsWith('hugepages-')";
  if (!gpu.empty()) {
    keyAllowed += " || (k == " + gpu +
                  " && isQuantity(string(m[k])) && quantity(string(m[k])).isInteger() && "
                  "!quantity(string(m[k])).isLessThan(quantity('0')))";
  }
  return std::string(list) +
         ".all(c, [c.?resources.?requests.orValue({}), c.?resources.?limits.orValue({})].all(m, "
         "m.all(k, " +
         keyAllowed + ")) && c.?resources.?claims.orValue([]).size() == 0)";
}

std::string mountsShm() {
  return "m.mountPath.matches('^/dev/shm/*$')";
}

std::string volumesList(const Site& site) {
  return site.spec + ".?volumes.orValue([])";
}

std::string isShmVolume() {
  return "v.name == " + cel(kSharedMemoryVolume) +
         " && v.?emptyDir.?medium.orValue('') == 'Memory'";
}

// ---------------------------------------------------------------------------
// What an exported profile covers: the Pods whose every answer CEL can give
// exactly as the webhook does. Each condition is a part of the policies'
// matchCondition, so a Pod outside any one of them is left to the webhook.

struct Condition {
  std::string name;
  std::string expression;
};

std::vector<Condition> coveredPods(const Profile& profile, const Site& site) {
  const std::string gpu = cel(profile.gpu.resourceName);
  const std::string containers = site.spec + ".containers";
  const std::string initContainers = site.spec + ".?initContainers.orValue([])";
  const std::string declared(className(profile.workloadClass));
  const std::string sources = annotationSources(site);
  // Every declaration there is says the class, so none the webhook would
  // refuse (AIA001) or read otherwise.
  std::vector<Condition> conditions = {
      {"declared-" + declared, sources + ".exists(a, " + cel(kWorkloadAnnotation) + " in a) && " +
                                   sources + ".all(a, a[?" + cel(kWorkloadAnnotation) +
                                   "].orValue(" + cel(declared) + ") == " + cel(declared) + ")"},
      {"no-other-profile-named", sources + ".all(a, a[?" + cel(kProfileAnnotation) + "].orValue(" +
                                     cel(profile.name) + ") == " + cel(profile.name) + ")"},
      {"no-gpus-by-annotation",
       "!" +
           celList({kGpusAnnotation, kGpuContainerAnnotation, kGpuFractionAnnotation,
                    kGpuMemoryAnnotation, kMirrorAnnotation}) +
           ".exists(k, " + sources + ".exists(a, k in a))"},
      {"made-by-no-controller",
       "!object.metadata.?ownerReferences.orValue([]).exists(r, r.?controller.orValue(false))"},
      {"resources-read-exactly", site.spec + ".?resourceClaims.orValue([]).size() == 0 && " +
                                     resourcesReadExactly(containers, gpu) + " && " +
                                     resourcesReadExactly(initContainers, "")},
      {"asks-for-gpus", containers + ".exists(c, " + asksGpus(gpu) + ")"},
  };
  if (profile.sharedMemory.enabled && profile.mutations.on("sharedMemory")) {
    const std::string ownShm = "c.?volumeMounts.orValue([]).all(m, !" + mountsShm() +
                               " || (m.name == " + cel(kSharedMemoryVolume) + " && " +
                               volumesList(site) + ".exists(v, " + isShmVolume() + ")))";
    conditions.push_back({"dev-shm-read-exactly",
                          volumesList(site) + ".all(v, v.name != " + cel(kSharedMemoryVolume) +
                              " || (" + isShmVolume() + ")) && " + containers + ".all(c, " +
                              ownShm + ") && " + initContainers + ".all(c, " + ownShm + ")"});
  }
  if (profile.workloadClass == WorkloadClass::Realtime && profile.probes.enabled &&
      profile.mutations.on("probes")) {
    conditions.push_back({"probes-present", containers + ".all(c, !" + asksGpus(gpu) +
                                                " || (has(c.readinessProbe) && "
                                                "has(c.startupProbe)))"});
  }
  return conditions;
}

// ---------------------------------------------------------------------------
// The mutations, each a JSONPatch expression mirroring one mutator on the
// covered Pods, and each a no-op on a Pod it already changed.

std::string addTo(std::string_view listPath, std::string_view index, std::string_view rest) {
  return "'" + std::string(listPath) + "/' + string(" + std::string(index) + ") + '" +
         std::string(rest) + "'";
}

// gpu-limits: a GPU request without a limit gets the same limit.
std::string gpuLimitsPatch(const Profile& profile, const Site& site) {
  const std::string gpu = cel(profile.gpu.resourceName);
  const std::string limits = addTo(site.pointer + "/containers", "i", "/resources/limits");
  return site.spec + ".containers.transformList(i, c, c.?resources.?requests[?" + gpu +
         "].hasValue() && !c.?resources.?limits[?" + gpu +
         "].hasValue(), c.?resources.?limits.hasValue() ? JSONPatch{op: 'add', path: " + limits +
         " + '/' + jsonpatch.escapeKey(" + gpu + "), value: c.resources.requests[" + gpu +
         "]} : JSONPatch{op: 'add', path: " + limits + ", value: {" + gpu +
         ": c.resources.requests[" + gpu + "]}})";
}

// tolerationCovers (webhook/model/scheduling.h) in CEL.
std::string tolerationCovers(const Toleration& wanted) {
  const std::string op = "t.?operator.orValue('Equal')";
  const std::string sameValue =
      wanted.op == "Exists" ? std::string("false") : "t.?value.orValue('') == " + cel(wanted.value);
  return "(t.?effect.orValue('') == '' || t.?effect.orValue('') == " + cel(wanted.effect) +
         ") && (t.?key.orValue('') == '' ? " + op + " == 'Exists' : t.key == " + cel(wanted.key) +
         " && (" + op + " == 'Exists' || " + sameValue + "))";
}

std::string tolerationValue(const Toleration& toleration, const Site& site) {
  std::vector<std::string> fields;
  if (!toleration.key.empty()) fields.push_back("key: " + cel(toleration.key));
  fields.push_back("operator: " + cel(toleration.op));
  if (toleration.op != "Exists") fields.push_back("value: " + cel(toleration.value));
  if (!toleration.effect.empty()) fields.push_back("effect: " + cel(toleration.effect));
  if (toleration.tolerationSeconds) {
    fields.push_back("tolerationSeconds: " + std::to_string(*toleration.tolerationSeconds));
  }
  return site.typeName + ".tolerations{" + joined(fields, ", ") + "}";
}

// pool-tolerations: each of the pool's tolerations the Pod lacks, appended.
std::string tolerationsPatch(const Profile& profile, const Site& site) {
  std::vector<std::string> missing;
  for (const Toleration& wanted : profile.placement.tolerations) {
    missing.push_back("(" + site.spec + ".?tolerations.orValue([]).exists(t, " +
                      tolerationCovers(wanted) + ") ? [] : [" + tolerationValue(wanted, site) +
                      "])");
  }
  const std::string all = "(" + joined(missing, " + ") + ")";
  return "has(" + site.spec + ".tolerations) ? " + all +
         ".map(t, JSONPatch{op: 'add', path: " + cel(site.pointer + "/tolerations/-") +
         ", value: t}) : (" + all +
         ".size() == 0 ? [] : [JSONPatch{op: 'add', path: " + cel(site.pointer + "/tolerations") +
         ", value: " + all + "}])";
}

// pool-placement: each key of the pool's node selector the Pod lacks.
std::string nodeSelectorPatch(const Profile& profile, const Site& site) {
  std::vector<std::string> entries;
  std::vector<std::string> keys;
  for (const auto& [key, value] : profile.placement.nodeSelector) {
    entries.push_back(cel(key) + ": " + cel(value));
    keys.push_back(cel(key));
  }
  const std::string wanted = "{" + joined(entries, ", ") + "}";
  const std::string selector = site.spec + ".nodeSelector";
  return "has(" + selector + ") ? [" + joined(keys, ", ") + "].filter(k, !(k in " + selector +
         ")).map(k, JSONPatch{op: 'add', path: " + cel(site.pointer + "/nodeSelector/") +
         " + jsonpatch.escapeKey(k), value: " + wanted +
         "[k]}) : [JSONPatch{op: 'add', path: " + cel(site.pointer + "/nodeSelector") +
         ", value: " + wanted + "}]";
}

// scheduling: the priority class of a Pod or template that has none,
// outside a PodGroup; of a bare Pod, only without a resolved priority.
std::string priorityPatch(const Profile& profile, const Site& site) {
  const std::string unresolved =
      site.type->objectIsPod ? " && !has(" + site.spec + ".priority)" : "";
  return site.spec + ".?priorityClassName.orValue('') == ''" + unresolved + " && !has(" +
         site.spec + ".schedulingGroup) ? [JSONPatch{op: 'add', path: " +
         cel(site.pointer + "/priorityClassName") +
         ", value: " + cel(profile.scheduling.priorityClassName) + "}] : []";
}

// shared-memory: with at least minGpus GPUs, each GPU container that mounts
// nothing at /dev/shm gets the memory emptyDir there, sized by the profile
// and never beyond the GPU containers' memory limits.
std::string sharedMemoryVariables(const Profile& profile, const Site& site,
                                  std::vector<Condition>& variables) {
  const std::string gpu = cel(profile.gpu.resourceName);
  variables.push_back(
      {"gpuContainers", site.spec + ".containers.filter(c, " + asksGpus(gpu) + ")"});
  variables.push_back(
      {"gpus", "variables.gpuContainers.map(c, " + gpuAsk(gpu) + ".asInteger()).sum()"});
  variables.push_back(
      {"memoryLimits",
       "variables.gpuContainers.map(c, string(c.?resources.?limits[?'memory'].orValue('0')))"});
  variables.push_back({"largestMemoryLimit",
                       "variables.memoryLimits.all(l, quantity(l).isGreaterThan(quantity('0'))) ? "
                       "variables.memoryLimits.filter(a, variables.memoryLimits.all(b, "
                       "!quantity(b).isGreaterThan(quantity(a))))[0] : ''"});
  const std::string& size = profile.sharedMemory.sizeLimit;
  const std::string sizeLimit =
      size.empty() ? "variables.largestMemoryLimit"
                   : "variables.largestMemoryLimit == '' || !quantity(" + cel(size) +
                         ").isGreaterThan(quantity(variables.largestMemoryLimit)) ? " + cel(size) +
                         " : variables.largestMemoryLimit";
  variables.push_back({"shmSizeLimit", sizeLimit});
  return "variables.gpus >= " + std::to_string(std::max<int64_t>(profile.sharedMemory.minGpus, 1)) +
         " && !" + site.spec + ".?hostIPC.orValue(false)";
}

std::string sharedMemoryPatch(const std::string& applies, const Site& site) {
  const std::string mount = site.typeName +
                            ".containers.volumeMounts{name: " + cel(kSharedMemoryVolume) +
                            ", mountPath: " + cel(kSharedMemoryPath) + "}";
  const std::string emptyDir = site.typeName + ".volumes.emptyDir";
  const std::string volume = site.typeName + ".volumes{name: " + cel(kSharedMemoryVolume) +
                             ", emptyDir: variables.shmSizeLimit == '' ? " + emptyDir +
                             "{medium: 'Memory'} : " + emptyDir +
                             "{medium: 'Memory', sizeLimit: variables.shmSizeLimit}}";
  const std::string unmounted =
      "c in variables.gpuContainers && !c.?volumeMounts.orValue([]).exists(m, " + mountsShm() + ")";
  const std::string containers = site.pointer + "/containers";
  const std::string mounts =
      site.spec + ".containers.transformList(i, c, " + unmounted +
      ", has(c.volumeMounts) ? JSONPatch{op: 'add', path: " +
      addTo(containers, "i", "/volumeMounts/-") + ", value: " + mount +
      "} : JSONPatch{op: 'add', path: " + addTo(containers, "i", "/volumeMounts") + ", value: [" +
      mount + "]})";
  const std::string newVolume = "!" + volumesList(site) +
                                ".exists(v, v.name == " + cel(kSharedMemoryVolume) + ") && " +
                                site.spec + ".containers.exists(c, " + unmounted + ")";
  const std::string volumes =
      "(" + newVolume + " ? (has(" + site.spec +
      ".volumes) ? [JSONPatch{op: 'add', path: " + cel(site.pointer + "/volumes/-") +
      ", value: " + volume + "}] : [JSONPatch{op: 'add', path: " + cel(site.pointer + "/volumes") +
      ", value: [" + volume + "]}]) : [])";
  return "!(" + applies + ") ? [] : " + mounts + " + " + volumes;
}

// stamp: aiadmit.dev/class and aiadmit.dev/profile, as the webhook records
// them on the object and on each metadata below it that its Pods come from.
std::string stampPatch(const Profile& profile, const Site& site) {
  const std::pair<std::string_view, std::string_view> stamps[] = {
      {kClassAnnotation, className(profile.workloadClass)}, {kProfileAnnotation, profile.name}};
  std::vector<std::string> parts;
  for (const std::string& where : site.metadata) {
    const std::string annotations = optionalAt(where + "/annotations", "{}");
    std::vector<std::string> entries;
    std::vector<std::string> each;
    for (const auto& [key, value] : stamps) {
      entries.push_back(cel(key) + ": " + cel(value));
      each.push_back("(" + annotationIs(annotations, key, value) +
                     " ? [] : [JSONPatch{op: 'add', path: " + cel(where + "/annotations/") +
                     " + jsonpatch.escapeKey(" + cel(key) + "), value: " + cel(value) + "}])");
    }
    const std::string all = "{" + joined(entries, ", ") + "}";
    const std::string metadata = "object." + pathOf(where, ".");
    parts.push_back("(!has(" + metadata + ") ? [JSONPatch{op: 'add', path: " + cel(where) +
                    ", value: {'annotations': " + all + "}}] : !has(" + metadata +
                    ".annotations) ? [JSONPatch{op: 'add', path: " + cel(where + "/annotations") +
                    ", value: " + all + "}] : " + joined(each, " + ") + ")");
  }
  return joined(parts, " + ");
}

// job-defaults: the profile's Job settings where the Job or the CronJob's
// jobTemplate leaves them out, and a Job's backoffLimit where it holds the
// value the API server wrote for it (the row's serverBackoffLimit).
std::string jobDefaultsPatch(const Profile& profile, const Site& site) {
  const JobSettingPointers& settings = site.slot->jobSettings;
  const JobDefaults& defaults = profile.jobDefaults;
  std::vector<std::string> parts;
  const auto setWhenAbsent = [&](const std::string& pointer, const std::optional<int64_t>& value,
                                 const std::string& otherwise) {
    if (!value || pointer.empty()) return;
    parts.push_back("(!has(object." + pathOf(pointer, ".") +
                    ") ? [JSONPatch{op: 'add', path: " + cel(pointer) +
                    ", value: " + std::to_string(*value) + "}] : " + otherwise + ")");
  };
  std::string serverDefault = "[]";
  if (defaults.backoffLimit && settings.serverBackoffLimit &&
      *defaults.backoffLimit != *settings.serverBackoffLimit) {
    serverDefault = "(object." + pathOf(settings.backoffLimit, ".") +
                    " == " + std::to_string(*settings.serverBackoffLimit) + " && !has(object." +
                    pathOf(settings.backoffLimitPerIndex, ".") +
                    ") ? [JSONPatch{op: 'replace', path: " + cel(settings.backoffLimit) +
                    ", value: " + std::to_string(*defaults.backoffLimit) + "}] : [])";
  }
  setWhenAbsent(settings.backoffLimit, defaults.backoffLimit, serverDefault);
  // Every class the export covers is declared: the deadline applies.
  setWhenAbsent(settings.activeDeadlineSeconds, defaults.activeDeadlineSeconds, "[]");
  setWhenAbsent(settings.ttlSecondsAfterFinished, defaults.ttlSecondsAfterFinished, "[]");
  return joined(parts, " + ");
}

// ---------------------------------------------------------------------------
// The validations: the rules that need no cluster view, on the covered Pods,
// with the webhook's message for a bare Pod.

struct Validation {
  RuleId rule;
  std::string expression;
  // CEL giving the field path below the pod spec, then the webhook's text
  // after it: its denial (problem and fix) and its warning line (the brief).
  std::string field;
  std::string denial;
  std::string brief;
};

// The message as the webhook words it for the action: "[AIA014] FIELD: TEXT",
// the field from the object in a denial, and from the pod spec in a warning
// line (validators/validator.cpp), where a bare Pod's keeps its "spec.".
std::string messageExpression(const Validation& validation, RuleAction action, const Site& site) {
  const bool fromObject = action == RuleAction::Deny || site.type->objectIsPod;
  const std::string field =
      fromObject ? cel(site.field + ".") + " + " + validation.field : validation.field;
  return "'[" + validation.rule.name() + "] ' + " + field + " + ': ' + " +
         (action == RuleAction::Deny ? validation.denial : validation.brief);
}

// `text` as CEL, each kMessageHole in it filled by the next of `holes`.
std::string celWithHoles(std::string_view text, const std::vector<std::string>& holes) {
  std::vector<std::string> parts;
  size_t next = 0;
  for (size_t at = 0;; ++next) {
    const size_t hole = text.find(kMessageHole, at);
    const std::string_view piece = text.substr(at, hole - at);
    if (!piece.empty()) parts.push_back(cel(piece));
    if (hole == std::string_view::npos || next >= holes.size()) break;
    parts.push_back(holes[next]);
    at = hole + kMessageHole.size();
  }
  return joined(parts, " + ");
}

// The webhook's denial (problem; fix) and warning line, with `holes` in CEL.
Validation validationOf(RuleId rule, std::string expression, std::string field,
                        const RuleMessage& message, const std::vector<std::string>& holes,
                        const std::vector<std::string>& briefHoles) {
  return {rule, std::move(expression), std::move(field),
          celWithHoles(message.problem + "; " + message.fix, holes),
          celWithHoles(message.brief, briefHoles)};
}

Validation restartPolicy(const Profile& profile, const Site& site) {
  // A bare Pod's left-out restartPolicy is Always; a template's the webhook
  // reads as written (the API server writes Always into both).
  const std::string_view unset = site.type->objectIsPod ? "'Always'" : "''";
  return validationOf(
      AIA014, site.spec + ".?restartPolicy.orValue(" + std::string(unset) + ") != 'Always'",
      "'restartPolicy'", restartPolicyMessage(className(profile.workloadClass), false), {}, {});
}

Validation priorityClass(const Profile& profile, const Site& site) {
  const std::string named = site.spec + ".priorityClassName";
  const std::string current = site.spec + ".?priorityClassName.orValue('')";
  return validationOf(
      AIA011,
      current + " in " + celList(allowedPriorityClasses(profile)) + " || " + current + " == ''",
      "'priorityClassName'", priorityClassMessage(kMessageHole, profile, kMessageHole),
      {named, "request.namespace"}, {named});
}

Validation gpusPerNode(const Profile& profile, const Site& site) {
  const std::string gpu = cel(profile.gpu.resourceName);
  const std::string containers = site.spec + ".containers";
  const std::string asking = containers + ".filter(c, " + asksGpus(gpu) + ")";
  const std::string sum = containers + ".map(c, " + gpuAsk(gpu) + ".asInteger()).sum()";
  const std::string wanted = "string(" + sum + ")";
  const std::string resource = inQuotes(profile.gpu.resourceName);
  return validationOf(AIA006, sum + " <= " + std::to_string(profile.gpu.gpusPerNode),
                      "(" + asking + ".size() == 1 ? 'containers[' + string(" + containers +
                          ".transformList(i, c, " + asksGpus(gpu) +
                          ", i)[0]) + '].resources.limits' : 'containers')",
                      gpusPerNodeMessage(kMessageHole, resource, resource, profile.gpu.gpusPerNode),
                      {wanted}, {wanted});
}

Validation memoryLimit(const Profile& profile, const Site& site) {
  const std::string lacking = site.spec + ".containers.transformList(i, c, " +
                              asksGpus(cel(profile.gpu.resourceName)) +
                              " && !c.?resources.?limits[?'memory'].hasValue(), i)";
  const std::string name = site.spec + ".containers[" + lacking + "[0]].name";
  // The API server refuses a container without a name: it is always named.
  return validationOf(AIA015, lacking + ".size() == 0",
                      "'containers[' + string(" + lacking + "[0]) + '].resources.limits'",
                      memoryLimitMessage("GPU server " + inQuotes(kMessageHole)), {name}, {name});
}

std::vector<Validation> validations(const Profile& profile, const Site& site) {
  std::vector<Validation> out;
  // AIA014 judges bare Pods and the Pods of a kind with Job settings.
  if (profile.workloadClass != WorkloadClass::Realtime &&
      (site.type->objectIsPod || site.slot->jobSettings.any())) {
    out.push_back(restartPolicy(profile, site));
  }
  const Scheduling& scheduling = profile.scheduling;
  if (!scheduling.priorityClassName.empty() || !scheduling.allowedPriorityClasses.empty()) {
    out.push_back(priorityClass(profile, site));
  }
  out.push_back(gpusPerNode(profile, site));
  if (profile.workloadClass == WorkloadClass::Realtime) out.push_back(memoryLimit(profile, site));
  return out;
}

// ---------------------------------------------------------------------------
// The documents.

std::string conditionsJson(const std::vector<Condition>& conditions, std::string_view valueKey) {
  std::vector<std::string> items;
  for (const Condition& condition : conditions) {
    items.push_back("{\"name\": " + json(condition.name) + ", \"" + std::string(valueKey) +
                    "\": " + json(condition.expression) + "}");
  }
  return "[" + joined(items, ", ") + "]";
}

std::string metadataJson(const std::string& name) {
  return "{\"name\": " + json(name) + ", \"labels\": {\"app.kubernetes.io/part-of\": \"aiadmit\"}}";
}

std::string creates(const Site& site) {
  std::vector<std::string> resources;
  for (const std::string& resource : site.resources) resources.push_back(json(resource));
  return "{\"resourceRules\": [{\"apiGroups\": [" + json(site.type->group) +
         "], \"apiVersions\": [\"v1\"], \"operations\": [\"CREATE\"], \"resources\": [" +
         joined(resources, ", ") + "]}]}";
}

std::string bindingJson(std::string_view kind, const std::string& name, std::string_view extra) {
  return "{\"apiVersion\": \"admissionregistration.k8s.io/v1\", \"kind\": \"" + std::string(kind) +
         "Binding\", \"metadata\": " + metadataJson(name) +
         ", \"spec\": {\"policyName\": " + json(name) + std::string(extra) +
         ", \"matchResources\": {\"namespaceSelector\": {\"matchExpressions\": [{\"key\": " +
         json(kOptInLabel) + ", \"operator\": \"In\", \"values\": [\"true\"]}]}}}}";
}

std::string yamlOf(const std::string& text) {
  JsonDocument document;
  document.Parse(text.data(), text.size());
  // The text is built above from escaped pieces: a parse error is a bug here.
  if (document.HasParseError())
    return "# " + std::string(rapidjson::GetParseError_En(document.GetParseError())) + "\n";
  return toYaml(document);
}

bool setsJobDefaults(const Profile& profile, const Site& site) {
  const JobDefaults& defaults = profile.jobDefaults;
  return profile.workloadClass != WorkloadClass::Realtime && profile.mutations.on("jobDefaults") &&
         site.slot->jobSettings.any() &&
         (defaults.backoffLimit || defaults.activeDeadlineSeconds ||
          defaults.ttlSecondsAfterFinished);
}

// In the webhook's order (mutators/registry.cpp), each a name and a patch.
// No patch reads what another writes (each its own fields), so all of them
// read the object as it came and give the patches the webhook's mutators
// give one after another.
std::vector<Condition> mutations(const Profile& profile, const Site& site,
                                 std::vector<Condition>& variables) {
  std::vector<Condition> out;
  if (profile.mutations.on("gpuLimits"))
    out.push_back({"gpu-limits", gpuLimitsPatch(profile, site)});
  if (profile.mutations.on("tolerations") && !profile.placement.tolerations.empty()) {
    out.push_back({"tolerations", tolerationsPatch(profile, site)});
  }
  if (profile.mutations.on("placement") && !profile.placement.nodeSelector.empty()) {
    out.push_back({"node-selector", nodeSelectorPatch(profile, site)});
  }
  if (profile.mutations.on("scheduling") && !profile.scheduling.priorityClassName.empty()) {
    out.push_back({"priority-class", priorityPatch(profile, site)});
  }
  if (setsJobDefaults(profile, site))
    out.push_back({"job-defaults", jobDefaultsPatch(profile, site)});
  if (profile.sharedMemory.enabled && profile.mutations.on("sharedMemory")) {
    out.push_back(
        {"dev-shm", sharedMemoryPatch(sharedMemoryVariables(profile, site, variables), site)});
  }
  if (profile.mutations.on("stamp")) out.push_back({"stamp", stampPatch(profile, site)});
  return out;
}

// Parts joined by `op` into one CEL expression, each after its name as a
// comment.
std::string namedParts(const std::vector<Condition>& parts, std::string_view op) {
  std::vector<std::string> items;
  for (const Condition& part : parts)
    items.push_back("// " + part.name + "\n(" + part.expression + ")");
  return joined(items, "\n" + std::string(op) + " ");
}

// The covered Pods as one matchCondition: the API server evaluates every
// matchCondition of every policy of the request's kind, while && stops at
// the first part that fails, so the policies of the other classes cost one
// annotation lookup.
std::string coveredCondition(const Profile& profile, const Site& site) {
  return "[{\"name\": " + json("covered-by-" + profile.name) +
         ", \"expression\": " + json(namedParts(coveredPods(profile, site), "&&")) + "}]";
}

// The patches as one mutation: the API server times, applies and reinvokes
// each mutation of a policy on its own.
std::string mutatingPolicy(const Profile& profile, const Site& site, const std::string& name) {
  std::vector<Condition> variables;
  const std::vector<Condition> patches = mutations(profile, site, variables);
  // The API server takes no mutating policy without a mutation.
  if (patches.empty()) return "";
  return "{\"apiVersion\": \"admissionregistration.k8s.io/v1\", \"kind\": "
         "\"MutatingAdmissionPolicy\", \"metadata\": " +
         metadataJson(name) +
         ", \"spec\": {\"failurePolicy\": \"Ignore\", \"reinvocationPolicy\": \"IfNeeded\", "
         "\"matchConstraints\": " +
         creates(site) + ", \"matchConditions\": " + coveredCondition(profile, site) +
         ", \"variables\": " + conditionsJson(variables, "expression") +
         ", \"mutations\": [{\"patchType\": \"JSONPatch\", \"jsonPatch\": {\"expression\": " +
         json(namedParts(patches, "+")) + "}}]}}";
}

// The validations of `profile` whose action is `action`, as one policy: a
// binding's validationActions apply to every validation of its policy.
std::string validatingPolicy(const Profile& profile, const Site& site, const std::string& name,
                             RuleAction action, std::vector<std::string>& exported) {
  const RuleTarget target = site.type->objectIsPod ? RuleTarget::BarePod : RuleTarget::Controller;
  std::vector<std::string> items;
  for (const Validation& validation : validations(profile, site)) {
    if (profile.rules.of(validation.rule, target) != action) continue;
    exported.push_back(validation.rule.name() + " " + std::string(actionName(action)));
    items.push_back(
        "{\"expression\": " + json(validation.expression) + ", \"messageExpression\": " +
        json(messageExpression(validation, action, site)) + ", \"reason\": \"Invalid\"}");
  }
  if (items.empty()) return "";
  return "{\"apiVersion\": \"admissionregistration.k8s.io/v1\", \"kind\": "
         "\"ValidatingAdmissionPolicy\", \"metadata\": " +
         metadataJson(name) +
         ", \"spec\": {\"failurePolicy\": \"Ignore\", \"matchConstraints\": " + creates(site) +
         ", \"matchConditions\": " + coveredCondition(profile, site) + ", \"validations\": [" +
         joined(items, ", ") + "]}}";
}

std::string validationActions(RuleAction action) {
  const std::string_view name = action == RuleAction::Deny   ? "Deny"
                                : action == RuleAction::Warn ? "Warn"
                                                             : "Audit";
  return ", \"validationActions\": [\"" + std::string(name) + "\"]";
}

// Why a profile is left to the webhook as a whole, or "" when it is exported.
std::string whyNotExported(const Profile& profile, const ProfileSet& set) {
  const size_t sameClass = static_cast<size_t>(
      std::count_if(set.profiles().begin(), set.profiles().end(),
                    [&](const Profile& p) { return p.workloadClass == profile.workloadClass; }));
  if (sameClass > 1) return "another profile has its class: selection by scope and vendor";
  if (!profile.scope.namespaces.empty() || !profile.scope.matchLabels.empty()) {
    return "scoped by namespace or labels";
  }
  if (!profile.gpu.allowedNamespaces.empty()) return "gpu.allowedNamespaces (AIA012)";
  if (!profile.placement.requiredNodeAffinity.empty()) return "placement.requiredNodeAffinity";
  const Scheduling& scheduling = profile.scheduling;
  if (!scheduling.schedulerName.empty() || !scheduling.labels.empty() ||
      !scheduling.annotations.empty()) {
    return "scheduling.schedulerName, labels or annotations";
  }
  return "";
}

void reportStaying(std::vector<std::string>& report) {
  const std::vector<std::string> staying = {
      "stays with the webhook: operators' kinds (templates CEL cannot walk), and a class its "
      "kind refuses (training or batch as a Deployment, StatefulSet or ReplicaSet, realtime as "
      "a Job or CronJob: AIA002); AIA010",
      "stays with the webhook: UPDATE of any object (a template's rollout, never a scale), "
      "objects a controller makes (ownerReference controller: true: a Deployment's ReplicaSets, "
      "a CronJob's Jobs, their Pods) and mirror Pods",
      "stays with the webhook: a controller whose object and pod template disagree on "
      "aiadmit.dev/workload or aiadmit.dev/profile",
      "stays with the webhook: classes inferred from the kind or from accelerators (no "
      "aiadmit.dev/workload annotation), and aiadmit.dev/profile naming another profile",
      "stays with the webhook: Pods that ask for no GPU (gpu.defaultCount, AIA007), for GPUs by "
      "aiadmit.dev/gpus, aiadmit.dev/gpu-container or a KAI share, by DRA claim, for another "
      "extended resource, or a GPU quantity that is not a whole number (AIA003, AIA004, AIA013)",
      "stays with the webhook: realtime Pods whose GPU containers lack a readiness or startup "
      "probe (realtime-probes needs a port guess, AIA009)",
      "stays with the webhook: Pods that mount their own /dev/shm",
      "stays with the webhook: AIA005, AIA008 (node selectors, affinity and tolerations "
      "against the pool), AIA012",
      "stays with the webhook: cluster-aware rules AIA016, AIA017, AIA018, AIA019, AIA020 and "
      "DRA claim objects; the validating webhook stays registered for them",
      "note: priorityClassName is set as the webhook sets it when its cluster view cannot tell; "
      "keep the PriorityClasses installed (manifests/components/priority-classes)",
      "note: failurePolicy Ignore: a policy that cannot evaluate admits the Pod unchanged",
      "note: each rule takes the profile's action; serve --enforcement does not cap the "
      "policies: export a profile set whose rules warn for a staged rollout",
  };
  report.insert(report.end(), staying.begin(), staying.end());
}

// The policies of `profile` for the kinds of `site`, and the report's line.
void exportSite(const Profile& profile, const Site& site, AdmissionPolicyExport& out) {
  const std::string name = "aiadmit-" + profile.name + "-" + site.suffix;
  if (const std::string policy = mutatingPolicy(profile, site, name); !policy.empty()) {
    out.documents.push_back(yamlOf(policy));
    out.documents.push_back(yamlOf(bindingJson("MutatingAdmissionPolicy", name, "")));
  }
  std::vector<std::string> rules;
  for (const RuleAction action : {RuleAction::Deny, RuleAction::Warn, RuleAction::Audit}) {
    const std::string policyName = name + "-" + std::string(actionName(action));
    const std::string policy = validatingPolicy(profile, site, policyName, action, rules);
    if (policy.empty()) continue;
    out.documents.push_back(yamlOf(policy));
    out.documents.push_back(
        yamlOf(bindingJson("ValidatingAdmissionPolicy", policyName, validationActions(action))));
  }
  out.report.push_back("exported: profile " + profile.name + ": " + joined(site.resources, ", ") +
                       " (CREATE) declared " + std::string(kWorkloadAnnotation) + ": " +
                       std::string(className(profile.workloadClass)) + " that ask for " +
                       profile.gpu.resourceName + " (" + name + "); rules " +
                       (rules.empty() ? std::string("none") : joined(rules, ", ")));
}

}  // namespace

AdmissionPolicyExport exportAdmissionPolicies(const ProfileSet& profiles) {
  AdmissionPolicyExport out;
  const std::vector<Site> kinds = sites();
  for (const Profile& profile : profiles.profiles()) {
    if (const std::string why = whyNotExported(profile, profiles); !why.empty()) {
      out.report.push_back("stays with the webhook: profile " + profile.name + ": " + why);
      continue;
    }
    for (const Site& site : kinds) {
      if (classFitsKind(profile, *site.type)) exportSite(profile, site, out);
    }
  }
  reportStaying(out.report);
  return out;
}

std::string admissionPolicyFile(const AdmissionPolicyExport& exported) {
  std::string out =
      "# Written by `aiadmit profiles export --admission-policies`: apply with kubectl.\n";
  for (const std::string& line : exported.report) out += "# " + line + "\n";
  for (const std::string& document : exported.documents) out += "---\n" + document;
  return out;
}

}  // namespace aiadmit
