// The fields of each section of a Profile's spec, one table a section
// (webhook/policy/field_table.h): every key the section takes and how its
// value is read, checked and bounded. A field left out keeps its member's
// initializer (webhook/policy/profile.h); profiles/README.md documents them.
#pragma once

#include <string>

#include "webhook/policy/field_table.h"
#include "webhook/policy/profile.h"

namespace aiadmit {

const yaml_fields::Fields<ProfileScope>& scopeFields();
const yaml_fields::Fields<GpuPool>& gpuFields();
const yaml_fields::Fields<Placement>& placementFields();
const yaml_fields::Fields<Scheduling>& schedulingFields();
const yaml_fields::Fields<Probes>& probesFields();
const yaml_fields::Fields<JobDefaults>& jobDefaultsFields();
const yaml_fields::Fields<SharedMemory>& sharedMemoryFields();
const yaml_fields::Fields<ClassificationPolicy>& classificationFields();

// What the pool's fields say together (a default count or an autoscaled
// node beyond the largest node, shared GPUs the pool does not allow), once
// `node`, the gpu section, is read into `gpu`.
void checkGpuPool(yaml_fields::Reader& reader, const YAML::Node& node, const std::string& field,
                  const GpuPool& gpu);

// Label keys and values as the API server checks them; annotation values
// may be anything. Each returns what is wrong, or "".
std::string checkLabelKey(const std::string& key);
std::string checkLabelValue(const std::string& value);
std::string checkAnyValue(const std::string& value);

}  // namespace aiadmit
