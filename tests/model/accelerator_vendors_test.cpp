// The accelerator vendors' names: each real name belongs to its vendor and is
// never taken for a misspelling of another's; a name a few letters off a
// known name, in another case, or with the vendor's domain cut short is one.
#include "webhook/model/accelerator_vendors.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace aiadmit {
namespace {

TEST(AcceleratorVendors, EveryVendorsRealNamesAreKnownAndTheirOwn) {
  const std::pair<const char*, const char*> names[] = {{"nvidia.com/gpu", "nvidia"},
                                                       {"nvidia.com/mig-1g.10gb", "nvidia"},
                                                       {"nvidia.com/gpu.shared", "nvidia"},
                                                       {"amd.com/gpu", "amd"},
                                                       {"gpu.intel.com/i915", "intel"},
                                                       {"gpu.intel.com/xe", "intel"},
                                                       {"habana.ai/gaudi", "gaudi"},
                                                       {"aws.amazon.com/neuron", "neuron"},
                                                       {"aws.amazon.com/neuroncore", "neuron"},
                                                       {"aws.amazon.com/neurondevice", "neuron"},
                                                       {"google.com/tpu", "tpu"},
                                                       {"huawei.com/Ascend910", "ascend"}};
  for (const auto& [name, vendor] : names) {
    EXPECT_TRUE(isKnownAcceleratorResource(name)) << name;
    EXPECT_EQ(misspeltAcceleratorName(name), std::nullopt) << name;
    ASSERT_NE(vendorOfResource(name), nullptr) << name;
    EXPECT_EQ(vendorOfResource(name)->key, vendor) << name;
    EXPECT_EQ(acceleratorFamily(name), vendor) << name;
  }
}

TEST(AcceleratorVendors, MisspellingsOfAKnownNameSayWhichOne) {
  const std::pair<const char*, const char*> misspelt[] = {
      {"nvidia.com/gpus", "nvidia.com/gpu"},
      {"nvidia.com/GPU", "nvidia.com/gpu"},
      {"nvidia/gpu", "nvidia.com/gpu"},
      {"nvida.com/gpu", "nvidia.com/gpu"},
      {"alpha.kubernetes.io/nvidia-gpu", "nvidia.com/gpu"},
      {"nvidia.com/mig1g.10gb", "nvidia.com/mig-1g.10gb"},
      {"amd.com/gpus", "amd.com/gpu"},
      {"amd/gpu", "amd.com/gpu"},
      {"habana.ai/gaudii", "habana.ai/gaudi"},
      {"aws.amazon.com/neuroncores", "aws.amazon.com/neuroncore"},
      {"google.com/tpus", "google.com/tpu"}};
  for (const auto& [name, meant] : misspelt) {
    EXPECT_EQ(misspeltAcceleratorName(name), std::optional<std::string>(meant)) << name;
  }
  // A misspelling belongs where the name it misspells does.
  EXPECT_EQ(acceleratorFamily("amd.com/gpus"), "amd");
  EXPECT_EQ(acceleratorFamily("nvidia/gpu"), "nvidia");
}

TEST(AcceleratorVendors, NoOtherVendorsNameIsCorrectedIntoOne) {
  // Far from every known name, or a vendor whose names follow each chip
  // generation (Ascend), or no domain at all: nobody's misspelling.
  for (const char* name : {"huawei.com/Ascend910B", "huawei.com/ascend-1980", "example.com/gpu",
                           "xilinx.com/fpga-xilinx_u30_gen3x4_base_2-0", "nvidia.com/sharedgpu",
                           "gpu", "squat.ai/gpu"}) {
    EXPECT_EQ(misspeltAcceleratorName(name), std::nullopt) << name;
  }
  // amd.com/gpu is one letter from nothing NVIDIA offers, and AMD's own.
  EXPECT_EQ(misspeltAcceleratorName("amd.com/gpu"), std::nullopt);
  EXPECT_EQ(acceleratorFamily("example.com/gpu"), "example.com");
  EXPECT_EQ(acceleratorFamily("gpu"), "");
}

TEST(AcceleratorVendors, DeviceClassesAreTheirDriversVendors) {
  EXPECT_EQ(vendorOfDeviceClass("gpu.nvidia.com")->key, "nvidia");
  EXPECT_EQ(vendorOfDeviceClass("mig.nvidia.com")->key, "nvidia");
  EXPECT_EQ(vendorOfDeviceClass("gpu.amd.com")->key, "amd");
  EXPECT_EQ(vendorOfDeviceClass("gpu.intel.com")->key, "intel");
  EXPECT_EQ(vendorOfDeviceClass("gaudi.intel.com")->key, "gaudi");
  EXPECT_EQ(vendorOfDeviceClass("tpu.google.com")->key, "tpu");
  EXPECT_EQ(vendorOfDeviceClass("gpu.example.com"), nullptr);
  EXPECT_EQ(vendorOfDeviceClass("rdma.nvidia.com"), nullptr);
}

}  // namespace
}  // namespace aiadmit
