// WorkloadType documents: kinds a platform team adds to the workload-type
// table without code, written beside the profiles (apiVersion aiadmit.dev/v1)
// and read as strictly: unknown fields with "did you mean", wrong types, keys
// set twice and pointers that cannot resolve are errors with file, line,
// column and field. docs/workload-types.md describes the document.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "webhook/model/workload_type.h"
#include "webhook/policy/profile.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {

namespace yaml_fields {
class Reader;
}

// Whether a YAML document says `kind: WorkloadType`.
bool isWorkloadTypeDocument(const YAML::Node& document);

// Reads one document into `out` when it has no error; errors go to the
// reader. `file` names the document in `WorkloadType::source`.
void readWorkloadTypeDocument(yaml_fields::Reader& reader, const YAML::Node& document,
                              const std::string& file, std::vector<WorkloadTypeDocument>& out);

// Set-level checks (a group/kind or a name defined twice, a group/kind that
// is built in) and the table: built-in rows, then the documents' in file
// order. Null when an error was appended.
std::shared_ptr<const WorkloadTypeTable> buildWorkloadTypeTable(
    std::vector<WorkloadTypeDocument> documents, std::vector<ProfileError>& errors);

}  // namespace aiadmit
