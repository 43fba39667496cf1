#include "tests/e2e/support/workloads.h"

#include <gtest/gtest.h>

namespace aiadmit::e2e {

std::vector<json> podsOf(const std::string& namespaceName, const std::string& selector) {
  std::vector<std::string> args = {"get", "pods", "-n", namespaceName};
  if (!selector.empty()) args.insert(args.end(), {"-l", selector});
  const json pods = kubectlJson(args);
  return pods.is_object() ? pods["items"].get<std::vector<json>>() : std::vector<json>();
}

bool podsBound(const std::string& namespaceName, size_t count, const std::string& selector,
               std::chrono::seconds timeout) {
  return waitUntil(
      [&] {
        const std::vector<json> pods = podsOf(namespaceName, selector);
        if (pods.size() != count) return false;
        for (const json& pod : pods) {
          if (pod["spec"].value("nodeName", "").empty()) return false;
        }
        return true;
      },
      timeout);
}

std::string controllerUser(const std::string& controller) {
  return serviceAccountUser("kube-system", controller);
}

std::string serviceAccountUser(const std::string& namespaceName, const std::string& name) {
  return "system:serviceaccount:" + namespaceName + ":" + name;
}

const std::string kJobSetUser = serviceAccountUser("jobset-system", "jobset-controller-manager");
const std::string kLwsUser = serviceAccountUser("lws-system", "lws-controller-manager");
const std::string kKubeRayUser = serviceAccountUser("default", "kuberay-operator");
const std::string kKueueUser = serviceAccountUser("kueue-system", "kueue-controller-manager");

std::vector<json> corpusObjects(const std::string& file) {
  const CommandResult read = kubectl({"create", "--dry-run=client", "-o", "json", "-f",
                                      testing::corpusDir() + "/manifests/" + file});
  EXPECT_EQ(read.exitCode, 0) << read.err;
  std::vector<json> objects = jsonObjects(read.out);
  for (json& object : objects) object["metadata"].erase("namespace");
  return objects;
}

namespace {

// The calls of aiadmit's mutating configuration the event records; each is
// checked to be `webhook`'s and to have patched nothing. Returns how many
// there were.
size_t expectAiadmitPatchedNothing(const json& event, const std::string& what,
                                   const std::string& webhook) {
  size_t calls = 0;
  if (!event.contains("annotations")) return 0;
  for (const auto& [key, value] : event["annotations"].items()) {
    if (key.rfind("mutation.webhook.admission.k8s.io/", 0) != 0) continue;
    const json call = json::parse(value.get<std::string>(), nullptr, false);
    if (!call.is_object() || call.value("configuration", "") != "mutate.aiadmit.dev") continue;
    ++calls;
    EXPECT_EQ(call.value("webhook", ""), webhook) << what;
    EXPECT_FALSE(call.value("mutated", true)) << "aiadmit patched " << what;
  }
  return calls;
}

int responseCode(const json& event) {
  return event["responseStatus"].value("code", 0);
}

// The audit events of `verb` on `resource` in the namespace by `username`. A
// create includes a server-side apply that created the object (a patch
// answered 201), as LeaderWorkerSet makes its leaders' StatefulSet.
std::vector<json> requestsBy(const std::string& resource, const std::string& namespaceName,
                             const std::string& username, const std::string& verb) {
  std::vector<json> events;
  for (json& event : auditEvents(resource, namespaceName, "", verb)) {
    if (event["user"].value("username", "") == username) events.push_back(std::move(event));
  }
  if (verb != "create") return events;
  for (json& event : auditEvents(resource, namespaceName, "", "patch")) {
    if (event["user"].value("username", "") == username && responseCode(event) == 201) {
      events.push_back(std::move(event));
    }
  }
  return events;
}

// A create by a controller reaches controlled.mutate; an update by a
// service account, reconciled.mutate.
size_t expectUnpatched(const std::string& resource, const std::string& namespaceName,
                       const std::string& username, const std::string& verb, bool mustReach) {
  const std::string webhook =
      verb == "create" ? "controlled.mutate.aiadmit.dev" : "reconciled.mutate.aiadmit.dev";
  size_t checked = 0;
  for (const json& event : requestsBy(resource, namespaceName, username, verb)) {
    const std::string what =
        verb + " of " + resource + "/" + event["objectRef"].value("name", "") + " by " + username;
    const size_t calls = expectAiadmitPatchedNothing(event, what, webhook);
    const int code = responseCode(event);
    // A webhook called before aiadmit's may refuse a create: Kueue's Pod and
    // StatefulSet webhooks answer NotFound while their cache has not yet
    // seen the new owner, and the controller tries again.
    const bool refusedBeforeAiadmit = calls == 0 && code >= 400;
    if (mustReach && !refusedBeforeAiadmit) {
      EXPECT_GT(calls, 0u) << what << ": " << event["annotations"].dump();
    }
    if (calls == 0) continue;
    // 409: the controller made again what it had made, from a cache that
    // lagged (a create), or another write came first (an update); it reads
    // again and retries, as every controller does. Not counted.
    EXPECT_TRUE(code == 200 || code == 201 || code == 409)
        << what << " answered " << code << ": " << event["responseStatus"].dump();
    if (code != 409) ++checked;
  }
  return checked;
}

}  // namespace

size_t expectUnpatchedCreates(const std::string& resource, const std::string& namespaceName,
                              const std::string& username) {
  return expectUnpatched(resource, namespaceName, username, "create", true);
}

size_t expectUnpatchedUpdates(const std::string& resource, const std::string& namespaceName,
                              const std::string& username) {
  return expectUnpatched(resource, namespaceName, username, "update", false) +
         expectUnpatched(resource, namespaceName, username, "patch", false);
}

AllowedRequests expectAllowed(const std::string& resource, const std::string& namespaceName,
                              const std::string& username, const std::vector<std::string>& verbs) {
  AllowedRequests requests;
  for (const std::string& verb : verbs) {
    for (const json& event : requestsBy(resource, namespaceName, username, verb)) {
      const int code = responseCode(event);
      // 409: the controller made again what it had made (a create from a
      // cache that lagged) or lost a race with another write (an update);
      // it reads again and retries, as every controller does. Not counted.
      EXPECT_TRUE(code == 200 || code == 201 || code == 409)
          << verb << " of " << resource << "/" << event["objectRef"].value("name", "") << " by "
          << username << " answered " << code << ": " << event["responseStatus"].dump();
      if (code == 409) continue;
      ++requests.count;
      const json annotations = event.value("annotations", json::object());
      for (const auto& [key, value] : annotations.items()) {
        if (key.rfind("mutation.webhook.admission.k8s.io/", 0) == 0 &&
            value.get<std::string>().find("\"mutate.aiadmit.dev\"") != std::string::npos) {
          ++requests.reachedAiadmit;
        }
      }
    }
  }
  return requests;
}

json stored(const std::string& resource, const std::string& namespaceName,
            const std::string& name) {
  return kubectlJson({"get", resource, name, "-n", namespaceName});
}

std::set<std::string> mutatingWebhooksCalled(const std::vector<json>& events) {
  std::set<std::string> webhooks;
  for (const json& event : events) {
    if (!event.contains("annotations")) continue;
    for (const auto& [key, value] : event["annotations"].items()) {
      if (key.rfind("mutation.webhook.admission.k8s.io/", 0) != 0 || !value.is_string()) continue;
      const json call = json::parse(value.get<std::string>(), nullptr, false);
      if (call.is_object() && call.value("configuration", "") == "mutate.aiadmit.dev") {
        webhooks.insert(call.value("webhook", ""));
      }
    }
  }
  return webhooks;
}

}  // namespace aiadmit::e2e
