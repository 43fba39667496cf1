// A mutator edits the copy of an admitted object for one concern and reports
// whether it changed anything. It never builds patch operations: the engine
// diffs the copy against the original once, after all mutators ran.
//
// Every mutator is idempotent: run on its own output it changes nothing.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "webhook/cluster/claim_resolution.h"
#include "webhook/codec/bounded_list.h"
#include "webhook/codec/json.h"
#include "webhook/codec/warnings.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/workload.h"
#include "webhook/policy/classify.h"
#include "webhook/policy/profile.h"

namespace aiadmit {

struct MutationContext {
  JsonValue& object;  // the copy being edited
  JsonAllocator& alloc;
  // The row of the object's kind.
  const WorkloadType& type;
  const Classification& classification;
  const Profile& profile;
  std::string_view namespaceName;
  // One short line per change ("added toleration accelerator=gpu:NoSchedule");
  // the engine prefixes "aiadmit: " and appends the profile.
  std::vector<std::string>& changes;
  // One short line per thing the profile asks for that a mutator left out
  // on purpose, and why ("no PriorityClass ai-batch, not set; ..."). Not a
  // change: it makes no patch, and the engine sends it as a warning whether
  // or not anything else changed, so the user learns what is missing.
  std::vector<std::string>& notices;
  // An UPDATE that left the workload's template as it was: only mutators that
  // run on unchanged templates run, and they edit the object's own metadata.
  bool templateUnchanged = false;
  // The template being edited: the engine runs every mutator on each template
  // of the workload in turn. Null for a template the object lacks (a Pod
  // without spec), which is where the row's first slot puts it.
  const ResolvedTemplate* place = nullptr;
  // The workload has more than one template: changes then name the role.
  bool severalTemplates = false;
  // The workload's main template (the one that asks for an accelerator, else
  // the one its class came from): GPUs nobody asked for per template (a
  // profile's defaultCount, aiadmit.dev/gpus) go to it alone.
  bool primaryTemplate = true;
  // The object was made by a controller (an ownerReference with controller:
  // true): its own metadata is what its controller set, and aiadmit leaves it
  // alone; its pod templates carry what the controller's workload declared,
  // and only mutators that run on controllers' objects run.
  bool madeByController = false;
  // The cluster view (null: none): the template's DRA claims resolve in it,
  // as classification resolved them, and mutators do not inject what it
  // says the cluster lacks.
  const ClusterView* cluster = nullptr;

  PodTemplateView view() const {
    return place != nullptr ? PodTemplateView::at(object, type, *place)
                            : PodTemplateView::ofFirstSlot(object, type);
  }
  // The slot of the template being edited.
  const TemplateSlot* slot() const { return view().slot; }
  // The pod reader over the copy as it is now. Its containers point into the
  // copy; a mutator that edits the pod spec reads again afterwards.
  PodReader pod() const {
    PodReader reader = PodReader::of(view());
    resolveClaimsOf(reader, cluster, namespaceName);
    return reader;
  }
  // The pod spec, created when missing. The engine runs mutators only on
  // templates whose spec is an object, so a resolved one is always there.
  JsonValue& podSpec();
  // The pod spec when the object has one. Unlike podSpec() it never creates
  // the path, so looking does not change the object.
  JsonValue* existingPodSpec() { return const_cast<JsonValue*>(view().spec); }
  // Whether the template's shape lets aiadmit inject this (TemplateSlot::injectable).
  bool mayInject(Injection injection) const { return (injectableParts() & injection) != 0; }
  // The parts the template's slot lets aiadmit inject: every part for a
  // template the object lacks, or one without a slot.
  uint32_t injectableParts() const {
    return place == nullptr || place->slot == nullptr ? kInjectAll : place->slot->injectable;
  }

