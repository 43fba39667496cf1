// The resource-name vocabulary (webhook/model/resources.h): which names the
// API server takes for extended resources, which look like accelerators, and
// the name NVIDIA's device plugin gives a MIG slice written some other way.
#include "webhook/model/resources.h"

#include <gtest/gtest.h>

namespace aiadmit {
namespace {

TEST(ResourceNames, ExtendedResourcesAreTheApiServersOnes) {
  for (const char* name :
       {"nvidia.com/gpu", "huawei.com/ascend-1980", "xilinx.com/fpga-xilinx_u30_gen3x4_base_2-0",
        "rdma/hca_shared_devices_a", "example.com/dongle", "nvidia/gpu"}) {
    EXPECT_TRUE(isExtendedResourceName(name)) << name;
  }
  // Native names (no domain, or kubernetes.io anywhere) may be overcommitted,
  // and "requests." names belong to quotas.
  for (const char* name :
       {"cpu", "memory", "hugepages-2Mi", "ephemeral-storage", "gpu",
        kRemovedNvidiaGpuResource.data(), "deviceclass.resource.kubernetes.io/gpu.nvidia.com",
        "requests.nvidia.com/gpu"}) {
    EXPECT_FALSE(isExtendedResourceName(name)) << name;
  }
}

TEST(ResourceNames, AcceleratorsOfEveryVendorLookLikeOnes) {
  for (const char* name : {"nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "habana.ai/gaudi",
                           "google.com/tpu", "aws.amazon.com/neuroncore", "huawei.com/Ascend910",
                           "huawei.com/ascend-1980", "xilinx.com/fpga-xilinx_u30_gen3x4_base_2-0",
                           "nvidia.com/mig1g.10gb", kRemovedNvidiaGpuResource.data()}) {
    EXPECT_TRUE(looksLikeAccelerator(name)) << name;
  }
  for (const char* name : {"rdma/hca_shared_devices_a", "nvidia.com/hostdev",
                           "example.com/reascend", "smarter-devices/fuse", "hugepages-1Gi"}) {
    EXPECT_FALSE(looksLikeAccelerator(name)) << name;
  }
}

TEST(ResourceNames, MigSlicesWrittenOtherwiseGetTheDevicePluginsName) {
  const std::pair<const char*, const char*> cases[] = {
      {"nvidia.com/mig-1g.10gb", "nvidia.com/mig-1g.10gb"},
      {"nvidia.com/mig1g.10gb", "nvidia.com/mig-1g.10gb"},
      {"nvidia.com/MIG-3G.40GB", "nvidia.com/mig-3g.40gb"},
      {"mig-2g.20gb", "nvidia.com/mig-2g.20gb"},
      {"nvidia.com/1g-5gb", "nvidia.com/mig-1g.5gb"},
      {"nvidia.com/mig_1g_10gb", "nvidia.com/mig-1g.10gb"},
      {"nvidia.com/mig-1c.3g.20gb", "nvidia.com/mig-1c.3g.20gb"},
      {"nvidia.com/a100-mig-7g.80gb", "nvidia.com/mig-7g.80gb"},
  };
  for (const auto& [written, expected] : cases) {
    EXPECT_EQ(migResourceName(written).value_or("none"), expected) << written;
  }
  for (const char* name : {"nvidia.com/gpu", "nvidia.com/mig", "nvidia.com/mig-1g",
                           "nvidia.com/mig-1g.10gb.me", "nvidia.com/gpumem"}) {
    EXPECT_FALSE(migResourceName(name).has_value()) << name;
  }
}

}  // namespace
}  // namespace aiadmit
