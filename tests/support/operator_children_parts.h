// Pieces the operator builders share: object skeletons, controller owner
// references, label maps, and the defaults the API server applies to a Pod,
// Job, Deployment or StatefulSet before admission webhooks see it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/operator_children.h"

namespace aiadmit::testing::children {

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string nameOf(const JsonValue& object);
std::string namespaceOf(const JsonValue& object);
// The uid the API server gave the object: metadata.uid, else one derived
// from its kind and name so that every run builds the same children.
std::string uidOf(const JsonValue& object);
// 40 hex digits of SHA-1, as JobSet and LWS hash names into label values.
std::string sha1Hex(std::string_view text);

// A copy of `value` (an empty object when absent or not an object).
JsonValue copyObject(const JsonValue* value, JsonAllocator& alloc);
// apiVersion, kind and metadata {name or generateName, namespace}.
void startObject(JsonDocument& doc, std::string_view apiVersion, std::string_view kind,
                 std::string_view name, std::string_view ns, bool generated = false);
// metadata.ownerReferences = [the controller reference to `owner`], as
// controller-runtime's SetControllerReference and metav1.NewControllerRef
// write it (controller and blockOwnerDeletion true).
void setControllerOf(JsonValue& object, const JsonValue& owner, JsonAllocator& alloc);
// Adds or overwrites entries of metadata.labels / metadata.annotations of
// `metaHolder` (an object with a "metadata", or a pod template).
void putLabels(JsonValue& metaHolder, const Labels& labels, JsonAllocator& alloc);
void putAnnotations(JsonValue& metaHolder, const Labels& annotations, JsonAllocator& alloc);
// Copies every entry of `from` (a string map, may be null) into metadata.<key>.
void mergeMap(JsonValue& metaHolder, std::string_view key, const JsonValue* from,
              JsonAllocator& alloc);

// The container named `name`, else the first; null when there is none.
JsonValue* containerNamed(JsonValue& podSpec, std::string_view name);
void appendEnv(JsonValue& container, std::string_view name, std::string_view value,
               JsonAllocator& alloc);

// What the API server defaults on a PodSpec (core/v1 SetDefaults_PodSpec and
// SetDefaults_Container) and, for a Pod itself, what the DefaultTolerationSeconds
// and Priority admission plugins add before the webhooks run.
void defaultPodSpec(JsonValue& podSpec, JsonAllocator& alloc);
void defaultPod(JsonDocument& pod);
void defaultJob(JsonDocument& job);
void defaultDeployment(JsonDocument& deployment);
void defaultStatefulSet(JsonDocument& statefulSet);

// A Pod made from `templ` (a PodTemplateSpec), owned by `owner`, with the
// API server's defaults: the shape every controller's Pods share.
JsonDocument podFromTemplate(const JsonValue& templ, const JsonValue& owner, std::string_view name,
                             bool generated = false);

OperatorChild childOf(std::string role, const JsonValue& object);
void append(std::vector<OperatorChild>& into, std::vector<OperatorChild> more);

}  // namespace aiadmit::testing::children
