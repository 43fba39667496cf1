#include "webhook/policy/profile_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <set>

#include "webhook/codec/text.h"
#include "webhook/model/accelerator_vendors.h"
#include "webhook/policy/field_table.h"
#include "webhook/policy/profile_fields.h"

namespace aiadmit {

namespace {

// The strict reader and the name syntax are shared with WorkloadType documents.
using namespace yaml_fields;

// A section of spec read from its table into `member` of the profile.
template <typename Section>
ReadField<Profile> section(Section Profile::*member, const Fields<Section>& (*fields)()) {
  return [member, fields](Reader& reader, const YAML::Node& value, const std::string& field,
                          Profile& profile) {
    readFields(reader, value, field, fields(), profile.*member);
  };
}

// A section whose presence turns it on (probes, sharedMemory): `enabled`
// is true unless the section says false.
template <typename Section>
ReadField<Profile> enablingSection(Section Profile::*member, const Fields<Section>& (*fields)()) {
  return [member, fields](Reader& reader, const YAML::Node& value, const std::string& field,
                          Profile& profile) {
    if (!knownFields(reader, value, field, fields())) return;
    (profile.*member).enabled = true;
    readEachField(reader, value, field, fields(), profile.*member);
  };
}

// The switches the profile turns off, over those off by default: each key
// set false turns its switch off, each set true turns it on.
void readMutations(Reader& reader, const YAML::Node& node, const std::string& field,
                   std::span<const MutationSwitch> switches, MutationSwitches& out) {
  std::vector<std::string_view> keys;
  for (const MutationSwitch& declared : switches) keys.push_back(declared.key);
  if (!reader.mapping(node, field, keys)) return;
  for (const MutationSwitch& declared : switches) {
    reader.optional(node, declared.key, field,
                    [&](const YAML::Node& value, const std::string& path) {
                      if (reader.boolean(value, path).value_or(declared.onByDefault)) {
                        out.off.erase(std::string(declared.key));
                      } else {
                        out.off.emplace(declared.key);
                      }
                    });
  }
}

void readRules(Reader& reader, const YAML::Node& node, const std::string& field, Profile& profile) {
  if (!node.IsMap()) {
    reader.error(node, field, "must be a mapping of rule IDs to deny, warn, audit or off");
    return;
  }
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string path = Reader::join(field, key);
    const auto rule = RuleId::parse(key);
    if (!rule) {
      reader.error(entry.first, path,
                   "unknown rule (rules are " + RuleId{kFirstRule}.name() + " to " +
                       lastRule().name() + ")");
      continue;
    }
    if (!seen.insert(key).second) {
      reader.error(entry.first, path, "is set twice");
      continue;
    }
    const auto text = reader.string(entry.second, path);
    if (!text) continue;
    if (auto action = parseAction(*text)) {
      profile.rules.set(*rule, *action);
    } else {
      oneOf(reader, entry.second, path, *text, {"deny", "warn", "audit", "off"});
    }
  }
}

void readClass(Reader& reader, const YAML::Node& value, const std::string& field,
               Profile& profile) {
  if (auto text = reader.string(value, field)) {
    if (auto parsed = parseClass(*text)) {
      profile.workloadClass = *parsed;
    } else {
      oneOf(reader, value, field, *text, {"training", "batch", "realtime"});
    }
  }
}

// spec's sections; spec.mutations takes the keys of `switches`.
Fields<Profile> specFields(std::span<const MutationSwitch> switches) {
  return {
      {"class", readClass},
      {"scope", section(&Profile::scope, scopeFields)},
      {"gpu",
       [](Reader& reader, const YAML::Node& value, const std::string& field, Profile& profile) {
         if (readFields(reader, value, field, gpuFields(), profile.gpu)) {
           checkGpuPool(reader, value, field, profile.gpu);
         }
       }},
      {"placement", section(&Profile::placement, placementFields)},
      {"scheduling", section(&Profile::scheduling, schedulingFields)},
      {"probes", enablingSection(&Profile::probes, probesFields)},
      {"jobDefaults", section(&Profile::jobDefaults, jobDefaultsFields)},
      {"sharedMemory", enablingSection(&Profile::sharedMemory, sharedMemoryFields)},
      {"mutations",
       [switches](Reader& reader, const YAML::Node& value, const std::string& field,
                  Profile& profile) {
         readMutations(reader, value, field, switches, profile.mutations);
       }},
      {"rules", readRules},
      {"classification", section(&Profile::classification, classificationFields)},
  };
}

void readSpec(Reader& reader, const YAML::Node& spec, std::span<const MutationSwitch> switches,
              Profile& profile) {
  const std::string field = "spec";
  const Fields<Profile> fields = specFields(switches);
  if (!knownFields(reader, spec, field, fields)) return;
  profile.scopeLocation = Reader::locationOf(spec);
  for (const auto& entry : spec) {
    if (entry.first.IsScalar() && entry.first.Scalar() == "scope") {
      profile.scopeLocation = Reader::locationOf(entry.first);
    }
  }
  const YAML::Node classNode = spec["class"];
  if (!classNode.IsDefined() || classNode.IsNull()) {
    reader.error(spec, "spec.class", "is required (training, batch or realtime)");
  }
  for (const MutationSwitch& declared : switches) {
    if (!declared.onByDefault) profile.mutations.off.emplace(declared.key);
  }
  readEachField(reader, spec, field, fields, profile);

  // Sections that can never take effect for the class are mistakes.
  if (profile.probes.enabled && profile.workloadClass != WorkloadClass::Realtime &&
      profile.workloadClass != WorkloadClass::None) {
    reader.error(spec["probes"], "spec.probes", "only applies to class realtime");
  }
  const JobDefaults& jobDefaults = profile.jobDefaults;
  const bool anyJobDefault = jobDefaults.backoffLimit || jobDefaults.activeDeadlineSeconds ||
                             jobDefaults.ttlSecondsAfterFinished;
  if (anyJobDefault && profile.workloadClass == WorkloadClass::Realtime) {
    reader.error(spec["jobDefaults"], "spec.jobDefaults",
                 "only applies to classes training and batch (realtime work is not a Job)");
  }

  // A pool's DeviceClasses default to those of its resource's vendor: the
  // member's initializer is NVIDIA's, the default resource's.
  const YAML::Node gpu = spec["gpu"];
  if (!gpu.IsDefined() || !gpu.IsMap() || !gpu["deviceClasses"].IsDefined()) {
    const AcceleratorVendor* vendor = vendorOfResource(profile.gpu.resourceName);
    profile.gpu.deviceClasses.clear();
    if (vendor != nullptr) {
      profile.gpu.deviceClasses.assign(vendor->deviceClasses.begin(), vendor->deviceClasses.end());
    }
  }

  // The pool's own resource is always allowed; one sorted list keeps lookups simple.
  auto& allowed = profile.gpu.allowedResources;
  if (std::find(allowed.begin(), allowed.end(), profile.gpu.resourceName) == allowed.end()) {
    allowed.push_back(profile.gpu.resourceName);
  }
  std::sort(allowed.begin(), allowed.end());
}

}  // namespace

