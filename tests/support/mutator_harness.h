// Runs mutators the way the engine does, on manifests written as YAML, and
// checks what every mutator test needs: the change, its patch applied by
// kubectl, and idempotence.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mutators/mutator.h"
#include "tests/support/test_support.h"
#include "webhook/cluster/claim_resolution.h"
#include "webhook/codec/json_patch.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit::testing {

// The mutator the registry lists as `name` ("gpu-limits"), as the engine
// runs it. A name the registry lacks throws: the tests of a mutator that is
// not registered do not start.
inline const MutatorDeclaration& registeredMutator(std::string_view name) {
  for (const MutatorDeclaration* mutator : allMutators()) {
    if (mutator->name == name) return *mutator;
  }
  throw std::invalid_argument("no mutator " + std::string(name) + " in mutators/registry.cpp");
}

// Profiles from YAML text (several documents allowed); fails the test on errors.
inline std::shared_ptr<const ProfileSet> profilesFromYaml(const std::string& yaml) {
  ProfileLoadResult result = loadProfileText(yaml, "test-profiles.yaml", mutationSwitches());
  for (const ProfileError& error : result.errors) ADD_FAILURE() << error.format();
  if (!result.ok()) return std::make_shared<const ProfileSet>(std::vector<Profile>{});
  return result.set;
}

// The repository's shipped profiles (profiles/).
inline const ProfileSet& shippedProfiles() {
  static const std::shared_ptr<const ProfileSet> set = [] {
    ProfileLoadResult result = loadProfileDirectory(sourceDir() + "/profiles", mutationSwitches());
    for (const ProfileError& error : result.errors) ADD_FAILURE() << error.format();
    return result.set;
  }();
  return *set;
}

inline const Profile& shippedProfile(std::string_view name) {
  const Profile* profile = shippedProfiles().find(name);
  if (profile == nullptr) {
    ADD_FAILURE() << "no shipped profile " << name;
    static const Profile empty;
    return empty;
  }
  return *profile;
}

inline const Profile& training() {
  return shippedProfile("training");
}
inline const Profile& realtime() {
  return shippedProfile("realtime");
}
inline const Profile& batch() {
  return shippedProfile("batch");
}

// Two training profiles for a mutator's switch: "off" with `offSpec` (the
// mutator's settings and `mutations: {<switch>: false}`), and "none", scoped
// to another namespace, which sets nothing for it.
inline std::shared_ptr<const ProfileSet> switchedOffProfiles(const std::string& offSpec) {
  return profilesFromYaml(R"(
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: off}
spec:
  class: training
)" + offSpec + R"(---
apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: none}
spec:
  class: training
  scope: {namespaces: [other]}
)");
}

// A container that asks for one GPU, as a flow mapping.
inline const std::string kGpuContainer =
    "{name: main, image: x, resources: {limits: {nvidia.com/gpu: 1}}}";

// A bare Pod "p" with `annotations` (a flow mapping; "" for none) and
// `container` (a flow mapping) as its one container; `extraSpec` is appended
// to its spec.
inline std::string podManifest(const std::string& annotations, const std::string& container,
                               const std::string& extraSpec = "") {
  return R"(
apiVersion: v1
kind: Pod
metadata: {name: p)" +
         (annotations.empty() ? "" : ", annotations: " + annotations) + R"(}
spec:
  restartPolicy: Never
  containers: [)" +
         container + "]\n" + extraSpec;
}

// A bare Pod "p" whose one container is kGpuContainer.
inline std::string gpuPodManifest(const std::string& extraSpec = "") {
  return podManifest("", kGpuContainer, extraSpec);
}

// A CronJob `name` on `schedule` whose Pods run `container` (a flow mapping).
inline std::string cronJobManifest(const std::string& name, const std::string& schedule,
                                   const std::string& container) {
  return R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: )" +
         name + R"(}
spec:
  schedule: ")" +
         schedule + R"("
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [)" +
         container + "]\n";
}

