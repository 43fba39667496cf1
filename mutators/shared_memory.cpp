// PyTorch DataLoader workers pass batches through /dev/shm, and NCCL passes
// data between the GPUs of a Pod through it; a container runtime caps it at
// 64 MiB, so both die ("Bus error", "failed to extend /dev/shm") once the
// work grows. When a Pod asks for at least the profile's sharedMemory.minGpus
// GPUs (the shipped profiles: every GPU training and batch Pod, and serving
// Pods from 2 GPUs), each of its GPU containers that mounts nothing at
// /dev/shm gets a memory-backed emptyDir there, sized by sharedMemory.sizeLimit
// and never beyond the containers' memory limits. A memory emptyDir the Pod
// already mounts at /dev/shm is shared rather than duplicated; a Pod that
// mounts anything else there, or uses the node's IPC namespace, has chosen
// its own and is left alone.
#include "mutators/mutator.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "webhook/model/quantity.h"
#include "webhook/model/shared_memory.h"

namespace aiadmit {

namespace {

bool isShmPath(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path == kSharedMemoryPath;
}

const JsonValue* shmMount(const JsonValue& container) {
  const JsonValue* mounts = member(&container, "volumeMounts");
  if (!isArray(mounts)) return nullptr;
  for (const JsonValue& mount : mounts->GetArray()) {
    if (isShmPath(stringMember(&mount, "mountPath"))) return &mount;
  }
  return nullptr;
}

const JsonValue* findVolume(const JsonValue* podSpec, std::string_view name) {
  return elementWith(member(podSpec, "volumes"), "name", name);
}

bool isMemoryEmptyDir(const JsonValue* volume) {
  return stringMember(member(volume, "emptyDir"), "medium") == "Memory";
}

bool isTrue(const JsonValue* value) {
  return value != nullptr && value->IsBool() && value->GetBool();
}

// The Pod chose its own /dev/shm: a container mounts something there that is
// not a memory emptyDir (a hostPath of the node's /dev/shm, a volume of its
// own), or it runs in the node's IPC namespace, whose /dev/shm the container
// runtime hands to it.
bool podHasItsOwnShm(const PodReader& pod, const JsonValue* podSpec) {
  if (isTrue(member(podSpec, "hostIPC"))) return true;
  return std::any_of(pod.containers().begin(), pod.containers().end(),
                     [&](const PodContainer& container) {
                       const JsonValue* mount = shmMount(*container.json);
                       return mount != nullptr &&
                              !isMemoryEmptyDir(findVolume(podSpec, stringMember(mount, "name")));
                     });
}

// The volume to mount: a memory emptyDir some container already mounts at
// /dev/shm, else aiadmit's own: "aiadmit-shm" when it is free or already
// such an emptyDir, else the first free "aiadmit-shm-N", since a volume that
// took the name is the workload's and stays as it is.
std::string chooseVolume(const PodReader& pod, const JsonValue* podSpec) {
  for (const PodContainer& container : pod.containers()) {
    const std::string_view name = stringMember(shmMount(*container.json), "name");
    if (!name.empty() && isMemoryEmptyDir(findVolume(podSpec, name))) return std::string(name);
  }
  const JsonValue* own = findVolume(podSpec, kSharedMemoryVolume);
  if (own == nullptr || isMemoryEmptyDir(own)) return std::string(kSharedMemoryVolume);
  // A pod has finitely many volumes, so a free suffix is always found.
  for (size_t suffix = 2;; ++suffix) {
    std::string name = std::string(kSharedMemoryVolume) + "-" + std::to_string(suffix);
    if (findVolume(podSpec, name) == nullptr) return name;
  }
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

// The Pod's GPU containers (regular ones, container objects included) and
// the GPUs the Pod asks for on its node: whole GPUs and slices of the names
// the profile allows, and the devices of its GPU claims.
struct GpuWork {
  std::vector<const PodContainer*> containers;
  int64_t gpus = 0;
};

bool usesGpuClaim(const PodReader& pod, const PodContainer& container) {
  for (const GpuClaim& gpu : pod.claimedDevices().gpus) {
    if (!gpu.resourceName.empty() && PodReader::containerRequest(container, gpu.resourceName) > 0) {
      return true;
    }
    if (gpu.claim.empty()) continue;
    for (const ContainerClaimUse& use : pod.claims().uses) {
      if (!use.initContainer && use.container == container.name && use.claim == gpu.claim) {
        return true;
      }
    }
  }
  return false;
}

GpuWork gpuWork(const PodReader& pod, const Profile& profile) {
  std::set<std::string, std::less<>> allowed;
  pod.forEachResource([&](const ResourceEntry& entry) {
    if (profile.allowsResource(entry.name)) allowed.emplace(entry.name);
  });
  GpuWork work;
  for (const std::string& name : allowed)
    work.gpus = saturatingAdd(work.gpus, pod.podRequest(name));
  work.gpus = saturatingAdd(work.gpus, pod.claimedGpuCount());
  for (const PodContainer& container : pod.containers()) {
    if (container.list != ContainerList::Containers || container.resourcesOnly) continue;
    const bool asks = std::any_of(allowed.begin(), allowed.end(), [&](const std::string& name) {
      return PodReader::containerRequest(container, name) > 0;
    });
    if (asks || usesGpuClaim(pod, container)) work.containers.push_back(&container);
  }
  // A claim of all the devices a node has is GPU work of a count not known.
  if (!work.containers.empty()) work.gpus = std::max<int64_t>(work.gpus, 1);
  return work;
}

const JsonValue* memoryLimit(const PodContainer& container) {
  return member(member(container.resources(), "limits"), "memory");
}

// A memory-backed volume counts against the memory limit of the container
// that writes it, so it can never hold more than the largest limit of the
// containers that mount it: the profile's size is lowered to that, and a
// profile without a size takes it when every one of them has a limit.
std::string sizeLimit(const Profile& profile, const std::vector<const PodContainer*>& mounting) {
  const JsonValue* largest = nullptr;
  std::optional<Quantity> largestQuantity;
  for (const PodContainer* container : mounting) {
    const JsonValue* limit = memoryLimit(*container);
    const std::optional<Quantity> quantity =
        limit != nullptr ? Quantity::fromJson(*limit) : std::nullopt;
    if (!quantity || quantity->isZero() || quantity->isNegative())
      return profile.sharedMemory.sizeLimit;
    // Memory quantities fit a double exactly up to petabytes: enough to order them.
    if (!largestQuantity || quantity->approximate() > largestQuantity->approximate()) {
      largest = limit;
      largestQuantity = quantity;
    }
  }
  if (largest == nullptr) return profile.sharedMemory.sizeLimit;
  const std::optional<Quantity> configured = Quantity::parse(profile.sharedMemory.sizeLimit);
  if (configured && configured->approximate() <= largestQuantity->approximate()) {
    return profile.sharedMemory.sizeLimit;
  }
  return quantityText(*largest);
}

void addVolume(MutationContext& context, JsonValue& podSpec, const std::string& name,
               const std::string& size) {
  JsonValue emptyDir(rapidjson::kObjectType);
  setString(emptyDir, "medium", "Memory", context.alloc);
  if (!size.empty()) setString(emptyDir, "sizeLimit", size, context.alloc);
  JsonValue volume(rapidjson::kObjectType);
  setString(volume, "name", name, context.alloc);
  volume.AddMember("emptyDir", emptyDir, context.alloc);
  ensureArray(podSpec, "volumes", context.alloc).PushBack(volume, context.alloc);
}

std::string gpusText(int64_t gpus) {
  return std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
}

bool mountSharedMemory(MutationContext& context) {
  const Profile& profile = context.profile;
  if (!profile.sharedMemory.enabled) return false;
  JsonValue* spec = context.existingPodSpec();
  if (!isObject(spec)) return false;
  const PodReader pod = context.pod();
  if (podHasItsOwnShm(pod, spec)) return false;
  const GpuWork work = gpuWork(pod, profile);
  if (work.gpus < std::max<int64_t>(profile.sharedMemory.minGpus, 1)) return false;
  std::vector<const PodContainer*> unmounted;
  for (const PodContainer* container : work.containers) {
    if (shmMount(*container->json) == nullptr) unmounted.push_back(container);
  }
  if (unmounted.empty()) return false;

  const std::string volumeName = chooseVolume(pod, spec);
  const bool newVolume = findVolume(spec, volumeName) == nullptr;
  const std::string size = newVolume ? sizeLimit(profile, work.containers) : "";
  const std::string sized = size.empty() ? "" : " (sizeLimit " + size + ")";
  // The mounts go in before the volume: adding `volumes` may move the pod
  // spec's members, and with them a container object such as KServe's
  // predictor.model that the reader points at.
  for (const PodContainer* container : unmounted) {
    // The reader reads the copy that this mutator edits. Its name is read
    // first: a short string lives in the member that adding volumeMounts moves.
    JsonValue& json = *const_cast<JsonValue*>(container->json);
    const std::string name(container->name);
    JsonValue mount(rapidjson::kObjectType);
    setString(mount, "name", volumeName, context.alloc);
    setString(mount, "mountPath", kSharedMemoryPath, context.alloc);
    ensureArray(json, "volumeMounts", context.alloc).PushBack(mount, context.alloc);
    context.report("mounted memory-backed /dev/shm" + sized + " in container " + name + " for " +
                   gpusText(work.gpus));
  }
  if (newVolume) addVolume(context, *spec, volumeName, size);
  return true;
}

}  // namespace

extern const MutatorDeclaration kSharedMemoryMutator{
    "shared-memory", {{"sharedMemory"}}, kInjectSharedMemory, Runs::OnWorkloads, mountSharedMemory};

}  // namespace aiadmit