void readDocumentHeader(Reader& reader, const YAML::Node& doc, std::string_view noun,
                        DocumentName& out) {
  const YAML::Node apiVersion = doc["apiVersion"];
  if (!apiVersion.IsDefined() || apiVersion.IsNull()) {
    reader.error(doc, "apiVersion", "is required (aiadmit.dev/v1)");
  } else if (auto text = reader.string(apiVersion, "apiVersion");
             text && *text != "aiadmit.dev/v1") {
    reader.error(apiVersion, "apiVersion", inQuotes(*text) + " is not aiadmit.dev/v1");
  }
  const YAML::Node metadata = doc["metadata"];
  if (!metadata.IsDefined() || metadata.IsNull()) {
    reader.error(doc, "metadata.name", "is required");
    return;
  }
  if (!reader.mapping(metadata, "metadata", {"name", "annotations", "labels"})) return;
  const YAML::Node name = metadata["name"];
  if (!name.IsDefined() || name.IsNull()) {
    reader.error(metadata, "metadata.name", "is required");
  } else if (auto text = reader.string(name, "metadata.name")) {
    out.name = *text;
    out.location = Reader::locationOf(name);
    if (!isNamespaceName(out.name)) {
      reader.error(
          name, "metadata.name",
          inQuotes(out.name) + " is not a valid " + std::string(noun) +
              " (lowercase letters, digits and '-', at most 63, starting and ending with a "
              "letter or digit)");
    }
  }
  reader.optional(metadata, "labels", "metadata",
                  [&](const YAML::Node& value, const std::string& field) {
                    reader.stringMap(value, field, checkLabelKey, checkLabelValue);
                  });
  reader.optional(metadata, "annotations", "metadata",
                  [&](const YAML::Node& value, const std::string& field) {
                    reader.stringMap(value, field, checkLabelKey, checkAnyValue);
                  });
}

void readProfileDocument(Reader& reader, const YAML::Node& doc, const std::string& file,
                         std::span<const MutationSwitch> switches, std::vector<Profile>& out) {
  const int before = reader.errorCount();
  if (!reader.mapping(doc, "", {"apiVersion", "kind", "metadata", "spec"})) return;
  const YAML::Node kind = doc["kind"];
  if (!kind.IsDefined() || kind.IsNull()) {
    reader.error(doc, "kind", "is required (Profile)");
  } else if (auto text = reader.string(kind, "kind"); text && *text != "Profile") {
    reader.error(kind, "kind", inQuotes(*text) + " is not Profile");
  }
  Profile profile;
  profile.sourceFile = file;
  profile.sourceLine = Reader::locationOf(doc).line;
  DocumentName name;
  readDocumentHeader(reader, doc, "profile name", name);
  profile.name = std::move(name.name);
  profile.nameLocation = name.location;
  const YAML::Node spec = doc["spec"];
  if (!spec.IsDefined() || spec.IsNull()) {
    reader.error(doc, "spec", "is required");
  } else {
    readSpec(reader, spec, switches, profile);
  }
  if (reader.errorCount() == before) out.push_back(std::move(profile));
}

}  // namespace aiadmit
