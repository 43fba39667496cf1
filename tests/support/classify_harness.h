// Classifies a workload written as YAML as the engine does: every template
// its row finds, one pod reader each, then classifyWorkload.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "webhook/codec/yaml_json.h"
#include "webhook/policy/classify.h"

namespace aiadmit::testing {

struct Classified {
  std::shared_ptr<JsonDocument> object;
  Resolution resolution;
  WorkloadClassification workload;
  const Classification& classification() const { return workload.classification; }
};

// `yaml` classified as the engine does, template by template.
// `types` is the table that finds its row (the built-in one by default).
inline Classified classifyYaml(const std::string& yaml, bool madeByController = false,
                               const WorkloadTypeTable& types = *WorkloadTypeTable::builtIn()) {
  std::vector<ManifestDocument> documents;
  std::string error;
  EXPECT_TRUE(parseManifests(yaml, documents, &error)) << error;
  Classified out;
  if (documents.empty()) return out;
  out.object = documents[0].json;
  const WorkloadType* type = types.findForObject(*out.object);
  EXPECT_NE(type, nullptr);
  if (type == nullptr) return out;
  out.resolution = resolveTemplates(*type, *out.object);
  std::vector<PodTemplateView> views;
  for (const ResolvedTemplate& place : out.resolution.templates) {
    views.push_back(PodTemplateView::at(*out.object, *type, place));
  }
  if (views.empty() && !type->customResource) {
    views.push_back(PodTemplateView::ofFirstSlot(*out.object, *type));
  }
  std::vector<PodReader> pods;
  for (const PodTemplateView& view : views) pods.push_back(PodReader::of(view));
  out.workload = classifyWorkload(views, pods, madeByController);
  return out;
}

}  // namespace aiadmit::testing
