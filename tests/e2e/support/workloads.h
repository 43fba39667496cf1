// What the end-to-end tests ask of the Pods and children that controllers
// and operators make: the Pods of a namespace, a wait until the scheduler
// has bound them, and the audit log's account of each create (aiadmit was
// called, patched nothing, and the API server allowed it).
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/support/e2e_cluster.h"

namespace aiadmit::e2e {

// The Pods of the namespace, those matching the label selector when one is
// given (kubectl's -l syntax).
std::vector<json> podsOf(const std::string& namespaceName, const std::string& selector = "");

// Waits until exactly `count` Pods match and the scheduler has bound each;
// false after `timeout`.
bool podsBound(const std::string& namespaceName, size_t count, const std::string& selector = "",
               std::chrono::seconds timeout = std::chrono::seconds(90));

// The ServiceAccount user a controller of the controller manager acts as.
std::string controllerUser(const std::string& controller);
// The ServiceAccount user of an operator's manager.
std::string serviceAccountUser(const std::string& namespaceName, const std::string& name);
// The users the operators of `up --operators` act as, as their installs
// name their ServiceAccounts.
extern const std::string kJobSetUser;
extern const std::string kLwsUser;
extern const std::string kKubeRayUser;
extern const std::string kKueueUser;

// A corpus manifest's objects as kubectl reads them, without the namespace
// the file names, so that they land in the test's.
std::vector<json> corpusObjects(const std::string& file);

// Every create of `resource` in the namespace made by `username` went
// through aiadmit's controlled.mutate webhook, which changed nothing, and
// was allowed; returns how many there were.
size_t expectUnpatchedCreates(const std::string& resource, const std::string& namespaceName,
                              const std::string& username);

// Every update or patch of `resource` in the namespace made by `username`
// that reached aiadmit was allowed and left unpatched by it; returns how many
// reached it.
size_t expectUnpatchedUpdates(const std::string& resource, const std::string& namespaceName,
                              const std::string& username);

// Every request with one of `verbs` on `resource` in the namespace by
// `username` was allowed, or lost a race the controller retries (409): how
// many were allowed, and how many of those reached aiadmit's mutating
// webhooks.
struct AllowedRequests {
  size_t count = 0;
  size_t reachedAiadmit = 0;
};
AllowedRequests expectAllowed(const std::string& resource, const std::string& namespaceName,
                              const std::string& username, const std::vector<std::string>& verbs);

// The mutating webhooks of aiadmit's configuration that answered the
// requests of `events` (the API server's mutation.webhook.admission.k8s.io
// audit annotations).
std::set<std::string> mutatingWebhooksCalled(const std::vector<json>& events);

// The object as the API server stores it, null (with the failure recorded)
// when it is not there.
json stored(const std::string& resource, const std::string& namespaceName, const std::string& name);

}  // namespace aiadmit::e2e
