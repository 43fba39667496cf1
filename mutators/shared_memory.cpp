#include "mutators/shared_memory.h"

#include <algorithm>
#include <string>

namespace aiadmit {

namespace {

constexpr std::string_view kMountPath = "/dev/shm";
constexpr std::string_view kVolumeName = "aiadmit-shm";

bool isShmPath(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path == kMountPath;
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

// The volume to mount: a memory emptyDir some container already mounts at
// /dev/shm, else aiadmit's own: "aiadmit-shm" when it is free or already
// such an emptyDir, else the first free "aiadmit-shm-N", since a volume that
// took the name is the workload's and stays as it is.
std::string chooseVolume(const JsonValue* podSpec) {
  for (std::string_view list : {"containers", "initContainers"}) {
    const JsonValue* containers = member(podSpec, list);
    if (!isArray(containers)) continue;
    for (const JsonValue& container : containers->GetArray()) {
      const JsonValue* mount = shmMount(container);
      const std::string_view name = stringMember(mount, "name");
      if (!name.empty() && isMemoryEmptyDir(findVolume(podSpec, name))) return std::string(name);
    }
  }
  const JsonValue* own = findVolume(podSpec, kVolumeName);
  if (own == nullptr || isMemoryEmptyDir(own)) return std::string(kVolumeName);
  // A pod has finitely many volumes, so a free suffix is always found.
  for (size_t suffix = 2;; ++suffix) {
    std::string name = std::string(kVolumeName) + "-" + std::to_string(suffix);
    if (findVolume(podSpec, name) == nullptr) return name;
  }
}

bool mountSharedMemory(MutationContext& context) {
  const Profile& profile = context.profile;
  if (!profile.sharedMemory.enabled) return false;
  JsonValue* spec = context.existingPodSpec();
  const std::string& resource = profile.gpu.resourceName;
  const int64_t gpus = context.pod().podRequest(resource);
  if (gpus < std::max<int64_t>(profile.sharedMemory.minGpus, 1)) return false;

  JsonValue* containers = member(spec, "containers");
  if (!isArray(containers)) return false;
  const auto needsMount = [&](const JsonValue& container) {
    return container.IsObject() && PodReader::containerRequest(container, resource) > 0 &&
           shmMount(container) == nullptr;
  };
  if (std::none_of(containers->Begin(), containers->End(), needsMount)) return false;
  const std::string volumeName = chooseVolume(spec);

  if (findVolume(spec, volumeName) == nullptr) {
    JsonValue emptyDir(rapidjson::kObjectType);
    setString(emptyDir, "medium", "Memory", context.alloc);
    if (!profile.sharedMemory.sizeLimit.empty()) {
      setString(emptyDir, "sizeLimit", profile.sharedMemory.sizeLimit, context.alloc);
    }
    JsonValue volume(rapidjson::kObjectType);
    setString(volume, "name", volumeName, context.alloc);
    volume.AddMember("emptyDir", emptyDir, context.alloc);
    ensureArray(*spec, "volumes", context.alloc).PushBack(volume, context.alloc);
  }
  // Adding the volume may have moved the pod spec's members; find the containers again.
  containers = member(spec, "containers");
  for (JsonValue& container : containers->GetArray()) {
    if (!needsMount(container)) continue;
    JsonValue mount(rapidjson::kObjectType);
    setString(mount, "name", volumeName, context.alloc);
    setString(mount, "mountPath", kMountPath, context.alloc);
    ensureArray(container, "volumeMounts", context.alloc).PushBack(mount, context.alloc);
    context.report("mounted memory-backed emptyDir at /dev/shm in container " +
                   std::string(stringMember(&container, "name")) + " for " + std::to_string(gpus) +
                   " GPUs");
  }
  return true;
}

}  // namespace

SharedMemoryMutator::SharedMemoryMutator()
    : Mutator("shared-memory", {{.key = "sharedMemory", .onByDefault = true}}, kInjectSharedMemory,
              Runs::OnWorkloads, mountSharedMemory) {}

}  // namespace aiadmit
