// Every accelerator has a home (profiles/README.md, "Selection"): a profile
// places its vendors' resources and its DeviceClasses; a workload gets the
// profile that places what it asks for; one that names none prefers the
// profile that gives GPUs by default; a pending claim goes nowhere; and the
// loader refuses only profiles that could both select one workload.
#include <gtest/gtest.h>

#include "mutators/mutator.h"
#include "webhook/policy/accelerators.h"
#include "webhook/policy/profile_loader.h"
#include "webhook/policy/profile_set.h"

namespace aiadmit {
namespace {

// A profile of `cls` whose gpu section is `gpu` (YAML flow mapping).
std::string vendorProfile(const std::string& name, const std::string& cls, const std::string& gpu,
                          const std::string& extra = "") {
  return "---\napiVersion: aiadmit.dev/v1\nkind: Profile\nmetadata:\n  name: " + name +
         "\nspec:\n  class: " + cls + "\n  gpu: " + gpu + "\n" + extra;
}

ProfileLoadResult loadText(const std::string& yaml) {
  return loadProfileText(yaml, "profiles/vendors.yaml", mutationSwitches());
}

std::string errorsOf(const ProfileLoadResult& result) {
  std::string errors;
  for (const ProfileError& error : result.errors) errors += error.format() + "\n";
  return errors;
}

// NVIDIA (the shipped kind of profile, GPUs by default), AMD and TPU pools for realtime.
const std::string kMixed =
    vendorProfile("realtime", "realtime", "{resourceName: nvidia.com/gpu, defaultCount: 1}") +
    vendorProfile("realtime-amd", "realtime", "{resourceName: amd.com/gpu}") +
    vendorProfile("realtime-tpu", "realtime", "{resourceName: google.com/tpu, gpusPerNode: 4}");

AcceleratorAsk claimOf(const std::string& deviceClass, std::vector<std::string> drivers = {}) {
  AcceleratorAsk ask;
  ask.deviceClass = deviceClass;
  ask.drivers = std::move(drivers);
  return ask;
}

std::string selected(const ProfileSet& set, const AcceleratorAsk& ask) {
  const ProfileSelection selection =
      set.select(WorkloadClass::Realtime, "team-a", nullptr, nullptr, "", ask);
  return selection.profile != nullptr ? selection.profile->name : "none: " + selection.unplaced;
}

TEST(AcceleratorSelection, EachWorkloadGetsItsVendorsPool) {
  const ProfileLoadResult loaded = loadText(kMixed);
  ASSERT_TRUE(loaded.ok()) << errorsOf(loaded);
  const ProfileSet& set = *loaded.set;
  EXPECT_EQ(selected(set, AcceleratorAsk::ofResource("nvidia.com/gpu")), "realtime");
  EXPECT_EQ(selected(set, AcceleratorAsk::ofResource("nvidia.com/mig-1g.10gb")), "realtime");
  // A misspelling goes to the pool of the name it misspells, whose rules report it.
  EXPECT_EQ(selected(set, AcceleratorAsk::ofResource("nvidia.com/gpus")), "realtime");
  EXPECT_EQ(selected(set, AcceleratorAsk::ofResource("amd.com/gpu")), "realtime-amd");
  EXPECT_EQ(selected(set, AcceleratorAsk::ofResource("amd.com/gpus")), "realtime-amd");
  EXPECT_EQ(selected(set, AcceleratorAsk::ofResource("google.com/tpu")), "realtime-tpu");
  // The vendors' DRA classes default from gpu.resourceName.
  EXPECT_EQ(selected(set, claimOf("gpu.nvidia.com")), "realtime");
  EXPECT_EQ(selected(set, claimOf("gpu.amd.com")), "realtime-amd");
  EXPECT_EQ(selected(set, claimOf("tpu.google.com")), "realtime-tpu");
  // A class an admin defines over a driver's devices goes where the driver's class does.
  EXPECT_EQ(selected(set, claimOf("mi300x", {"gpu.amd.com"})), "realtime-amd");
  // No accelerator named: the profile that gives GPUs by default.
  EXPECT_EQ(selected(set, AcceleratorAsk{}), "realtime");
}

TEST(AcceleratorSelection, WhatNoProfilePlacesGetsNoneAndSaysWhatToAdd) {
  const ProfileLoadResult loaded = loadText(kMixed);
  ASSERT_TRUE(loaded.ok()) << errorsOf(loaded);
  const ProfileSet& set = *loaded.set;
  EXPECT_EQ(selected(set, AcceleratorAsk::ofResource("habana.ai/gaudi")),
            "none: no realtime profile places habana.ai/gaudi; add one with it as "
            "gpu.resourceName");
  EXPECT_EQ(selected(set, claimOf("gpu.intel.com")),
            "none: no realtime profile places DeviceClass gpu.intel.com; add one with it in "
            "gpu.deviceClasses");
  // Its rules answer to the profile its scope selects.
  const ProfileSelection intel = set.select(WorkloadClass::Realtime, "team-a", nullptr, nullptr, "",
                                            AcceleratorAsk::ofResource("gpu.intel.com/i915"));
  EXPECT_EQ(intel.profile, nullptr);
  ASSERT_NE(intel.actionsFrom(), nullptr);
  EXPECT_EQ(intel.actionsFrom()->name, "realtime");
  // A claim not resolved yet: its vendor is not known, so no pool is chosen.
  AcceleratorAsk pending;
  pending.pendingClaim = "claim gpu: ResourceClaimTemplate gpu-claim is not known";
  EXPECT_EQ(selected(set, pending),
            "none: no pool until its claims resolve (claim gpu: ResourceClaimTemplate gpu-claim "
            "is not known); create the claim template before the workload");
}

TEST(AcceleratorSelection, ANamedProfileMustPlaceTheWorkload) {
  const ProfileLoadResult loaded = loadText(kMixed);
  ASSERT_TRUE(loaded.ok()) << errorsOf(loaded);
  const ProfileSelection wrong =
      loaded.set->select(WorkloadClass::Realtime, "team-a", nullptr, nullptr, "realtime-amd",
                         AcceleratorAsk::ofResource("nvidia.com/gpu"));
  EXPECT_EQ(wrong.profile, nullptr);
  EXPECT_NE(wrong.error.find("profile \"realtime-amd\" places \"amd.com/gpu\" and DeviceClasses "
                             "\"gpu.amd.com\", not nvidia.com/gpu (profiles of class realtime "
                             "that place nvidia.com/gpu for namespace team-a: realtime)"),
            std::string::npos)
      << wrong.error;
  ASSERT_NE(wrong.withoutAnnotation, nullptr);
  EXPECT_EQ(wrong.withoutAnnotation->name, "realtime");
  const ProfileSelection right =
      loaded.set->select(WorkloadClass::Realtime, "team-a", nullptr, nullptr, "realtime-amd",
                         AcceleratorAsk::ofResource("amd.com/gpu"));
  ASSERT_NE(right.profile, nullptr) << right.error;
  EXPECT_EQ(right.profile->name, "realtime-amd");
}

TEST(AcceleratorSelection, ProfilesOfDifferentVendorsDoNotTie) {
  EXPECT_TRUE(loadText(kMixed).ok()) << errorsOf(loadText(kMixed));
  // Two NVIDIA profiles of one scope could both place nvidia.com/gpu.
  const ProfileLoadResult sameVendor =
      loadText(kMixed + vendorProfile("realtime-h100", "realtime",
                                      "{resourceName: nvidia.com/gpu, defaultCount: 0}"));
  EXPECT_NE(errorsOf(sameVendor).find("both select a realtime workload in"), std::string::npos)
      << errorsOf(sameVendor);
  // Two that give GPUs by default could both take one that names none.
  const ProfileLoadResult twoDefaults = loadText(vendorProfile("realtime", "realtime",
                                                               "{resourceName: nvidia.com/gpu, "
                                                               "defaultCount: 1}") +
                                                 vendorProfile("realtime-amd", "realtime",
                                                               "{resourceName: amd.com/gpu, "
                                                               "defaultCount: 1}"));
  EXPECT_NE(errorsOf(twoDefaults)
                .find("both select a realtime workload that names no accelerator, to which both "
                      "give GPUs by default, in namespace default (any namespace, 0 labels) "
                      "with equal precedence; set gpu.defaultCount: 0 on one, or make the "
                      "scopes disjoint"),
            std::string::npos)
      << errorsOf(twoDefaults);
}

TEST(AcceleratorSelection, AProfileOfAnotherVendorListsItsOwnClasses) {
  const ProfileLoadResult loaded =
      loadText(vendorProfile("training-intel", "training", "{resourceName: gpu.intel.com/i915}") +
               vendorProfile("training-fpga", "training", "{resourceName: xilinx.com/fpga}") +
               vendorProfile("training", "training",
                             "{resourceName: nvidia.com/gpu, deviceClasses: [gpu.nvidia.com, "
                             "a100.example.com]}"));
  ASSERT_TRUE(loaded.ok()) << errorsOf(loaded);
  EXPECT_EQ(loaded.set->find("training-intel")->gpu.deviceClasses,
            std::vector<std::string>{"gpu.intel.com"});
  EXPECT_TRUE(loaded.set->find("training-fpga")->gpu.deviceClasses.empty());
  // What a profile lists stays as listed.
  EXPECT_EQ(loaded.set->find("training")->gpu.deviceClasses,
            (std::vector<std::string>{"gpu.nvidia.com", "a100.example.com"}));
}

TEST(AcceleratorSelection, EnforcingInferredClassesIsAProfilesChoice) {
  const ProfileLoadResult loaded =
      loadText(vendorProfile("realtime", "realtime", "{resourceName: nvidia.com/gpu}",
                             "  classification:\n    enforceInferred: true\n") +
               vendorProfile("batch", "batch", "{resourceName: nvidia.com/gpu}"));
  ASSERT_TRUE(loaded.ok()) << errorsOf(loaded);
  EXPECT_TRUE(loaded.set->find("realtime")->classification.enforceInferred);
  EXPECT_FALSE(loaded.set->find("batch")->classification.enforceInferred);
  const ProfileLoadResult wrong =
      loadText(vendorProfile("realtime", "realtime", "{resourceName: nvidia.com/gpu}",
                             "  classification:\n    enforceInferred: yes\n    strict: true\n"));
  EXPECT_NE(errorsOf(wrong).find("spec.classification.enforceInferred"), std::string::npos)
      << errorsOf(wrong);
  EXPECT_NE(errorsOf(wrong).find("spec.classification.strict: unknown field"), std::string::npos)
      << errorsOf(wrong);
}

}  // namespace
}  // namespace aiadmit
