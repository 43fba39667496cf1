#include "webhook/policy/admission_policy_export.h"

#include <rapidjson/error/en.h>

#include <algorithm>
#include <string_view>

#include "webhook/codec/text.h"
#include "webhook/codec/yaml_write.h"
#include "webhook/model/annotations.h"
#include "webhook/model/pod_reader.h"

namespace aiadmit {

namespace {

// Where the webhook's configuration sends requests: the opted-in namespaces
// (manifests/base/webhooks.yaml); the bindings select the same ones.
constexpr std::string_view kOptInLabel = "aiadmit.dev/enabled";
constexpr std::string_view kMirrorAnnotation = "kubernetes.io/config.mirror";
// The volume the shared-memory mutator names, and the path it mounts.
constexpr std::string_view kShmVolume = "aiadmit-shm";

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
// CEL over a Pod. `c` is a container.

const std::string kAnnotations = "object.metadata.?annotations.orValue({})";

std::string annotationIs(std::string_view key, std::string_view value) {
  return kAnnotations + "[?" + cel(key) + "].orValue('') == " + cel(value);
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

std::string volumesList() {
  return "object.spec.?volumes.orValue([])";
}

std::string isShmVolume() {
  return "v.name == " + cel(kShmVolume) + " && v.?emptyDir.?medium.orValue('') == 'Memory'";
}

// ---------------------------------------------------------------------------
// What an exported profile covers: the Pods whose every answer CEL can give
// exactly as the webhook does. Each condition is a matchCondition of the
// policies, so a Pod outside any one of them is left to the webhook.

struct Condition {
  std::string name;
  std::string expression;
};

std::vector<Condition> coveredPods(const Profile& profile) {
  const std::string gpu = cel(profile.gpu.resourceName);
  const std::string containers = "object.spec.containers";
  const std::string initContainers = "object.spec.?initContainers.orValue([])";
  std::vector<Condition> conditions = {
      {"declared-" + std::string(className(profile.workloadClass)),
       annotationIs(kWorkloadAnnotation, className(profile.workloadClass))},
      {"no-other-profile-named", kAnnotations + "[?" + cel(kProfileAnnotation) + "].orValue(" +
                                     cel(profile.name) + ") == " + cel(profile.name)},
      {"no-gpus-by-annotation",
       "!" +
           celList({kGpusAnnotation, kGpuContainerAnnotation, kGpuFractionAnnotation,
                    kGpuMemoryAnnotation, kMirrorAnnotation}) +
           ".exists(k, k in " + kAnnotations + ")"},
      {"made-by-no-controller",
       "!object.metadata.?ownerReferences.orValue([]).exists(r, r.?controller.orValue(false))"},
      {"resources-read-exactly", "object.spec.?resourceClaims.orValue([]).size() == 0 && " +
                                     resourcesReadExactly(containers, gpu) + " && " +
                                     resourcesReadExactly(initContainers, "")},
      {"asks-for-gpus", containers + ".exists(c, " + asksGpus(gpu) + ")"},
  };
  if (profile.sharedMemory.enabled && profile.mutations.on("sharedMemory")) {
    const std::string ownShm = "c.?volumeMounts.orValue([]).all(m, !" + mountsShm() +
                               " || (m.name == " + cel(kShmVolume) + " && " + volumesList() +
                               ".exists(v, " + isShmVolume() + ")))";
    conditions.push_back(
        {"dev-shm-read-exactly", volumesList() + ".all(v, v.name != " + cel(kShmVolume) + " || (" +
                                     isShmVolume() + ")) && " + containers + ".all(c, " + ownShm +
                                     ") && " + initContainers + ".all(c, " + ownShm + ")"});
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
std::string gpuLimitsPatch(const Profile& profile) {
  const std::string gpu = cel(profile.gpu.resourceName);
  const std::string limits = addTo("/spec/containers", "i", "/resources/limits");
  return "object.spec.containers.transformList(i, c, c.?resources.?requests[?" + gpu +
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

std::string tolerationValue(const Toleration& toleration) {
  std::vector<std::string> fields;
  if (!toleration.key.empty()) fields.push_back("key: " + cel(toleration.key));
  fields.push_back("operator: " + cel(toleration.op));
  if (toleration.op != "Exists") fields.push_back("value: " + cel(toleration.value));
  if (!toleration.effect.empty()) fields.push_back("effect: " + cel(toleration.effect));
  if (toleration.tolerationSeconds) {
    fields.push_back("tolerationSeconds: " + std::to_string(*toleration.tolerationSeconds));
  }
  return "Object.spec.tolerations{" + joined(fields, ", ") + "}";
}

// pool-tolerations: each of the pool's tolerations the Pod lacks, appended.
std::string tolerationsPatch(const Profile& profile) {
  std::vector<std::string> missing;
  for (const Toleration& wanted : profile.placement.tolerations) {
    missing.push_back("(object.spec.?tolerations.orValue([]).exists(t, " +
                      tolerationCovers(wanted) + ") ? [] : [" + tolerationValue(wanted) + "])");
  }
  const std::string all = "(" + joined(missing, " + ") + ")";
  return "has(object.spec.tolerations) ? " + all +
         ".map(t, JSONPatch{op: 'add', path: '/spec/tolerations/-', value: t}) : (" + all +
         ".size() == 0 ? [] : [JSONPatch{op: 'add', path: '/spec/tolerations', value: " + all +
         "}])";
}

// pool-placement: each key of the pool's node selector the Pod lacks.
std::string nodeSelectorPatch(const Profile& profile) {
  std::vector<std::string> entries;
  std::vector<std::string> keys;
  for (const auto& [key, value] : profile.placement.nodeSelector) {
    entries.push_back(cel(key) + ": " + cel(value));
    keys.push_back(cel(key));
  }
  const std::string wanted = "{" + joined(entries, ", ") + "}";
  return "has(object.spec.nodeSelector) ? [" + joined(keys, ", ") +
         "].filter(k, !(k in object.spec.nodeSelector)).map(k, JSONPatch{op: 'add', path: "
         "'/spec/nodeSelector/' + jsonpatch.escapeKey(k), value: " +
         wanted + "[k]}) : [JSONPatch{op: 'add', path: '/spec/nodeSelector', value: " + wanted +
         "}]";
}

// scheduling: the priority class of a Pod that has none and no resolved
// priority, outside a PodGroup.
std::string priorityPatch(const Profile& profile) {
  return "object.spec.?priorityClassName.orValue('') == '' && !has(object.spec.priority) && "
         "!has(object.spec.schedulingGroup) ? [JSONPatch{op: 'add', path: "
         "'/spec/priorityClassName', value: " +
         cel(profile.scheduling.priorityClassName) + "}] : []";
}

// shared-memory: with at least minGpus GPUs, each GPU container that mounts
// nothing at /dev/shm gets the memory emptyDir there, sized by the profile
// and never beyond the GPU containers' memory limits.
std::string sharedMemoryVariables(const Profile& profile, std::vector<Condition>& variables) {
  const std::string gpu = cel(profile.gpu.resourceName);
  variables.push_back({"gpuContainers", "object.spec.containers.filter(c, " + asksGpus(gpu) + ")"});
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
         " && !object.spec.?hostIPC.orValue(false)";
}

std::string sharedMemoryPatch(const std::string& applies) {
  const std::string mount =
      "Object.spec.containers.volumeMounts{name: " + cel(kShmVolume) + ", mountPath: '/dev/shm'}";
  const std::string volume =
      "Object.spec.volumes{name: " + cel(kShmVolume) +
      ", emptyDir: variables.shmSizeLimit == '' ? Object.spec.volumes.emptyDir{medium: 'Memory'} "
      ": Object.spec.volumes.emptyDir{medium: 'Memory', sizeLimit: variables.shmSizeLimit}}";
  const std::string unmounted =
      "c in variables.gpuContainers && !c.?volumeMounts.orValue([]).exists(m, " + mountsShm() + ")";
  const std::string mounts =
      "object.spec.containers.transformList(i, c, " + unmounted +
      ", has(c.volumeMounts) ? JSONPatch{op: 'add', path: " +
      addTo("/spec/containers", "i", "/volumeMounts/-") + ", value: " + mount +
      "} : JSONPatch{op: 'add', path: " + addTo("/spec/containers", "i", "/volumeMounts") +
      ", value: [" + mount + "]})";
  const std::string newVolume = "!" + volumesList() + ".exists(v, v.name == " + cel(kShmVolume) +
                                ") && object.spec.containers.exists(c, " + unmounted + ")";
  const std::string volumes = "(" + newVolume + " ? (has(object.spec.volumes) ? [JSONPatch{op: " +
                              "'add', path: '/spec/volumes/-', value: " + volume +
                              "}] : [JSONPatch{op: 'add', path: '/spec/volumes', value: [" +
                              volume + "]}]) : [])";
  return "!(" + applies + ") ? [] : " + mounts + " + " + volumes;
}

// stamp: aiadmit.dev/class and aiadmit.dev/profile, as the webhook records them.
std::string stampPatch(const Profile& profile) {
  std::string out;
  for (const auto& [key, value] : {std::pair{kClassAnnotation, className(profile.workloadClass)},
                                   std::pair{kProfileAnnotation, std::string_view(profile.name)}}) {
    if (!out.empty()) out += " + ";
    out += "(" + annotationIs(key, value) + " ? [] : [JSONPatch{op: 'add', path: " +
           "'/metadata/annotations/' + jsonpatch.escapeKey(" + cel(key) +
           "), value: " + cel(value) + "}])";
  }
  return out;
}

// ---------------------------------------------------------------------------
// The validations: the rules that need no cluster view, on the covered Pods,
// with the webhook's message for a bare Pod.

struct Validation {
  RuleId rule;
  std::string expression;
  // CEL giving the field path, then the webhook's text after it: its denial
  // (problem and fix) and its warning line (the brief).
  std::string field;
  std::string denial;
  std::string brief;
};

// The message as the webhook words it for the action: "[AIA014] FIELD: TEXT".
std::string messageExpression(const Validation& validation, RuleAction action) {
  return "'[" + validation.rule.name() + "] ' + " + validation.field + " + ': ' + " +
         (action == RuleAction::Deny ? validation.denial : validation.brief);
}

Validation restartPolicy(const Profile& profile) {
  const std::string name(className(profile.workloadClass));
  return {AIA014, "object.spec.?restartPolicy.orValue('Always') != 'Always'",
          "'spec.restartPolicy'",
          cel("a " + name +
              " Pod with restartPolicy Always starts over when it finishes and keeps its GPUs; "
              "set restartPolicy: Never or OnFailure"),
          cel(name + " Pod restarts Always; set restartPolicy Never or OnFailure")};
}

Validation priorityClass(const Profile& profile) {
  const Scheduling& scheduling = profile.scheduling;
  std::vector<std::string_view> allowed;
  if (!scheduling.priorityClassName.empty()) allowed.push_back(scheduling.priorityClassName);
  for (const std::string& other : scheduling.allowedPriorityClasses) {
    if (other != scheduling.priorityClassName) allowed.push_back(other);
  }
  std::string fix = "use " + quotedList(allowed, "or");
  if (!scheduling.priorityClassName.empty() && profile.mutations.on("scheduling")) {
    fix += ", or leave it out";
  }
  const std::string name(className(profile.workloadClass));
  const std::string named = "'\"' + object.spec.priorityClassName + '\"";
  return {AIA011,
          "object.spec.?priorityClassName.orValue('') in " + celList(allowed) +
              " || object.spec.?priorityClassName.orValue('') == ''",
          "'spec.priorityClassName'",
          named + " is not allowed for " + name + " work in namespace ' + request.namespace + " +
              cel("; " + fix),
          named + " is not for " + name + "; use " + quotedList(allowed, "or") + "'"};
}

Validation gpusPerNode(const Profile& profile) {
  const std::string gpu = cel(profile.gpu.resourceName);
  const std::string perNode = std::to_string(profile.gpu.gpusPerNode);
  const std::string asking = "object.spec.containers.filter(c, " + asksGpus(gpu) + ")";
  const std::string wanted =
      "string(object.spec.containers.map(c, " + gpuAsk(gpu) + ".asInteger()).sum())";
  const std::string resource = inQuotes(profile.gpu.resourceName);
  return {AIA006,
          "object.spec.containers.map(c, " + gpuAsk(gpu) + ".asInteger()).sum() <= " + perNode,
          "(" + asking +
              ".size() == 1 ? 'spec.containers[' + string(object.spec.containers.transformList(i, "
              "c, " +
              asksGpus(gpu) + ", i)[0]) + '].resources.limits' : 'spec.containers')",
          "'the Pod asks for ' + " + wanted + " + " +
              cel(" " + resource + " but the largest node of the GPU pool has " + perNode +
                  ", so it would stay Pending forever; ask for at most " + perNode +
                  " per Pod and spread larger runs over several Pods"),
          wanted + " + " +
              cel(" " + resource + " in one Pod, but GPU nodes have " + perNode +
                  "; ask for at most " + perNode)};
}

Validation memoryLimit(const Profile& profile) {
  const std::string lacking = "object.spec.containers.transformList(i, c, " +
                              asksGpus(cel(profile.gpu.resourceName)) +
                              " && !c.?resources.?limits[?'memory'].hasValue(), i)";
  const std::string server =
      "'GPU server \"' + object.spec.containers[" + lacking + "[0]].name + '\" has no memory limit";
  return {AIA015, lacking + ".size() == 0",
          "'spec.containers[' + string(" + lacking + "[0]) + '].resources.limits'",
          server + ", so it can grow until it starves the node; set limits.memory'",
          server + "; set limits.memory'"};
}

std::vector<Validation> validations(const Profile& profile) {
  std::vector<Validation> out;
  if (profile.workloadClass != WorkloadClass::Realtime) out.push_back(restartPolicy(profile));
  const Scheduling& scheduling = profile.scheduling;
  if (!scheduling.priorityClassName.empty() || !scheduling.allowedPriorityClasses.empty()) {
    out.push_back(priorityClass(profile));
  }
  out.push_back(gpusPerNode(profile));
  if (profile.workloadClass == WorkloadClass::Realtime) out.push_back(memoryLimit(profile));
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

std::string podCreates() {
  return "{\"resourceRules\": [{\"apiGroups\": [\"\"], \"apiVersions\": [\"v1\"], "
         "\"operations\": [\"CREATE\"], \"resources\": [\"pods\"]}]}";
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

std::vector<std::string> mutations(const Profile& profile, std::vector<Condition>& variables) {
  std::vector<std::string> out;
  if (profile.mutations.on("gpuLimits")) out.push_back(gpuLimitsPatch(profile));
  if (profile.mutations.on("tolerations") && !profile.placement.tolerations.empty()) {
    out.push_back(tolerationsPatch(profile));
  }
  if (profile.mutations.on("placement") && !profile.placement.nodeSelector.empty()) {
    out.push_back(nodeSelectorPatch(profile));
  }
  if (profile.mutations.on("scheduling") && !profile.scheduling.priorityClassName.empty()) {
    out.push_back(priorityPatch(profile));
  }
  if (profile.sharedMemory.enabled && profile.mutations.on("sharedMemory")) {
    out.push_back(sharedMemoryPatch(sharedMemoryVariables(profile, variables)));
  }
  if (profile.mutations.on("stamp")) out.push_back(stampPatch(profile));
  return out;
}

std::string mutatingPolicy(const Profile& profile, const std::string& name) {
  std::vector<Condition> variables;
  std::vector<std::string> patches;
  for (const std::string& patch : mutations(profile, variables)) {
    patches.push_back(
        "{\"patchType\": \"JSONPatch\", \"jsonPatch\": {\"expression\": " + json(patch) + "}}");
  }
  // The API server takes no mutating policy without a mutation.
  if (patches.empty()) return "";
  return "{\"apiVersion\": \"admissionregistration.k8s.io/v1\", \"kind\": "
         "\"MutatingAdmissionPolicy\", \"metadata\": " +
         metadataJson(name) +
         ", \"spec\": {\"failurePolicy\": \"Ignore\", \"reinvocationPolicy\": \"IfNeeded\", "
         "\"matchConstraints\": " +
         podCreates() +
         ", \"matchConditions\": " + conditionsJson(coveredPods(profile), "expression") +
         ", \"variables\": " + conditionsJson(variables, "expression") + ", \"mutations\": [" +
         joined(patches, ", ") + "]}}";
}

// The validations of `profile` whose action is `action`, as one policy: a
// binding's validationActions apply to every validation of its policy.
std::string validatingPolicy(const Profile& profile, const std::string& name, RuleAction action,
                             std::vector<std::string>& exported) {
  std::vector<std::string> items;
  for (const Validation& validation : validations(profile)) {
    if (profile.rules.of(validation.rule, RuleTarget::BarePod) != action) continue;
    exported.push_back(validation.rule.name() + " " + std::string(actionName(action)));
    items.push_back("{\"expression\": " + json(validation.expression) +
                    ", \"messageExpression\": " + json(messageExpression(validation, action)) +
                    ", \"reason\": \"Invalid\"}");
  }
  if (items.empty()) return "";
  return "{\"apiVersion\": \"admissionregistration.k8s.io/v1\", \"kind\": "
         "\"ValidatingAdmissionPolicy\", \"metadata\": " +
         metadataJson(name) +
         ", \"spec\": {\"failurePolicy\": \"Ignore\", \"matchConstraints\": " + podCreates() +
         ", \"matchConditions\": " + conditionsJson(coveredPods(profile), "expression") +
         ", \"validations\": [" + joined(items, ", ") + "]}}";
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
      "stays with the webhook: Deployments, StatefulSets, ReplicaSets, Jobs, CronJobs and "
      "operators' kinds (pod templates, Job defaults, AIA002, AIA010: operator kinds CEL cannot "
      "walk)",
      "stays with the webhook: UPDATE of any object, Pods a controller makes (ownerReference "
      "controller: true) and mirror Pods",
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

}  // namespace

AdmissionPolicyExport exportAdmissionPolicies(const ProfileSet& profiles) {
  AdmissionPolicyExport out;
  for (const Profile& profile : profiles.profiles()) {
    if (const std::string why = whyNotExported(profile, profiles); !why.empty()) {
      out.report.push_back("stays with the webhook: profile " + profile.name + ": " + why);
      continue;
    }
    const std::string name = "aiadmit-" + profile.name;
    if (const std::string policy = mutatingPolicy(profile, name); !policy.empty()) {
      out.documents.push_back(yamlOf(policy));
      out.documents.push_back(yamlOf(bindingJson("MutatingAdmissionPolicy", name, "")));
    }
    std::vector<std::string> rules;
    for (const RuleAction action : {RuleAction::Deny, RuleAction::Warn, RuleAction::Audit}) {
      const std::string policyName = name + "-" + std::string(actionName(action));
      const std::string policy = validatingPolicy(profile, policyName, action, rules);
      if (policy.empty()) continue;
      out.documents.push_back(yamlOf(policy));
      out.documents.push_back(
          yamlOf(bindingJson("ValidatingAdmissionPolicy", policyName, validationActions(action))));
    }
    out.report.push_back("exported: profile " + profile.name + ": Pods (CREATE) declared " +
                         std::string(kWorkloadAnnotation) + ": " +
                         std::string(className(profile.workloadClass)) + " that ask for " +
                         profile.gpu.resourceName + " (" + name + "); rules " +
                         (rules.empty() ? std::string("none") : joined(rules, ", ")));
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
