// The objects explain's DRA tests read: node dra-0, its GPUs as driver
// gpu.nvidia.com publishes them, the class of them, claims and the Pods that
// use them, all in namespace ml; and explain run on a List of them.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "webhook/waiting/waiting.h"

namespace aiadmit::testing {

using nlohmann::json;

inline WaitingReport explainObjects(const std::vector<json>& objects) {
  json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}};
  const WaitingInput input = readWaitingInput(list.dump(), "snapshot");
  EXPECT_EQ(input.error, "");
  return explainWaiting(input, {});
}

inline json draNode() {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "dra-0"}, {"labels", {{"cloud.google.com/gke-nodepool", "dra"}}}}},
          {"status", {{"allocatable", {{"cpu", "32"}}}}}};
}

// dra-0's `devices` GPUs as its driver publishes them, each with `taints`.
inline json draSlice(int devices, const json& taints = json::array()) {
  json list = json::array();
  for (int i = 0; i < devices; ++i) {
    json device = {{"name", "gpu-" + std::to_string(i)}};
    if (!taints.empty()) device["taints"] = taints;
    list.push_back(device);
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", "dra-0-gpu.nvidia.com-x7k2p"}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", "dra-0"},
            {"pool", {{"name", "dra-0"}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", list}}}};
}

inline json deviceClass() {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", "gpu.nvidia.com"}}},
          {"spec",
           {{"selectors",
             json::array({{{"cel", {{"expression", "device.driver == 'gpu.nvidia.com'"}}}}})}}}};
}

// Claim `name` of `count` devices of `className`, its request tolerating
// `tolerations`, and the first `allocated` devices of dra-0 given to it.
inline json draClaim(const std::string& name, const std::string& className, int count,
                     const json& tolerations = json::array(), int allocated = 0) {
  json exactly = {{"deviceClassName", className}, {"count", count}};
  if (!tolerations.empty()) exactly["tolerations"] = tolerations;
  json object = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", name}, {"namespace", "ml"}}},
      {"spec",
       {{"devices", {{"requests", json::array({{{"name", "gpu"}, {"exactly", exactly}}})}}}}}};
  if (allocated > 0) {
    json results = json::array();
    for (int i = 0; i < allocated; ++i) {
      results.push_back({{"request", "gpu"},
                         {"driver", "gpu.nvidia.com"},
                         {"pool", "dra-0"},
                         {"device", "gpu-" + std::to_string(i)}});
    }
    object["status"]["allocation"]["devices"]["results"] = results;
  }
  return object;
}

// A Pending Pod whose one container uses claim `claimName`, bound to
// `nodeName` when one is given.
inline json claimingPod(const std::string& name, const std::string& claimName,
                        const std::string& nodeName = "") {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", "ml"}}},
      {"spec",
       {{"containers",
         json::array(
             {{{"name", "main"}, {"resources", {{"claims", json::array({{{"name", "gpu"}}})}}}}})},
        {"resourceClaims", json::array({{{"name", "gpu"}, {"resourceClaimName", claimName}}})}}},
      {"status", {{"phase", "Pending"}}}};
  if (!nodeName.empty()) pod["spec"]["nodeName"] = nodeName;
  return pod;
}

}  // namespace aiadmit::testing