// One object from YAML; fails the test when the text holds anything else.
inline std::shared_ptr<JsonDocument> manifest(const std::string& yaml) {
  std::vector<ManifestDocument> documents;
  std::string error;
  if (!parseManifests(yaml, documents, &error) || documents.size() != 1) {
    ADD_FAILURE() << "not one manifest: " << error << "\n" << yaml;
    auto empty = std::make_shared<JsonDocument>();
    empty->SetObject();
    return empty;
  }
  return documents[0].json;
}

struct MutationRun {
  std::shared_ptr<JsonDocument> before;
  std::shared_ptr<JsonDocument> after;
  bool changed = false;
  std::vector<std::string> changes;
  std::vector<std::string> notices;  // what was left out on purpose; no change

  std::string patch() const { return diffToJsonPatch(*before, *after); }
  const JsonValue& podSpec() const {
    static const JsonValue none;
    const JsonValue* spec = firstTemplateOf(*after).spec;
    return spec != nullptr ? *spec : none;
  }
};

// Runs `mutators` in order on a copy of `object`, classified as the engine
// classifies it, with `profile` as the selected profile; `cluster`, when
// given, is the view its DRA claims resolve in.
inline MutationRun runMutators(const std::vector<const MutatorDeclaration*>& mutators,
                               const JsonValue& object, const Profile& profile,
                               std::string_view namespaceName = "default",
                               const ClusterView* cluster = nullptr) {
  MutationRun run;
  run.before = std::make_shared<JsonDocument>();
  run.before->CopyFrom(object, run.before->GetAllocator());
  run.after = std::make_shared<JsonDocument>();
  run.after->CopyFrom(object, run.after->GetAllocator());
  // A kind the built-in rows lack runs as a row without templates.
  static const WorkloadType kNoRow;
  const PodTemplateView view = firstTemplateOf(object);
  const WorkloadType& type = view.type != nullptr ? *view.type : kNoRow;
  PodReader pod = PodReader::of(view);
  resolveClaimsOf(pod, cluster, namespaceName);
  const Classification classification = classify(view, pod);
  MutationContext context{*run.after,  run.after->GetAllocator(),
                          type,        classification,
                          profile,     namespaceName,
                          run.changes, run.notices};
  context.cluster = cluster;
  for (const MutatorDeclaration* mutator : mutators)
    run.changed = mutator->mutate(context) || run.changed;
  return run;
}

inline MutationRun runMutator(const MutatorDeclaration& mutator, const JsonValue& object,
                              const Profile& profile, std::string_view namespaceName = "default",
                              const ClusterView* cluster = nullptr) {
  return runMutators({&mutator}, object, profile, namespaceName, cluster);
}

inline MutationRun runMutator(const MutatorDeclaration& mutator, const std::string& yaml,
                              const Profile& profile, std::string_view namespaceName = "default",
                              const ClusterView* cluster = nullptr) {
  return runMutator(mutator, *manifest(yaml), profile, namespaceName, cluster);
}

// The run's patch, applied by kubectl to the original, gives the mutated
// object; and the mutator run again on that result changes nothing and
// says the same about what it left out.
inline void expectAppliedAndIdempotent(const std::vector<const MutatorDeclaration*>& mutators,
                                       const MutationRun& run, const Profile& profile,
                                       std::string_view namespaceName = "default",
                                       const ClusterView* cluster = nullptr) {
  const std::string patch = run.patch();
  ASSERT_EQ(run.changed, !patch.empty()) << patch;
  ASSERT_EQ(run.changed, !run.changes.empty());
  if (!patch.empty()) {
    const std::string patched = applyPatch(toJson(*run.before), patch);
    ASSERT_FALSE(patched.empty());
    EXPECT_EQ(*parseJson(patched), *run.after) << patch;
  }
  const MutationRun again = runMutators(mutators, *run.after, profile, namespaceName, cluster);
  EXPECT_FALSE(again.changed) << again.patch();
  EXPECT_TRUE(again.changes.empty());
  EXPECT_EQ(again.notices, run.notices);
  EXPECT_EQ(again.patch(), "");
}

