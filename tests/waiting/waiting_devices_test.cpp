// explain and DRA device taints: free devices that a taint of their driver
// or of a DeviceTaintRule keeps a claim off are no free capacity, next to a
// taint the claim tolerates, a None effect, and devices held by claims.
#include <gtest/gtest.h>

#include "tests/waiting/dra_objects.h"

namespace aiadmit {
namespace {

using namespace testing;

json taint(const std::string& effect) {
  return {{"key", "gpu.nvidia.com/unhealthy"},
          {"value", "xid-79"},
          {"effect", effect},
          {"timeAdded", "2026-12-01T09:00:00Z"}};
}

json rule(const json& selector, const std::string& effect = "NoSchedule") {
  json object = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "DeviceTaintRule"},
      {"metadata", {{"name", "firmware-upgrade"}}},
      {"spec",
       {{"taint",
         {{"key", "example.com/maintenance"}, {"value", "firmware"}, {"effect", effect}}}}}};
  if (!selector.is_null()) object["spec"]["deviceSelector"] = selector;
  return object;
}

TEST(WaitingDevices, FreeDevicesTaintedByTheirDriverKeepAnUntoleratingClaimWaiting) {
  const WaitingReport report =
      explainObjects({draNode(), draSlice(4, json::array({taint("NoSchedule")})), deviceClass(),
                      draClaim("c", "gpu.nvidia.com", 2), claimingPod("p", "c")});
  ASSERT_EQ(report.waiting.size(), 1u);
  const WaitingWorkload& waiting = report.waiting[0];
  EXPECT_EQ(waiting.cause, WaitCause::DeviceTainted);
  EXPECT_EQ(causeName(waiting.cause), "device-tainted");
  EXPECT_EQ(waiting.pool, "dra");
  EXPECT_EQ(
      waiting.reason,
      "claim c asks for 2 devices of class gpu.nvidia.com; free devices of node dra-0 "
      "(gpu-0, gpu-1, gpu-2, gpu-3) carry the taint gpu.nvidia.com/unhealthy=xid-79:NoSchedule "
      "(published by driver gpu.nvidia.com in ResourceSlice dra-0-gpu.nvidia.com-x7k2p), "
      "which its request does not tolerate, and no node it may use has 2 free without one");
  EXPECT_EQ(waiting.fix,
            "add the toleration {key: gpu.nvidia.com/unhealthy, operator: Equal, value: xid-79, "
            "effect: NoSchedule} to spec.devices.requests[0].exactly.tolerations of "
            "ResourceClaim c, or wait for driver gpu.nvidia.com to clear the taint once the "
            "devices are fit for use");
  ASSERT_EQ(report.idle.size(), 1u);
  EXPECT_EQ(report.idle[0].gpus, 4);
  EXPECT_EQ(report.idle[0].idleGpus, 0) << "tainted devices are no free capacity";
  EXPECT_EQ(report.idle[0].taintedGpus, 4);
}

