#include "webhook/cli/workload_types.h"

#include <fstream>
#include <iostream>

#include "webhook/codec/yaml_json.h"
#include "webhook/model/crd_defaults.h"
#include "webhook/model/crd_templates.h"

namespace aiadmit {

namespace {

constexpr const char* kHelp =
    R"(Usage: aiadmit workload-types suggest [--webhook-patch FILE] CRD_FILE...

Reads the CustomResourceDefinitions in each file (YAML or JSON, several
documents or a List) and writes to stdout, for each one whose schema has
fields shaped like a pod template (a PodTemplateSpec, or a PodSpec: an
object whose containers have a name and an image), a WorkloadType document
for the profiles directory (docs/workload-types.md, "Adding a kind"). Its
class cannot be read from a schema: it is written as batch, to be set by
hand. The kustomize patch that adds the kind to the webhooks' rules
(docs/install.md, "Adding a kind of your own") follows as a comment, or goes
to FILE with --webhook-patch.

`aiadmit profiles lint` loads what it writes. Exit status: 0 when every CRD
gave a document, 1 when one shows no pod template (the fields whose schema
keeps whatever they hold are named: a template there is not in the schema),
2 when a file cannot be read.
)";

std::string quoted(std::string_view text) {
  std::string out;
  appendJsonString(out, text);
  return out;
}

std::string flowList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

void writeTemplate(std::ostream& out, const FoundTemplate& found) {
  out << "  - role: " << quoted(found.role) << "\n    podSpec: " << quoted(found.spec) << "\n";
  if (!found.metadata.empty()) out << "    metadata: " << quoted(found.metadata) << "\n";
  if (found.replicas.empty()) return;
  out << "    replicas:\n    - path: " << quoted(found.replicas) << "\n";
  if (found.replicasDefault) out << "      default: " << *found.replicasDefault << "\n";
}

void writeWorkloadType(std::ostream& out, const FoundKind& kind) {
  out << "---\n# From the CustomResourceDefinition " << kind.plural << "." << kind.group
      << " (schema of " << kind.schemaVersion << "). Check each template, and set the class.\n"
      << "apiVersion: aiadmit.dev/v1\nkind: WorkloadType\nmetadata:\n  name: " << kind.plural
      << "\nspec:\n  group: " << quoted(kind.group) << "\n  kind: " << quoted(kind.kind)
      << "\n  versions: " << flowList(kind.versions) << "\n  resource: " << quoted(kind.plural)
      << "\n  class: batch   # cannot be read from a schema: training | batch | realtime\n"
      << "  classReason: " << quoted("a " + kind.kind + " is batch work (set by hand)")
      << "\n  templates:\n";
  for (const FoundTemplate& found : kind.templates) writeTemplate(out, found);
}

// The patch of docs/install.md: the kind in the rules of the applied and
// reconciled webhooks of both configurations.
std::string webhookPatch(const std::vector<FoundKind>& kinds) {
  std::string patch = "patches:\n";
  for (const FoundKind& kind : kinds) {
    const std::string anchor = kind.plural + "-" + std::to_string(&kind - kinds.data());
    patch += "  - target: {kind: MutatingWebhookConfiguration, name: mutate.aiadmit.dev}\n";
    patch += "    patch: &" + anchor + " |\n";
    patch += "      - op: add\n        path: /webhooks/0/rules/-\n        value: &rule-" + anchor +
             "\n          apiGroups: [" + quoted(kind.group) +
             "]\n          apiVersions: " + flowList(kind.versions) + "\n          resources: [" +
             quoted(kind.plural) +
             "]\n          operations: [\"CREATE\", \"UPDATE\"]\n          scope: " +
             (kind.namespaced ? "Namespaced" : "Cluster") + "\n";
    patch +=
        "      - op: add\n        path: /webhooks/1/rules/-\n        value: *rule-" + anchor + "\n";
    patch += "  - target: {kind: ValidatingWebhookConfiguration, name: validate.aiadmit.dev}\n";
    patch += "    patch: *" + anchor + "\n";
  }
  return patch;
}

std::string commented(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out += "# " + text.substr(start, end - start) + "\n";
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

// The kinds of one file; false when it cannot be read.
bool readFile(const std::string& file, std::vector<FoundKind>& kinds, int& status) {
  std::string text;
  std::vector<ManifestDocument> documents;
  std::string error;
  if (!readAll(file, text) || !parseManifests(text, documents, &error)) {
    std::cerr << "aiadmit: " << file << ": " << (error.empty() ? "cannot be read" : error) << "\n";
    return false;
  }
  for (const ManifestDocument& document : documents) {
    for (const JsonValue* crd : CrdDefaults::definitionsIn(*document.json)) {
      FoundKind kind;
      std::string why;
      if (!findTemplates(*crd, kind, why)) {
        std::cerr << file << ":" << document.line << ": " << why << "\n";
        status = 1;
      } else if (kind.templates.empty()) {
        std::cerr << file << ":" << document.line << ": " << kind.kind << "." << kind.group
                  << ": no field of its schema is shaped like a pod template"
                  << (kind.opaque.empty() ? "" : "; these keep whatever they hold: ");
        for (size_t i = 0; i < kind.opaque.size(); ++i) {
          std::cerr << (i ? ", " : "") << kind.opaque[i];
        }
        std::cerr << "\n";
        status = 1;
      } else {
        kinds.push_back(std::move(kind));
      }
    }
  }
  return true;
}

int suggest(const Arguments& args) {
  std::string patchFile;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    if (takeValue(args, i, "--webhook-patch", patchFile)) continue;
    files.push_back(args[i]);
  }
  if (files.empty()) {
    std::cerr << "aiadmit: no CRD file given\n\n" << kHelp;
    return 2;
  }
  std::vector<FoundKind> kinds;
  int status = 0;
  for (const std::string& file : files) {
    if (!readFile(file, kinds, status)) return 2;
  }
  for (const FoundKind& kind : kinds) writeWorkloadType(std::cout, kind);
  if (kinds.empty()) return status == 0 ? 1 : status;
  const std::string patch = webhookPatch(kinds);
  if (patchFile.empty()) {
    std::cout << "---\n# The kinds in the webhooks' rules: add to your overlay's "
                 "kustomization.yaml\n# (docs/install.md, \"Adding a kind of your own\").\n"
              << commented(patch);
  } else if (!(std::ofstream(patchFile) << patch)) {
    std::cerr << "aiadmit: " << patchFile << ": cannot be written\n";
    return 2;
  }
  return status;
}

}  // namespace

int workloadTypesCommand(const Arguments& args) {
  if (printHelp(args, kHelp)) return 0;
  if (args.empty() || args[0] != "suggest") {
    std::cerr << "aiadmit: workload-types: suggest is its one command\n\n" << kHelp;
    return 2;
  }
  return suggest(Arguments(args.begin() + 1, args.end()));
}

}  // namespace aiadmit