inline void expectAppliedAndIdempotent(const MutatorDeclaration& mutator, const MutationRun& run,
                                       const Profile& profile,
                                       std::string_view namespaceName = "default",
                                       const ClusterView* cluster = nullptr) {
  expectAppliedAndIdempotent(std::vector<const MutatorDeclaration*>{&mutator}, run, profile,
                             namespaceName, cluster);
}

// Runs `mutators` on each template of a custom resource in turn, as the
// engine does, its main template the one the engine's classification names.
inline MutationRun runOnCustomResource(const std::vector<const MutatorDeclaration*>& mutators,
                                       const JsonValue& object, const Profile& profile,
                                       const ClusterView* cluster = nullptr) {
  MutationRun run;
  run.before = std::make_shared<JsonDocument>();
  run.before->CopyFrom(object, run.before->GetAllocator());
  run.after = std::make_shared<JsonDocument>();
  run.after->CopyFrom(object, run.after->GetAllocator());
  const WorkloadType* type = WorkloadTypeTable::builtIn()->findForObject(object);
  EXPECT_NE(type, nullptr);
  if (type == nullptr) return run;
  const Resolution resolution = resolveTemplates(*type, object);
  // Reserved: a reader holds its template's view.
  std::vector<PodTemplateView> views;
  views.reserve(resolution.templates.size());
  std::vector<PodReader> pods;
  for (const ResolvedTemplate& place : resolution.templates) {
    views.push_back(PodTemplateView::at(object, *type, place));
    pods.push_back(PodReader::of(views.back()));
  }
  const size_t primary = classifyWorkload(views, pods, false).primaryTemplate();
  for (size_t i = 0; i < views.size(); ++i) {
    const Classification classification = classify(views[i], pods[i]);
    MutationContext context{*run.after,  run.after->GetAllocator(),
                            *type,       classification,
                            profile,     "default",
                            run.changes, run.notices};
    context.place = &resolution.templates[i];
    context.severalTemplates = views.size() > 1;
    context.primaryTemplate = i == primary;
    context.cluster = cluster;
    for (const MutatorDeclaration* mutator : mutators)
      run.changed = mutator->mutate(context) || run.changed;
  }
  return run;
}

inline MutationRun runOnCustomResource(const MutatorDeclaration& mutator, const JsonValue& object,
                                       const Profile& profile,
                                       const ClusterView* cluster = nullptr) {
  return runOnCustomResource(std::vector<const MutatorDeclaration*>{&mutator}, object, profile,
                             cluster);
}

// The patch applied by kubectl gives the mutated object, a second run changes
// nothing, and the mutated object is valid against its CRD.
inline void expectAppliedIdempotentAndValid(const MutatorDeclaration& mutator,
                                            const MutationRun& run, const Profile& profile,
                                            const ClusterView* cluster = nullptr) {
  const std::string patch = run.patch();
  ASSERT_EQ(run.changed, !patch.empty()) << patch;
  if (!patch.empty()) {
    const std::string patched = applyPatch(toJson(*run.before), patch);
    ASSERT_FALSE(patched.empty());
    EXPECT_EQ(*parseJson(patched), *run.after) << patch;
  }
  const MutationRun again = runOnCustomResource(mutator, *run.after, profile, cluster);
  EXPECT_FALSE(again.changed) << again.patch();
  EXPECT_TRUE(again.changes.empty());
  EXPECT_EQ(again.notices, run.notices);
  const std::string name(stringMember(member(run.after.get(), "metadata"), "name"));
  const std::string kind(stringMember(run.after.get(), "kind"));
  EXPECT_EQ(validateCustomResources({toJson(*run.after)}),
            (std::map<std::string, std::string>{{kind + "/" + name, "ok"}}));
}

// The value at a JSON Pointer ("/spec/template/spec/nodeSelector"), or nullptr.
inline const JsonValue* at(const JsonValue& root, const char* pointer) {
  return rapidjson::Pointer(pointer).Get(root);
}

}  // namespace aiadmit::testing