  // Records one change, shortened when needed so that the warning the engine
  // makes of it, "aiadmit: <change> (profile <name>)", fits the API server's
  // 120-character line.
  void report(std::string change);
  // The same for a change to the workload as a whole (its Job settings),
  // which names no template.
  void reportForWorkload(std::string change);
  // Records one notice, named and shortened as report() does a change.
  void notice(std::string text);
  // The same for a notice about the workload as a whole (its Job settings),
  // which names no template: recorded once, however many templates find it.
  void noticeForWorkload(std::string text);
};

// The requests a mutator runs on besides a workload's own object whose
// template is new or changed (a CREATE, an UPDATE of the template).
enum class Runs {
  OnWorkloads,
  // Also on an object a controller made (a Pod of a Job, a Job of a JobSet,
  // a Ray Pod). What an operator creates is the operator's: it gets what its
  // role needs to run where its GPUs are (limits beside requests, the pool's
  // tolerations and node selection) and never a default, a probe, a Job
  // setting or a stamp that its parent did not carry.
  AlsoOnControllersObjects,
  // Also on an UPDATE that left the template unchanged. Such a mutator then
  // edits nothing but the object's own metadata: a changed pod template
  // makes the controller replace every Pod.
  AlsoOnUnchangedTemplates,
};

// The parts of a template a mutator injects when it writes none (a
// TrainJob's runtimePatches are not a template).
inline constexpr uint32_t kNoTemplatePart = 0;

// A mutator: what it states about itself, once, in its own .cpp, as a
// constant the registry lists (mutators/registry.cpp), its members in order:
//
//   extern const MutatorDeclaration kSharedMemoryMutator{
//       "shared-memory", {{"sharedMemory"}}, kInjectSharedMemory, Runs::OnWorkloads,
//       mountSharedMemory};
//
// mutate() runs it only where this lets it run, and the registry gathers the
// profile switches from it.
struct MutatorDeclaration {
  std::string_view name;  // "gpu-limits": docs/mutators.md and the logs name it so
  // The switches under spec.mutations that turn it off, each with its
  // default: it runs while at least one of them is on. A mutator that honours
  // several (trainjob-placement) reads each for its own part of the work; a
  // key several mutators honour has one default in all of them. None: no
  // profile turns it off.
  BoundedList<MutationSwitch, 2> switches = {};
  // The template parts it injects (Injection bits): it runs on a template
  // whose shape allows at least one of them (TemplateSlot::injectable), and
  // one that injects several asks for each (MutationContext::mayInject).
  uint32_t injects = kNoTemplatePart;
  Runs runs = Runs::OnWorkloads;
  // The work itself, where the mutator runs; true when it changed the object.
  bool (*apply)(MutationContext& context) = nullptr;

  // Whether it runs here: a switch it honours is on in the profile, the
  // template allows a part it injects, and the request is one it runs on.
  bool runsOn(const MutationContext& context) const;
  // Runs it where runsOn() allows; true when it changed the object.
  bool mutate(MutationContext& context) const { return runsOn(context) && apply(context); }
};
// A declaration is a constant that needs no code to run before main, so the
// registry may be read while other files' constants are initialised (a
// test's registeredMutator).
static_assert(std::is_trivially_destructible_v<MutatorDeclaration>);

// All mutators in the order the engine runs them (mutators/registry.cpp).
std::span<const MutatorDeclaration* const> allMutators();
// The keys spec.mutations takes, with their defaults, in the order of the
// mutators that declare them first: what the profile loader is given.
std::span<const MutationSwitch> mutationSwitches();

// The stamp's record of a class alone, for a controller's workload whose GPUs
// hang on DRA claims whose templates the cluster does not hold yet (Helm
// creates the kinds it does not know, the ResourceClaimTemplate among them,
// after the Deployment that names it): which vendor's pool they are in is not
// known, so nothing is placed. The class its kind gives it is recorded alone,
// as aiadmit.dev/class on the object and its templates, so that what its
// controller makes once the templates exist is judged as its GPU role and
// placed in its pool, instead of being taken for work made before the
// namespace opted in. Returns whether it changed the object. The engine calls
// it (mutators/stamp.cpp).
bool recordPendingClass(JsonValue& object, const Resolution& resolution,
                        WorkloadClass workloadClass, JsonAllocator& alloc);

}  // namespace aiadmit
