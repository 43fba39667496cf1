#include "webhook/cluster/api_snapshot.h"

#include <rapidjson/document.h>

#include <algorithm>

#include "webhook/cluster/api_status.h"
#include "webhook/cluster/cluster_kinds.h"
#include "webhook/codec/json.h"

namespace aiadmit {

namespace {

// What `explain` lists: the cluster view's kinds, and two it reads only
// from a snapshot (the scheduler's FailedScheduling Events, and Kueue's
// ClusterQueues). Events and the Kueue kinds are optional: a cluster whose
// RBAC keeps them from the reader is explained without them.
struct Listed {
  ResourceType type;
  bool needed = false;  // a refusal to list it stops the snapshot
};

const std::vector<Listed>& listedResources() {
  static const std::vector<Listed> kResources = [] {
    using enum ClusterKind;
    std::vector<Listed> listed;
    const auto kind = [&](ClusterKind kind, bool needed = false) {
      listed.push_back({resourceType(kind), needed});
    };
    kind(Pod, true);
    kind(Node, true);
    ResourceType events = resourceType(Node);
    events.plural = "events";
    events.fieldSelector = "reason=FailedScheduling";
    listed.push_back({events});
    kind(ResourceSlice);
    kind(ResourceClaim);
    kind(DeviceClass);
    kind(DeviceTaintRule);
    kind(PodGroup);
    kind(PriorityClass);
    kind(LocalQueue);
    ResourceType clusterQueues = resourceType(LocalQueue);
    clusterQueues.plural = "clusterqueues";
    listed.push_back({clusterQueues});
    kind(QueueWorkload);
    return listed;
  }();
  return kResources;
}

// The page with kind and apiVersion on every item, as kubectl prints them
// (the API leaves them off list items); false when it is no List.
bool completeItems(const std::string& body, std::string& out, std::string& continueToken) {
  JsonDocument page;
  page.Parse(body.data(), body.size());
  if (page.HasParseError() || !page.IsObject()) return false;
  const std::string listKind(stringMember(&page, "kind"));
  const std::string apiVersion(stringMember(&page, "apiVersion"));
  JsonValue* items = member(&page, "items");
  if (listKind.size() <= 4 || listKind.substr(listKind.size() - 4) != "List") return false;
  const std::string kind = listKind.substr(0, listKind.size() - 4);
  if (isArray(items)) {
    for (JsonValue& item : items->GetArray()) {
      if (!item.IsObject()) continue;
      setString(item, "kind", kind, page.GetAllocator());
      setString(item, "apiVersion", apiVersion, page.GetAllocator());
    }
  }
  continueToken = std::string(stringMember(member(&page, "metadata"), "continue"));
  out += toJson(page);
  out += "\n";
  return true;
}

// One resource's Lists, in the first of its versions the API serves, or why
// there are none (`error` says why a list was refused).
enum class Listing { Served, Absent, Forbidden, Failed };

Listing listResource(ApiClient& client, ApiConnection& connection, const ResourceType& type,
                     std::string& text, std::string& error) {
  for (const std::string& version : type.versions) {
    bool served = false;
    std::string continueToken;
    do {
      std::string target = type.path(version) + "?limit=500";
      if (!type.fieldSelector.empty()) {
        target += "&fieldSelector=" + urlEncode(type.fieldSelector);
      }
      if (!continueToken.empty()) target += "&continue=" + urlEncode(continueToken);
      const ApiResponse response = client.get(target, connection);
      if (response.status == 404 && continueToken.empty()) break;
      if (response.status == 403 && continueToken.empty()) {
        error = describeRefusal(response);
        return Listing::Forbidden;
      }
      if (response.status != 200) {
        error = describeRefusal(response);
        return Listing::Failed;
      }
      if (!completeItems(response.body, text, continueToken)) {
        error = "the answer is not a List";
        return Listing::Failed;
      }
      served = true;
    } while (!continueToken.empty());
    if (served) return Listing::Served;
  }
  return Listing::Absent;
}

ListedSnapshot listResources(ApiClient& client, const std::vector<std::string>& only) {
  ListedSnapshot snapshot;
  ApiConnection connection;
  for (const Listed& resource : listedResources()) {
    const ResourceType& type = resource.type;
    if (!only.empty() && std::find(only.begin(), only.end(), type.plural) == only.end()) {
      continue;
    }
    std::string text;
    std::string error;
    const Listing listing = listResource(client, connection, type, text, error);
    if (listing == Listing::Failed || (listing == Listing::Forbidden && resource.needed)) {
      snapshot.error = "listing " + type.plural + ": " + error;
      return snapshot;
    }
    if (listing == Listing::Absent) snapshot.absent.push_back(type.qualifiedPlural());
    if (listing == Listing::Forbidden) snapshot.forbidden.push_back(type.qualifiedPlural());
    snapshot.text += text;
  }
  return snapshot;
}

}  // namespace

ListedSnapshot listWaitingSnapshot(ApiClient& client) {
  return listResources(client, {});
}

ListedSnapshot listNodeSnapshot(ApiClient& client) {
  return listResources(client, {"nodes", "resourceslices", "deviceclasses"});
}

}  // namespace aiadmit
