// Cluster snapshots as kubectl prints them, read into a ClusterView.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "webhook/cluster/cluster_snapshot.h"
#include "webhook/codec/json_pointer.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {

namespace {

// Whether `apiVersion` is of the group its kind's row names: a PodGroup of
// Volcano or of the coscheduling plugin is not Kubernetes' own.
bool servedFrom(ClusterKind kind, std::string_view apiVersion) {
  return splitApiVersion(apiVersion).group == resourceType(kind).group;
}

struct Reader {
  const std::string& name;
  ClusterView::Builder builder;
  std::vector<std::string> skipped;
  bool dra = false;  // an object of resource.k8s.io was read

  // False with `error` set on an object of a known kind that cannot be read.
  bool addObject(const JsonValue& object, int line, const std::string& where, std::string& error) {
    const std::string_view kindText = stringMember(&object, "kind");
    const std::string_view apiVersion = stringMember(&object, "apiVersion");
    const std::optional<ClusterKind> kind = clusterKindOf(kindText);
    if (!kind || !servedFrom(*kind, apiVersion)) {
      const std::string label = std::string(apiVersion) + " " + std::string(kindText);
      if (std::find(skipped.begin(), skipped.end(), label) == skipped.end()) {
        skipped.push_back(label);
      }
      return true;
    }
    ClusterObject record;
    std::string problem;
    if (!readClusterObject(*kind, apiVersion, object, record, &problem)) {
      if (problem.empty()) {  // an object the view does not keep
        builder.markListed(*kind);
        return true;
      }
      const std::string objectName(stringMember(member(&object, "metadata"), "name"));
      error = name + ":" + std::to_string(line) + ": " + where + std::string(kindText) +
              (objectName.empty() ? "" : " " + objectName) + ": " + problem;
      return false;
    }
    builder.markListed(*kind);
    dra = dra || splitApiVersion(apiVersion).group == "resource.k8s.io";
    builder.add(std::move(record));
    return true;
  }
};

}  // namespace

ClusterSnapshot readClusterSnapshot(std::string_view text, const std::string& name) {
  ClusterSnapshot snapshot;
  std::vector<ManifestDocument> documents;
  ManifestError parseError;
  if (!parseManifests(text, documents, parseError)) {
    snapshot.error = name + ":" + std::to_string(parseError.line) + ":" +
                     std::to_string(parseError.column) + ": " + parseError.message;
    return snapshot;
  }
  Reader reader{name, {}, {}};
  for (const ManifestDocument& document : documents) {
    const JsonValue& root = *document.json;
    if (!root.IsObject()) {
      snapshot.error = name + ":" + std::to_string(document.line) + ": not an object";
      return snapshot;
    }
    const std::string_view kind = stringMember(&root, "kind");
    const JsonValue* items = member(&root, "items");
    const bool list = kind.size() >= 4 && kind.substr(kind.size() - 4) == "List";
    if (!list) {
      if (!reader.addObject(root, document.line, "", snapshot.error)) return snapshot;
      continue;
    }
    if (!isArray(items)) {
      snapshot.error =
          name + ":" + std::to_string(document.line) + ": " + std::string(kind) + " without items";
      return snapshot;
    }
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      const std::string where = "items[" + std::to_string(i) + "] ";
      if (!(*items)[i].IsObject()) {
        snapshot.error =
            name + ":" + std::to_string(document.line) + ": " + where + "not an object";
        return snapshot;
      }
      if (!reader.addObject((*items)[i], document.line, where, snapshot.error)) return snapshot;
    }
  }
  snapshot.skippedKinds = std::move(reader.skipped);
  // kubectl cannot list the DRA kinds of a cluster that serves none, so a
  // snapshot without one DRA object is read as such a cluster, as the
  // webhook reads it: no DeviceClass backs an extended resource, which is
  // then counted from allocatable. Templates and claims stay unknown.
  if (!reader.dra) reader.builder.markListed(ClusterKind::DeviceClass);
  reader.builder.markSynced(true);
  snapshot.view = std::move(reader.builder).build();
  return snapshot;
}

ClusterSnapshot loadClusterSnapshot(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ClusterSnapshot snapshot;
    snapshot.error = path + ": cannot be read";
    return snapshot;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return readClusterSnapshot(text.str(), path);
}

}  // namespace aiadmit
