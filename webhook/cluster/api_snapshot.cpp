#include "webhook/cluster/api_snapshot.h"

#include <rapidjson/document.h>

#include <algorithm>

#include "webhook/cluster/api_status.h"
#include "webhook/codec/json.h"

namespace aiadmit {

namespace {

struct Listed {
  std::string group;  // "" for the core group
  std::vector<std::string> versions;
  std::string plural;
  std::string fieldSelector;
};

const std::vector<Listed>& listedResources() {
  static const std::vector<Listed> kResources = {
      {"", {"v1"}, "pods", "status.phase!=Succeeded,status.phase!=Failed"},
      {"", {"v1"}, "nodes", ""},
      {"", {"v1"}, "events", "reason=FailedScheduling"},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "resourceslices", ""},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "resourceclaims", ""},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "deviceclasses", ""},
      {"resource.k8s.io", {"v1", "v1beta2", "v1alpha3"}, "devicetaintrules", ""},
      {"scheduling.k8s.io", {"v1"}, "priorityclasses", ""},
      {"kueue.x-k8s.io", {"v1beta2", "v1beta1"}, "localqueues", ""},
      {"kueue.x-k8s.io", {"v1beta2", "v1beta1"}, "clusterqueues", ""},
      {"kueue.x-k8s.io", {"v1beta2", "v1beta1"}, "workloads", ""},
  };
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

ListedSnapshot listResources(ApiClient& client, const std::vector<std::string>& only) {
  ListedSnapshot snapshot;
  ApiConnection connection;
  for (const Listed& resource : listedResources()) {
    if (!only.empty() && std::find(only.begin(), only.end(), resource.plural) == only.end()) {
      continue;
    }
    bool served = false;
    for (const std::string& version : resource.versions) {
      const std::string path =
          (resource.group.empty() ? "/api/" : "/apis/" + resource.group + "/") + version + "/" +
          resource.plural;
      std::string continueToken;
      do {
        std::string target = path + "?limit=500";
        if (!resource.fieldSelector.empty()) {
          target += "&fieldSelector=" + urlEncode(resource.fieldSelector);
        }
        if (!continueToken.empty()) target += "&continue=" + urlEncode(continueToken);
        const ApiResponse response = client.get(target, connection);
        if (response.status == 404 && continueToken.empty()) break;
        if (response.status != 200) {
          snapshot.error = "listing " + resource.plural + ": " + describeRefusal(response);
          return snapshot;
        }
        if (!completeItems(response.body, snapshot.text, continueToken)) {
          snapshot.error = "listing " + resource.plural + ": the answer is not a List";
          return snapshot;
        }
        served = true;
      } while (!continueToken.empty());
      if (served) break;
    }
    if (!served) {
      snapshot.absent.push_back(resource.plural +
                                (resource.group.empty() ? "" : "." + resource.group));
    }
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
