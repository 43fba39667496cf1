// Where mutators find the parts of a workload they edit: the main container,
// the metadata that controllers copy onto what they create, and small
// "add when absent" edits shared by several mutators.
#pragma once

#include <array>
#include <span>
#include <string_view>

#include "mutators/mutator.h"

namespace aiadmit {

// The container that gets GPUs and probes, as the pod reader chooses it (the
// one asking for an accelerator, else the one aiadmit.dev/gpu-container names,
// else the first); nullptr when the pod has no containers.
JsonValue* mainContainer(MutationContext& context);

// A metadata object of a workload, as keys from the object down to "metadata".
struct MetadataLocation {
  std::array<std::string_view, 5> path;
  size_t depth;
  std::span<const std::string_view> keys() const { return {path.data(), depth}; }
};

// Every metadata aiadmit keeps labelled and stamped: the object's own and each
// template below it. Controllers copy template metadata onto what they create
// (a CronJob's Jobs, a Deployment's ReplicaSets, every controller's Pods), and
// those objects come back through the webhook: finding the labels already
// there is what keeps their patch empty.
std::span<const MetadataLocation> metadataLocations(WorkloadKind kind);

const JsonValue* findMetadata(const JsonValue& object, const MetadataLocation& where);
JsonValue& ensureMetadata(JsonValue& object, const MetadataLocation& where, JsonAllocator& alloc);

// Sets metadata.<field>[key] = value unless the key is already there, whatever
// its value. Returns true when it added the entry.
bool addMetadataEntryIfAbsent(JsonValue& object, const MetadataLocation& where,
                              std::string_view field, std::string_view key, std::string_view value,
                              JsonAllocator& alloc);

// Whether a field is missing or explicitly null (both mean "not set").
bool isUnset(const JsonValue* value);

}  // namespace aiadmit
