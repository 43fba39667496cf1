// Where mutators find the parts of a workload they edit: the main container,
// the metadata that controllers copy onto what they create, and small
// "add when absent" edits shared by several mutators.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mutators/mutator.h"

namespace aiadmit {

// The container that gets GPUs and probes, as the pod reader chooses it (the
// one asking for an accelerator, else the one aiadmit.dev/gpu-container names,
// else the first); nullptr when the pod has no containers.
JsonValue* mainContainer(MutationContext& context);

// Every metadata aiadmit keeps labelled and stamped, as JSON Pointers: the
// object's own and each template's below it. Controllers copy template
// metadata onto what they create (a CronJob's Jobs, a Deployment's
// ReplicaSets, every controller's Pods, an operator's Jobs and Pods), and
// those objects come back through the webhook: finding the labels already
// there is what keeps their patch empty. An object made by a controller
// keeps its own metadata as its controller set it (all but a Pod, whose
// metadata is its template's).
std::vector<std::string> metadataLocations(const MutationContext& context);
inline constexpr std::string_view kObjectMetadata = "/metadata";

const JsonValue* findMetadata(const JsonValue& object, std::string_view pointer);
// Null when the way to it runs through something that is not an object.
JsonValue* ensureMetadata(JsonValue& object, std::string_view pointer, JsonAllocator& alloc);

// Sets metadata.<field>[key] = value unless the key is already there, whatever
// its value. Returns true when it added the entry.
bool addMetadataEntryIfAbsent(JsonValue& object, std::string_view pointer, std::string_view field,
                              std::string_view key, std::string_view value, JsonAllocator& alloc);

// Whether a field is missing or explicitly null (both mean "not set").
bool isUnset(const JsonValue* value);

}  // namespace aiadmit
