#include "webhook/cli/profiles_init.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "mutators/mutator.h"
#include "webhook/cli/cli.h"
#include "webhook/cli/cluster_source.h"
#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/codec/yaml_write.h"
#include "webhook/model/accelerator_vendors.h"
#include "webhook/model/resources.h"
#include "webhook/policy/pool_fit.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {

namespace {

constexpr const char* kInitHelp =
    R"(Usage: aiadmit profiles init (--kubeconfig FILE | --cluster SNAPSHOT) [--preset gke|eks|aks|gpu-operator] -o DIR

Writes the shipped profiles (training, batch, realtime) with pools that are
the cluster's real GPU node groups: the nodes that offer accelerators, grouped
by their node-group label (the preset's, else GKE's node pool, EKS's node
group, Karpenter's NodePool, AKS's agent pool, else the instance type), with a
toleration for each taint every node of a group carries, the most GPUs one
node has, the MIG resources and the DRA DeviceClasses of GPUs there are. The
vendor with the most GPUs keeps the shipped names; each other vendor's groups
(AMD, Intel, Gaudi, Neuron, TPU, another domain) get a set of their own,
named for it (training-amd, ...), that places its accelerators alone. A
cluster whose GPU groups are scaled to zero has no node to read: the preset
says what its cloud's GPU nodes carry. The profiles pass `profiles lint
--cluster` on the same cluster; review them, then apply them as the profiles
ConfigMap (profiles/README.md).

Options:
  --kubeconfig FILE   read Nodes, ResourceSlices and DeviceClasses with this kubeconfig
  --cluster SNAPSHOT  read them from a snapshot
                      (kubectl get nodes,resourceslices,deviceclasses -o yaml)
  --preset NAME       gke, eks, aks or gpu-operator
  -o, --output DIR    where to write them (created; files of the same names are replaced)
)";

Toleration tolerationOf(std::string key, std::string op, std::string value, std::string effect) {
  return Toleration{.key = std::move(key),
                    .op = std::move(op),
                    .value = std::move(value),
                    .effect = std::move(effect)};
}

NodeSelectorRequirement requirement(std::string key, std::string op,
                                    std::vector<std::string> values = {}) {
  return {std::move(key), std::move(op), std::move(values)};
}

const std::vector<ProfilePreset>& presets() {
  static const std::vector<ProfilePreset> kPresets = {
      // GKE labels GPU nodes with their accelerator type and taints them
      // nvidia.com/gpu=present:NoSchedule.
      {"gke",
       "cloud.google.com/gke-nodepool",
       {{},
        {requirement("cloud.google.com/gke-accelerator", "Exists")},
        {tolerationOf("nvidia.com/gpu", "Equal", "present", "NoSchedule")}}},
      // EKS GPU node groups carry no accelerator label of their own; the
      // taint its GPU guides give them is nvidia.com/gpu with any value.
      {"eks",
       "eks.amazonaws.com/nodegroup",
       {{}, {}, {tolerationOf("nvidia.com/gpu", "Exists", "", "NoSchedule")}}},
      // AKS labels GPU nodes kubernetes.azure.com/accelerator=nvidia; its GPU
      // guide taints them sku=gpu:NoSchedule.
      {"aks",
       "kubernetes.azure.com/agentpool",
       {{{"kubernetes.azure.com/accelerator", "nvidia"}},
        {},
        {tolerationOf("sku", "Equal", "gpu", "NoSchedule")}}},
      // The GPU Operator's feature discovery labels every GPU node
      // nvidia.com/gpu.present=true and names its GPU model.
      {"gpu-operator",
       "nvidia.com/gpu.product",
       {{{"nvidia.com/gpu.present", "true"}},
        {},
        {tolerationOf("nvidia.com/gpu", "Exists", "", "NoSchedule")}}},
  };
  return kPresets;
}

struct InitOptions {
  ClusterSource source;
  std::string preset;
  std::string output;
};

int usage(const std::string& message) {
  std::cerr << "aiadmit: " << message << "\n\n" << kInitHelp;
  return 2;
}

int parseInit(const std::vector<std::string>& args, InitOptions& options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string* into = nullptr;
    if (arg == "--kubeconfig") into = &options.source.kubeconfig;
    if (arg == "--cluster") into = &options.source.snapshot;
    if (arg == "--preset") into = &options.preset;
    if (arg == "-o" || arg == "--output") into = &options.output;
    if (into == nullptr || i + 1 >= args.size()) return usage("unknown argument " + arg);
    *into = args[++i];
  }
  if (options.source.kubeconfig.empty() == options.source.snapshot.empty()) {
    return usage("give one of --kubeconfig FILE and --cluster SNAPSHOT");
  }
  if (options.output.empty()) return usage("-o DIR is required");
  if (!options.preset.empty() && profilePreset(options.preset) == nullptr) {
    return usage("--preset: gke, eks, aks or gpu-operator");
  }
  return 0;
}

}  // namespace

const ProfilePreset* profilePreset(std::string_view name) {
  for (const ProfilePreset& preset : presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

Placement placementFor(const std::vector<NodeGroup>& groups) {
  Placement placement;
  std::set<std::string> keys;
  std::set<std::string> values;
  for (const NodeGroup& group : groups) {
    keys.insert(group.labelKey);
    values.insert(group.labelValue);
  }
  // One label names every group: select them by it. Groups of different
  // labels (or none) are left to their GPU requests and taints.
  if (keys.size() == 1 && !keys.begin()->empty()) {
    if (values.size() == 1) {
      placement.nodeSelector[*keys.begin()] = *values.begin();
    } else {
      placement.requiredNodeAffinity.push_back(
          requirement(*keys.begin(), "In", {values.begin(), values.end()}));
    }
  }
  std::set<std::tuple<std::string, std::string, std::string>> taints;
  for (const NodeGroup& group : groups) {
    for (const NodeTaint& taint : group.taints)
      taints.emplace(taint.key, taint.value, taint.effect);
  }
  for (const auto& [key, value, effect] : taints) {
    placement.tolerations.push_back(
        tolerationOf(key, value.empty() ? "Exists" : "Equal", value, effect));
  }
  return placement;
}

std::vector<std::string> poolsMatchingNoNode(const ProfileSet& profiles, const ClusterView& view) {
  std::vector<std::string> problems;
  for (const auto& [name, pool] : fitPools(profiles, view).unmatched) {
    problems.push_back(pool.sourceFile + ":" + std::to_string(pool.sourceLine) +
                       ": spec.placement: " + pool.problem() +
                       "; `aiadmit profiles init` "
                       "writes pools for them");
  }
  return problems;
}

}  // namespace aiadmit

namespace aiadmit {

namespace {

JsonValue placementJson(const Placement& placement, JsonAllocator& alloc) {
  JsonValue out(rapidjson::kObjectType);
  if (!placement.nodeSelector.empty()) {
    JsonValue selector(rapidjson::kObjectType);
    for (const auto& [key, value] : placement.nodeSelector) setString(selector, key, value, alloc);
    setMember(out, "nodeSelector", std::move(selector), alloc);
  }
  if (!placement.requiredNodeAffinity.empty()) {
    JsonValue terms(rapidjson::kArrayType);
    for (const NodeSelectorRequirement& requirement : placement.requiredNodeAffinity) {
      terms.PushBack(requirementToJson(requirement, alloc), alloc);
    }
    setMember(out, "requiredNodeAffinity", std::move(terms), alloc);
  }
  if (!placement.tolerations.empty()) {
    JsonValue tolerations(rapidjson::kArrayType);
    for (const Toleration& toleration : placement.tolerations) {
      tolerations.PushBack(tolerationToJson(toleration, alloc), alloc);
    }
    setMember(out, "tolerations", std::move(tolerations), alloc);
  }
  return out;
}

// What the node groups say of the profiles' gpu fields.
struct GpuFacts {
  std::string family;  // whose accelerators: "nvidia", "amd", ...; "" for none known
  std::string resourceName = "nvidia.com/gpu";
  int64_t gpusPerNode = 0;              // 0: no node to read it from
  std::set<std::string> shares;         // MIG slices and other shares the nodes offer
  std::set<std::string> otherDevices;   // whole devices besides resourceName (neuron, neuroncore)
  std::vector<std::string> draClasses;  // DeviceClasses of GPUs
};

// The node groups of one vendor, and the profiles written for them.
struct VendorPool {
  std::string family;
  std::vector<NodeGroup> groups;
  int64_t gpus = 0;  // whole devices on all its nodes, at the most one node has
};

// Whole devices on one node of `group`: its vendor's device resource where
// it has it (aws.amazon.com/neuron, not the neuroncores in them), else the
// most of any whole resource or DRA device.
int64_t devicesPerNode(const NodeGroup& group) {
  for (const AcceleratorVendor& vendor : acceleratorVendors()) {
    if (vendor.key != group.family) continue;
    const auto devices = group.mostPerNode.find(std::string(vendor.resourceName));
    if (devices != group.mostPerNode.end()) return devices->second;
  }
  int64_t most = group.mostDraDevicesPerNode;
  for (const auto& [resource, count] : group.mostPerNode) {
    if (!isSharedGpuResource(resource)) most = std::max(most, count);
  }
  return most;
}

// The groups by vendor, the vendor with the most GPUs first (its profiles
// keep the shipped names and give GPUs by default); groups whose devices are
// of a DRA driver of no known vendor go with it.
std::vector<VendorPool> poolsByVendor(const std::vector<NodeGroup>& groups) {
  std::vector<VendorPool> pools;
  std::vector<const NodeGroup*> unknown;
  for (const NodeGroup& group : groups) {
    if (group.family.empty()) {
      unknown.push_back(&group);
      continue;
    }
    auto pool = std::find_if(pools.begin(), pools.end(),
                             [&](const VendorPool& p) { return p.family == group.family; });
    if (pool == pools.end()) pool = pools.insert(pools.end(), VendorPool{group.family, {}, 0});
    pool->groups.push_back(group);
    pool->gpus += devicesPerNode(group) * static_cast<int64_t>(group.nodes.size());
  }
  // Among equals, the shipped profiles' own vendor keeps their names.
  const std::string shipped = acceleratorFamily(GpuPool{}.resourceName);
  std::stable_sort(pools.begin(), pools.end(), [&](const VendorPool& a, const VendorPool& b) {
    if (a.gpus != b.gpus) return a.gpus > b.gpus;
    if ((a.family == shipped) != (b.family == shipped)) return a.family == shipped;
    return a.family < b.family;
  });
  if (pools.empty() && !unknown.empty()) pools.push_back(VendorPool{});
  for (const NodeGroup* group : unknown) pools.front().groups.push_back(*group);
  return pools;
}

// Whether a GPU DeviceClass is of `pool`: its nodes publish the class's
// driver, or the class is its vendor's; a class of no known vendor that no
// pool's nodes publish goes with the first pool.
bool classOfPool(const DeviceClassRecord& deviceClass, const VendorPool& pool,
                 const std::vector<VendorPool>& pools) {
  auto publishes = [&](const VendorPool& p) {
    for (const NodeGroup& group : p.groups) {
      for (const std::string& driver : deviceClass.drivers) {
        if (group.draDrivers.contains(driver)) return true;
      }
    }
    return false;
  };
  if (std::any_of(pools.begin(), pools.end(), publishes)) return publishes(pool);
  const AcceleratorVendor* vendor = vendorOfDeviceClass(deviceClass.name);
  if (vendor != nullptr) return vendor->key == pool.family;
  return &pool == &pools.front();
}

GpuFacts gpuFacts(const VendorPool& pool, const std::vector<VendorPool>& pools,
                  const ClusterView& view) {
  GpuFacts facts;
  facts.family = pool.family;
  for (const AcceleratorVendor& vendor : acceleratorVendors()) {
    if (vendor.key == pool.family) facts.resourceName = std::string(vendor.resourceName);
  }
  std::map<std::string, int64_t> whole;
  for (const NodeGroup& group : pool.groups) {
    for (const auto& [resource, count] : group.mostPerNode) {
      if (isSharedGpuResource(resource)) {
        facts.shares.insert(resource);
      } else {
        whole[resource] = std::max(whole[resource], count);
      }
    }
  }
  for (const auto& [resource, count] : whole) {
    if (count > facts.gpusPerNode) {
      facts.resourceName = resource;
      facts.gpusPerNode = count;
    }
  }
  for (const auto& [resource, count] : whole) {
    if (resource != facts.resourceName) facts.otherDevices.insert(resource);
  }
  for (const DeviceClassRecord& deviceClass : view.deviceClasses()) {
    if (view.isGpuDeviceClass(deviceClass.name) == Presence::Yes &&
        classOfPool(deviceClass, pool, pools)) {
      facts.draClasses.push_back(deviceClass.name);
    }
  }
  return facts;
}

// Keeps the entries of the gpu section's allowedResources that are of the
// pool's vendor: a shipped profile's NVIDIA MIG slices are no AMD pool's.
void keepTheVendorsNames(JsonValue& gpu, const GpuFacts& facts, JsonAllocator& alloc) {
  JsonValue* allowed = const_cast<JsonValue*>(member(&gpu, "allowedResources"));
  if (allowed == nullptr || !allowed->IsArray()) return;
  const std::string family = acceleratorFamily(facts.resourceName);
  JsonValue kept(rapidjson::kArrayType);
  for (const JsonValue& entry : allowed->GetArray()) {
    if (acceleratorFamily(stringOf(&entry)) == family) {
      kept.PushBack(makeString(stringOf(&entry), alloc), alloc);
    }
  }
  if (kept.Empty()) {
    gpu.RemoveMember("allowedResources");
  } else {
    *allowed = std::move(kept);
  }
}

void fitProfile(JsonDocument& profile, const Placement& placement, const GpuFacts& facts) {
  JsonAllocator& alloc = profile.GetAllocator();
  JsonValue& spec = ensureObject(profile, "spec", alloc);
  JsonValue& gpu = ensureObject(spec, "gpu", alloc);
  setString(gpu, "resourceName", facts.resourceName, alloc);
  if (facts.gpusPerNode > 0) setMember(gpu, "gpusPerNode", JsonValue(facts.gpusPerNode), alloc);
  keepTheVendorsNames(gpu, facts, alloc);
  const JsonValue* sharing = member(&gpu, "sharingAllowed");
  const bool sharingAllowed = sharing != nullptr && sharing->IsBool() && sharing->GetBool();
  std::set<std::string> offered = facts.otherDevices;
  if (sharingAllowed) offered.insert(facts.shares.begin(), facts.shares.end());
  if (!offered.empty()) {
    JsonValue& allowed = ensureArray(gpu, "allowedResources", alloc);
    for (const std::string& name : offered) {
      bool listed = false;
      for (const JsonValue& entry : allowed.GetArray()) listed = listed || stringOf(&entry) == name;
      if (!listed) allowed.PushBack(makeString(name, alloc), alloc);
    }
  }
  if (!facts.draClasses.empty()) {
    JsonValue classes(rapidjson::kArrayType);
    for (const std::string& name : facts.draClasses)
      classes.PushBack(makeString(name, alloc), alloc);
    setMember(gpu, "deviceClasses", std::move(classes), alloc);
  }
  setMember(spec, "placement", placementJson(placement, alloc), alloc);
}

// What a profile of a second vendor is called beside the shipped one:
// "training-amd", "realtime-tpu"; "" for the first vendor's.
std::string vendorSuffix(const std::string& family) {
  std::string suffix;
  for (const char c : family) suffix += (c == '.' || c == '_') ? '-' : c;
  return suffix.empty() ? "" : "-" + suffix;
}

// A profile of a second vendor: named for it, and giving no GPUs by default
// (a workload that names none gets the first vendor's), so the two never tie.
void nameForVendor(JsonDocument& profile, const std::string& suffix) {
  JsonAllocator& alloc = profile.GetAllocator();
  JsonValue& metadata = ensureObject(profile, "metadata", alloc);
  setString(metadata, "name", std::string(stringMember(&metadata, "name")) + suffix, alloc);
  JsonValue& gpu = ensureObject(ensureObject(profile, "spec", alloc), "gpu", alloc);
  setMember(gpu, "defaultCount", JsonValue(int64_t{0}), alloc);
}

// The shipped profile files, fitted to one vendor's pool; name -> text.
bool fittedProfiles(const std::string& header, const Placement& placement, const GpuFacts& facts,
                    const std::string& suffix, std::map<std::string, std::string>& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(defaultProfilesDir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= 5 || name.substr(name.size() - 5) != ".yaml") continue;
    std::string text;
    if (!readAll(entry.path().string(), text)) continue;
    std::vector<ManifestDocument> documents;
    std::string error;
    if (!parseManifests(text, documents, &error)) {
      std::cerr << "aiadmit: " << entry.path().string() << ": " << error << "\n";
      return false;
    }
    std::string written = header;
    for (size_t i = 0; i < documents.size(); ++i) {
      if (stringMember(documents[i].json.get(), "kind") == "Profile") {
        fitProfile(*documents[i].json, placement, facts);
        if (!suffix.empty()) nameForVendor(*documents[i].json, suffix);
      }
      written += (i == 0 ? "" : "---\n") + toYaml(*documents[i].json);
    }
    out[name.substr(0, name.size() - 5) + suffix + ".yaml"] = std::move(written);
  }
  return true;
}

// The shipped Kustomization with its list of files replaced by `files`.
std::string kustomizationFor(const std::map<std::string, std::string>& files) {
  std::string text;
  if (!readAll((std::filesystem::path(defaultProfilesDir()) / "Kustomization").string(), text)) {
    return "";
  }
  const size_t list = text.find("    files:\n");
  if (list == std::string::npos) return text;
  text.resize(list + std::string_view("    files:\n").size());
  for (const auto& [name, content] : files) text += "      - " + name + "\n";
  return text;
}

// Each file, and the Kustomization that makes them the ConfigMap, written to
// `dir`; false (printed) when a file cannot be.
bool writeProfiles(const std::string& dir, const std::map<std::string, std::string>& files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::map<std::string, std::string> all = files;
  all["Kustomization"] = kustomizationFor(files);
  for (const auto& [name, text] : all) {
    std::ofstream out(fs::path(dir) / name, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) {
      std::cerr << "aiadmit: cannot write " << (fs::path(dir) / name).string() << "\n";
      return false;
    }
  }
  return true;
}

std::string describeGroups(const std::vector<NodeGroup>& groups) {
  std::string out;
  for (const NodeGroup& group : groups) {
    out += "#   " +
           (group.labelKey.empty() ? "(no node-group label)"
                                   : group.labelKey + "=" + group.labelValue) +
           ": " + std::to_string(group.nodes.size()) +
           (group.nodes.size() == 1 ? " node" : " nodes");
    for (const auto& [resource, count] : group.mostPerNode) {
      out += ", " + std::to_string(count) + " " + resource;
    }
    if (group.mostDraDevicesPerNode > 0) {
      out += ", " + std::to_string(group.mostDraDevicesPerNode) + " DRA devices";
    }
    for (const NodeTaint& taint : group.taints) {
      out += ", taint " + taint.key + (taint.value.empty() ? "" : "=" + taint.value) + ":" +
             taint.effect;
    }
    out += "\n";
  }
  return out;
}

}  // namespace

int profilesInitCommand(const std::vector<std::string>& args) {
  if (printHelp(args, kInitHelp)) return 0;
  InitOptions options;
  if (const int failed = parseInit(args, options); failed != 0) return failed;
  ClusterText cluster;
  if (!readClusterText(options.source, listNodeSnapshot, cluster)) return 2;
  const ClusterSnapshot snapshot = readClusterSnapshot(cluster.text, cluster.name);
  if (!snapshot.error.empty()) {
    std::cerr << "aiadmit: " << snapshot.error << "\n";
    return 2;
  }
  const ProfilePreset* preset = profilePreset(options.preset);
  const std::vector<NodeGroup> groups =
      gpuNodeGroups(*snapshot.view, preset != nullptr ? preset->poolLabel : "");
  if (groups.empty() && preset == nullptr) {
    std::cerr << "aiadmit: no node of " << cluster.name
              << " offers accelerators; give --preset for what its cloud's GPU nodes carry\n";
    return 2;
  }
  const std::string source =
      "# Written by `aiadmit profiles init` from " + cluster.name +
      (preset != nullptr ? " (preset " + std::string(preset->name) + ")" : std::string());
  std::map<std::string, std::string> files;
  if (groups.empty()) {
    const std::string header = source + ", which has no GPU node: the placement is the preset's.\n";
    if (!fittedProfiles(header, preset->placement, GpuFacts{}, "", files)) return 2;
  }
  const std::vector<VendorPool> pools = poolsByVendor(groups);
  for (size_t i = 0; i < pools.size(); ++i) {
    const VendorPool& pool = pools[i];
    const std::string header = source + ", for its " + (pool.family.empty() ? "GPU" : pool.family) +
                               " node groups:\n" + describeGroups(pool.groups);
    if (!fittedProfiles(header, placementFor(pool.groups), gpuFacts(pool, pools, *snapshot.view),
                        i == 0 ? "" : vendorSuffix(pool.family), files)) {
      return 2;
    }
  }
  if (!writeProfiles(options.output, files)) return 2;
  const ProfileLoadResult loaded = loadProfileDirectory(options.output, mutationSwitches());
  for (const ProfileError& error : loaded.errors) std::cerr << error.format() << "\n";
  if (!loaded.ok()) return 1;
  const std::vector<std::string> unmatched = poolsMatchingNoNode(*loaded.set, *snapshot.view);
  for (const std::string& problem : unmatched) std::cerr << problem << "\n";
  if (!unmatched.empty()) return 1;
  std::cout << "wrote " << loaded.set->profiles().size() << " profiles to " << options.output
            << " for " << (groups.empty() ? "the preset's GPU nodes" : "these node groups:\n")
            << (groups.empty() ? "\n" : describeGroups(groups));
  return 0;
}

}  // namespace aiadmit
