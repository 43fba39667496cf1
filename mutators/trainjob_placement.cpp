// Aims a TrainJob that asks for GPUs in trainer.resourcesPerNode at the
// profile's pool. A TrainJob has no pod template: Trainer builds its JobSet
// from the runtime it names and applies spec.runtimePatches to it, so the
// pool's tolerations and node selector go into one runtimePatches entry of
// aiadmit's own, for the `node` replicated job.
//
// Trainer v2.3 merges the entries in list order, each as a strategic merge
// patch of the runtime's JobSet spec with JobSet's Go type
// (TrainingRuntime.mergeRuntimePatches): replicated jobs merge by name and a
// node selector key by key, but a PodSpec's tolerations have no merge key,
// so an entry that sets them replaces the list the runtime and the entries
// before it gave the job. So aiadmit's entry carries the tolerations of the
// last entry before it that sets any, followed by the pool's that those do
// not cover; an entry after it that sets tolerations decides alone, and a
// node selector key another entry sets is that entry's. The entry is removed
// when nothing is missing. A pool known only by required node affinity is
// left to the runtime, with a notice. A TrainJob written for a Trainer
// release whose CRD has no runtimePatches (it uses podSpecOverrides or
// podTemplateOverrides) is left alone: that CRD's schema would drop the entry.
#include "mutators/mutator.h"

#include <string>
#include <vector>

#include "webhook/codec/json_pointer.h"
#include "webhook/model/scheduling.h"
#include "webhook/policy/accelerators.h"