TEST(WaitingDevices, ATaintTheClaimToleratesOrOfEffectNoneKeepsNothingOff) {
  const json exists = json::array(
      {{{"key", "gpu.nvidia.com/unhealthy"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  for (const auto& [taints, tolerations] :
       std::vector<std::pair<json, json>>{{json::array({taint("NoSchedule")}), exists},
                                          {json::array({taint("None")}), json::array()}}) {
    const WaitingReport report =
        explainObjects({draNode(), draSlice(4, taints), deviceClass(),
                        draClaim("c", "gpu.nvidia.com", 2, tolerations), claimingPod("p", "c")});
    ASSERT_EQ(report.waiting.size(), 1u);
    EXPECT_NE(report.waiting[0].cause, WaitCause::DeviceTainted) << taints.dump();
    EXPECT_EQ(report.idle[0].taintedGpus, taints[0]["effect"] == "None" ? 0 : 4);
  }
}

TEST(WaitingDevices, AToleranceOfAnotherValueOrEffectDoesNotTolerateIt) {
  for (const json& toleration :
       {json{{"key", "gpu.nvidia.com/unhealthy"}, {"operator", "Equal"}, {"value", "xid-48"}},
        json{{"key", "gpu.nvidia.com/unhealthy"},
             {"operator", "Exists"},
             {"effect", "NoExecute"}}}) {
    const WaitingReport report = explainObjects(
        {draNode(), draSlice(4, json::array({taint("NoSchedule")})), deviceClass(),
         draClaim("c", "gpu.nvidia.com", 2, json::array({toleration})), claimingPod("p", "c")});
    ASSERT_EQ(report.waiting.size(), 1u);
    EXPECT_EQ(report.waiting[0].cause, WaitCause::DeviceTainted) << toleration.dump();
  }
}

TEST(WaitingDevices, ADeviceTaintRuleTaintsTheDevicesItSelects) {
  const WaitingReport report =
      explainObjects({draNode(), draSlice(4), deviceClass(), rule({{"driver", "gpu.nvidia.com"}}),
                      draClaim("c", "gpu.nvidia.com", 1), claimingPod("p", "c")});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::DeviceTainted);
  EXPECT_NE(report.waiting[0].reason.find("carry the taint example.com/maintenance=firmware:"
                                          "NoSchedule (set by DeviceTaintRule firmware-upgrade)"),
            std::string::npos)
      << report.waiting[0].reason;
  EXPECT_NE(report.waiting[0].fix.find(", or delete DeviceTaintRule firmware-upgrade once the "
                                       "devices are fit for use (kubectl delete devicetaintrule "
                                       "firmware-upgrade)"),
            std::string::npos)
      << report.waiting[0].fix;
}

TEST(WaitingDevices, ARuleOfOtherDevicesOrWithoutASelectorTaintsNone) {
  for (const json& selector :
       {json(nullptr), json{{"driver", "gpu.amd.com"}}, json{{"pool", "dra-1"}},
        json{{"driver", "gpu.nvidia.com"}, {"pool", "dra-0"}, {"device", "gpu-9"}}}) {
    const WaitingReport report =
        explainObjects({draNode(), draSlice(4), deviceClass(), rule(selector),
                        draClaim("c", "gpu.nvidia.com", 1), claimingPod("p", "c")});
    ASSERT_EQ(report.waiting.size(), 1u);
    EXPECT_NE(report.waiting[0].cause, WaitCause::DeviceTainted) << selector.dump();
    EXPECT_EQ(report.idle[0].taintedGpus, 0) << selector.dump();
  }
  // One device by name: the other three still serve a claim of 3.
  const WaitingReport one =
      explainObjects({draNode(), draSlice(4), deviceClass(),
                      rule({{"driver", "gpu.nvidia.com"}, {"pool", "dra-0"}, {"device", "gpu-2"}}),
                      draClaim("c", "gpu.nvidia.com", 3), claimingPod("p", "c")});
  EXPECT_NE(one.waiting[0].cause, WaitCause::DeviceTainted);
  EXPECT_EQ(one.idle[0].taintedGpus, 1);
  EXPECT_EQ(one.idle[0].idleGpus, 3);
}

TEST(WaitingDevices, DevicesHeldByClaimsAreNotWhatATaintKeepsOff) {
  // 2 held, 2 free but tainted: a claim of 3 waits for the held ones first.
  const std::vector<json> objects = {
      draNode(), draSlice(4, json::array({taint("NoExecute")})), deviceClass(),
      draClaim("held", "gpu.nvidia.com", 2, json::array({{{"operator", "Exists"}}}), 2),
      claimingPod("holder", "held", "dra-0")};
  std::vector<json> three = objects;
  three.insert(three.end(), {draClaim("c", "gpu.nvidia.com", 3), claimingPod("p", "c")});
  const WaitingReport report = explainObjects(three);
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::ClaimUnallocatable) << report.waiting[0].reason;
  EXPECT_EQ(report.idle[0].taintedGpus, 2);
  std::vector<json> two = objects;
  two.insert(two.end(), {draClaim("c", "gpu.nvidia.com", 2), claimingPod("p", "c")});
  const WaitingReport fits = explainObjects(two);
  EXPECT_EQ(fits.waiting[0].cause, WaitCause::DeviceTainted) << fits.waiting[0].reason;
  EXPECT_NE(fits.waiting[0].reason.find("(gpu-2, gpu-3)"), std::string::npos)
      << fits.waiting[0].reason;
}

TEST(WaitingDevices, AClaimMadeFromATemplateIsFixedInTheTemplate) {
  json pod = claimingPod("p", "p-gpu-5wz9k");
  pod["spec"]["resourceClaims"] =
      json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "one-gpu"}}});
  pod["status"]["resourceClaimStatuses"] =
      json::array({{{"name", "gpu"}, {"resourceClaimName", "p-gpu-5wz9k"}}});
  const WaitingReport report =
      explainObjects({draNode(), draSlice(4, json::array({taint("NoSchedule")})), deviceClass(),
                      draClaim("p-gpu-5wz9k", "gpu.nvidia.com", 1), pod});
  ASSERT_EQ(report.waiting.size(), 1u);
  EXPECT_EQ(report.waiting[0].cause, WaitCause::DeviceTainted);
  EXPECT_NE(report.waiting[0].fix.find("to spec.spec.devices.requests[0].exactly.tolerations of "
                                       "ResourceClaimTemplate one-gpu"),
            std::string::npos)
      << report.waiting[0].fix;
}

}  // namespace
}  // namespace aiadmit