namespace aiadmit {

namespace {

// The manager of aiadmit's own entry in a TrainJob's spec.runtimePatches
// (a list keyed by manager, so that users, Kueue and webhooks each own one).
constexpr std::string_view kRuntimePatchManager = "aiadmit.dev/webhook";
// The replicated job that trains: Trainer's runtimes name it `node` (the
// job Trainer gives trainer.resourcesPerNode, numNodes and the trainer's
// image), which is the one whose Pods ask for the GPUs.
constexpr std::string_view kTrainerReplicatedJob = "node";

// The most entries the CRD lets spec.runtimePatches hold.
constexpr rapidjson::SizeType kMaxRuntimePatches = 16;

// The pool's two switches, which pool-tolerations and pool-placement honour
// for a pod template: the entry carries the pool's tolerations while the
// first is on, its node selector while the second is.
constexpr MutationSwitch kTolerationsSwitch{.key = "tolerations"};
constexpr MutationSwitch kPlacementSwitch{.key = "placement"};

bool isTrainJobResources(const MutationContext& context) {
  return context.place != nullptr && context.place->slot != nullptr &&
         context.place->slot->shape == TemplateShape::Resources &&
         context.type.group == "trainer.kubeflow.org" && context.type.kind == "TrainJob";
}

// The PodSpec a runtimePatches entry gives the trainer's replicated job, or null.
const JsonValue* trainerPodSpec(const JsonValue& patch) {
  const JsonValue* jobs = valueAt(patch, "/trainingRuntimeSpec/template/spec/replicatedJobs");
  if (!isArray(jobs)) return nullptr;
  for (const JsonValue& job : jobs->GetArray()) {
    if (stringMember(&job, "name") != kTrainerReplicatedJob) continue;
    const JsonValue* spec = valueAt(job, "/template/spec/template/spec");
    return isObject(spec) ? spec : nullptr;
  }
  return nullptr;
}

// What aiadmit's entry gives the trainer's job: the tolerations an earlier
// entry set (which Trainer would replace with the entry's own list) and the
// pool's that no entry gives.
struct Missing {
  const JsonValue* keptTolerations = nullptr;  // the earlier entry's list, or null
  std::vector<Toleration> tolerations;
  std::vector<std::pair<std::string, std::string>> nodeSelector;
  bool empty() const { return tolerations.empty() && nodeSelector.empty(); }
};

// The index of aiadmit's entry in `patches`, or -1.
int ownEntry(const JsonValue* patches) {
  if (!isArray(patches)) return -1;
  for (rapidjson::SizeType i = 0; i < patches->Size(); ++i) {
    if (stringMember(&(*patches)[i], "manager") == kRuntimePatchManager) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// The other managers' PodSpecs for the trainer's job, before aiadmit's entry
// (or all of them, when it has none yet: it is appended) and after it.
struct OtherPatches {
  std::vector<const JsonValue*> before;
  std::vector<const JsonValue*> after;
};

OtherPatches otherPatches(const JsonValue* patches) {
  OtherPatches others;
  if (!isArray(patches)) return others;
  const int own = ownEntry(patches);
  for (rapidjson::SizeType i = 0; i < patches->Size(); ++i) {
    if (static_cast<int>(i) == own) continue;
    const JsonValue* spec = trainerPodSpec((*patches)[i]);
    if (spec == nullptr) continue;
    (own >= 0 && static_cast<int>(i) > own ? others.after : others.before).push_back(spec);
  }
  return others;
}

// The tolerations the job has from the entries before aiadmit's: the last
// list one of them sets, since each replaces the one before.
const JsonValue* lastTolerations(const std::vector<const JsonValue*>& specs) {
  const JsonValue* last = nullptr;
  for (const JsonValue* spec : specs) {
    if (const JsonValue* tolerations = member(spec, "tolerations"); isArray(tolerations)) {
      last = tolerations;
    }
  }
  return last;
}

void addMissingTolerations(const Profile& profile, const OtherPatches& others, Missing& missing) {
  // A later entry's list replaces whatever aiadmit's would give.
  if (lastTolerations(others.after) != nullptr) return;
  const JsonValue* kept = lastTolerations(others.before);
  for (const Toleration& wanted : profile.placement.tolerations) {
    if (!anyTolerationCovers(kept, wanted)) missing.tolerations.push_back(wanted);
  }
  if (!missing.tolerations.empty()) missing.keptTolerations = kept;
}

void addMissingNodeSelector(const Profile& profile, const OtherPatches& others, Missing& missing) {
  for (const auto& [key, value] : profile.placement.nodeSelector) {
    bool set = false;
    for (const auto* specs : {&others.before, &others.after}) {
      for (const JsonValue* spec : *specs) {
        // A key another patch sets, to any value, is that patch's to decide.
        set = set || member(member(spec, "nodeSelector"), key) != nullptr;
      }
    }
    if (!set) missing.nodeSelector.emplace_back(key, value);
  }
}

Missing missingPlacement(const MutationContext& context, const JsonValue* patches) {
  const OtherPatches others = otherPatches(patches);
  const Profile& profile = context.profile;
  Missing missing;
  if (profile.mutations.on(kTolerationsSwitch.key)) addMissingTolerations(profile, others, missing);
  if (profile.mutations.on(kPlacementSwitch.key)) addMissingNodeSelector(profile, others, missing);
  return missing;
}

// aiadmit's runtimePatches entry that gives the trainer's job `missing`.
JsonValue patchEntry(const Missing& missing, JsonAllocator& alloc) {
  JsonValue podSpec(rapidjson::kObjectType);
  if (!missing.tolerations.empty()) {
    JsonValue tolerations(rapidjson::kArrayType);
    if (missing.keptTolerations != nullptr) {
      for (const JsonValue& kept : missing.keptTolerations->GetArray()) {
        tolerations.PushBack(JsonValue(kept, alloc), alloc);
      }
    }
    for (const Toleration& toleration : missing.tolerations) {
      tolerations.PushBack(tolerationToJson(toleration, alloc), alloc);
    }
    podSpec.AddMember("tolerations", tolerations, alloc);
  }
  if (!missing.nodeSelector.empty()) {
    JsonValue selector(rapidjson::kObjectType);
    for (const auto& [key, value] : missing.nodeSelector) setString(selector, key, value, alloc);
    podSpec.AddMember("nodeSelector", selector, alloc);
  }
  JsonValue job(rapidjson::kObjectType);
  setString(job, "name", kTrainerReplicatedJob, alloc);
  ensureObjectAt(job, "/template/spec/template", alloc)->AddMember("spec", podSpec, alloc);
  JsonValue jobs(rapidjson::kArrayType);
  jobs.PushBack(job, alloc);
  JsonValue entry(rapidjson::kObjectType);
  setString(entry, "manager", kRuntimePatchManager, alloc);
  ensureObjectAt(entry, "/trainingRuntimeSpec/template/spec", alloc)
      ->AddMember("replicatedJobs", jobs, alloc);
  return entry;
}

void reportAdded(MutationContext& context, const Missing& missing) {
  const std::string where =
      " to replicated job " + std::string(kTrainerReplicatedJob) + " through runtimePatches";
  for (const Toleration& toleration : missing.tolerations) {
    context.report("added toleration " + describeToleration(toleration) + where);
  }
  for (const auto& [key, value] : missing.nodeSelector) {
    context.report("added node selector " + key + "=" + value + where);
  }
}

// Trainer replaces the job's tolerations with those of the entry: said on
// every pass while aiadmit's entry sets them, as its other notices are.
void noticeReplacedTolerations(MutationContext& context, const Missing& missing) {
  if (missing.tolerations.empty()) return;
  const std::string job = "replicated job " + std::string(kTrainerReplicatedJob);
  context.notice(missing.keptTolerations != nullptr
                     ? "runtimePatches entry " + std::string(kRuntimePatchManager) +
                           " repeats the tolerations an earlier entry gives " + job +
                           ": Trainer replaces a job's tolerations with each entry's list"
                     : "Trainer replaces the tolerations the runtime gives " + job +
                           " with those of runtimePatches entry " +
                           std::string(kRuntimePatchManager) +
                           ": a toleration the runtime needs there belongs in a "
                           "runtimePatches entry of the TrainJob too");
}

// Sets, replaces or removes aiadmit's entry; whether the object changed.
bool writeEntry(MutationContext& context, JsonValue& spec, const Missing& missing) {
  JsonValue* patches = member(&spec, "runtimePatches");
  const int own = ownEntry(patches);
  if (missing.empty()) {
    if (own < 0) return false;
    patches->Erase(patches->Begin() + own);
    if (patches->Empty()) spec.RemoveMember("runtimePatches");
    context.report("removed runtimePatches entry " + std::string(kRuntimePatchManager) +
                   ": other patches place the trainer on the pool");
    return true;
  }
  JsonValue entry = patchEntry(missing, context.alloc);
  if (own >= 0) {
    JsonValue& current = (*patches)[static_cast<rapidjson::SizeType>(own)];
    // Trainer's webhook stamps the time it last saw each entry; that is not
    // a difference of placement.
    if (const JsonValue* time = member(&current, "time")) {
      JsonValue copy(*time, context.alloc);
      entry.AddMember("time", copy, context.alloc);
    }
    if (current == entry) return false;
    current = entry;
  } else {
    if (isArray(patches) && patches->Size() >= kMaxRuntimePatches) {
      context.notice("runtimePatches already holds " + std::to_string(kMaxRuntimePatches) +
                     " entries, the most the CRD allows: the pool's placement is not added");
      return false;
    }
    ensureArray(spec, "runtimePatches", context.alloc).PushBack(entry, context.alloc);
  }
  reportAdded(context, missing);
  return true;
}

bool placeTrainer(MutationContext& context) {
  if (!isTrainJobResources(context)) return false;
  const Profile& profile = context.profile;
  if (!usesProfilePool(context.pod(), profile, context.cluster)) return false;
  JsonValue* spec = member(&context.object, "spec");
  if (!isObject(spec)) return false;
  if (member(spec, "podSpecOverrides") != nullptr ||
      member(spec, "podTemplateOverrides") != nullptr) {
    context.notice(
        "this TrainJob uses podTemplateOverrides, from a Trainer release without runtimePatches: "
        "the pool's placement is not added; put it in the runtime");
    return false;
  }
  if (profile.mutations.on(kPlacementSwitch.key) &&
      !profile.placement.requiredNodeAffinity.empty()) {
    context.notice(
        "the pool's required node affinity is not set through runtimePatches; "
        "the runtime's template must carry it");
  }
  const Missing missing = missingPlacement(context, member(spec, "runtimePatches"));
  noticeReplacedTolerations(context, missing);
  return writeEntry(context, *spec, missing);
}

}  // namespace

// It writes no pod template (a TrainJob has none), and runs while either of
// the pool's switches is on.
extern const MutatorDeclaration kTrainJobPlacementMutator{"trainjob-placement",
                                                          {kTolerationsSwitch, kPlacementSwitch},
                                                          kNoTemplatePart,
                                                          Runs::OnWorkloads,
                                                          placeTrainer};

}  // namespace aiadmit
