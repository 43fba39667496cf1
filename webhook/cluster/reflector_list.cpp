// The list half of a reflector: discovery of the served version, the pages of
// one list over one keep-alive connection, and the resourceVersion each list
// asks for, as client-go's reflector and pager choose it.
#include <algorithm>

#include "webhook/cluster/api_status.h"
#include "webhook/cluster/reflector.h"
#include "webhook/kube/json.h"

namespace aiadmit {

namespace {

constexpr size_t kMaxDepth = 128;
// Pages answered "come back later" (Retry-After) that are asked for again
// before the list counts as failed.
constexpr int kThrottledRetries = 3;

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : ", ") + word;
  return out.empty() ? "no version" : out;
}

}  // namespace

Reflector::Outcome Reflector::list() {
  // Discovery and every page over one connection: one TLS handshake.
  ApiConnection connection;
  std::string version;
  const Outcome found = discover(connection, version);
  if (found != Outcome::Continue) return found;
  Listed listed;
  const Outcome outcome = listVersion(connection, version, listed);
  // Gone between discovery and the list: a CRD removed a moment ago.
  if (outcome == Outcome::Absent) return absent();
  if (outcome != Outcome::Continue) return outcome;
  // Shared before the lock is taken; the new cache and its snapshot go in together.
  SharedCache shared = shareCache(std::move(listed.items));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    version_ = version;
    cache_ = std::move(shared.objects);
    snapshot_ = std::move(shared.snapshot);
    state_.apiVersion = type_.group.empty() ? version : type_.group + "/" + version;
    state_.resourceVersion = listed.resourceVersion;
    // After an ERROR event the list alone is not enough: the watch from it
    // failed the same way each time so far. Known again once one holds.
    state_.synced = !probation_;
    state_.absent = false;
    state_.unserved = false;
    state_.servedVersions.clear();
    if (state_.lists++ > 0) ++state_.relists;
  }
  pagedByServer_ = listed.paged;
  lastSyncUnavailable_ = false;
  loggedServed_.clear();
  if (!probation_) succeeded();
  onChange_();
  return Outcome::Continue;
}

Reflector::Outcome Reflector::discover(ApiConnection& connection, std::string& version) {
  // Every cluster serves the core group's v1, and it has no APIGroup document.
  if (type_.group.empty()) {
    version = type_.versions.front();
    return Outcome::Continue;
  }
  ApiResponse response = client_.get(type_.discoveryPath(), connection);
  if (stopping()) return Outcome::Stopped;
  if (response.status == 404) return absent();
  if (response.status != 200) return refused(response, "discovery");
  std::vector<std::string> served;
  std::string error;
  if (!servedVersions(response.body, served, &error)) {
    fail("discovery: " + error);
    return Outcome::Failed;
  }
  for (const std::string& wanted : type_.versions) {
    if (std::find(served.begin(), served.end(), wanted) != served.end()) {
      version = wanted;
      return Outcome::Continue;
    }
  }
  return unserved(served);
}

void Reflector::forgetObjectsLocked() {
  version_.clear();
  cache_.clear();
  snapshot_ = std::make_shared<const ClusterObjects>();
  state_.apiVersion.clear();
}

// The group is there, in versions whose shape aiadmit does not read (a 1.31
// cluster serves resource.k8s.io/v1alpha3 alone): nothing can be said of its
// objects, and "listed, none" would make every claim template look missing.
Reflector::Outcome Reflector::unserved(const std::vector<std::string>& served) {
  const std::string listed = joined(served);
  bool changed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    changed = !state_.unserved || state_.servedVersions != listed || state_.synced;
    forgetObjectsLocked();
    state_.synced = false;
    state_.absent = false;
    state_.unserved = true;
    state_.servedVersions = listed;
  }
  probation_ = false;
  succeeded();  // the API answers; what it serves is not an error to retry
  if (listed != loggedServed_) {
    log("warn", type_.group + " is served in " + listed + " only; aiadmit reads " +
                    joined(type_.versions) + ", so " + type_.plural +
                    " are unknown and rules fall back to the profiles for them");
    loggedServed_ = listed;
  }
  if (changed) onChange_();
  return Outcome::Unserved;
}

// Not served at all: a CRD that is not installed, or a cluster without DRA.
Reflector::Outcome Reflector::absent() {
  if (type_.whenAbsent == ResourceType::WhenAbsent::Error) {
    fail("list: the API does not serve " +
         (type_.group.empty() ? type_.plural : type_.group + " " + type_.plural));
    return Outcome::Failed;
  }
  bool changed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    changed = !state_.absent || !state_.synced;
    forgetObjectsLocked();
    state_.absent = true;
    state_.unserved = false;
    state_.servedVersions.clear();
    state_.synced = true;
    if (state_.lists++ > 0) ++state_.relists;
  }
  probation_ = false;
  loggedServed_.clear();
  succeeded();
  if (changed) {
    log("info", "not served by this cluster");
    onChange_();
  }
  return Outcome::Absent;
}

// client-go's relistResourceVersion: the first list from the watch cache
// ("0": any version, no read from etcd); later ones at the last version seen,
// which the watch cache serves "not older than", so that a relist never goes
// back in time; and from etcd ("") once that version could not be served.
// A list at a given version with `limit` is one etcd serves at exactly that
// version (which compaction may have removed), so such a list asks for pages
// only when the server paged the last one (its watch cache is off).
Reflector::ListRequest Reflector::relistRequest() const {
  if (lastSyncUnavailable_) return {"", true};
  std::string last;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last = state_.resourceVersion;
  }
  if (last.empty() || last == "0") return {"0", true};
  return {last, pagedByServer_};
}

Reflector::Outcome Reflector::listVersion(ApiConnection& connection, const std::string& version,
                                          Listed& listed) {
  const ListRequest request = relistRequest();
  ApiResponse refusal;
  Outcome outcome = listPages(connection, version, request, listed, refusal);
  if (outcome == Outcome::Relist && !request.resourceVersion.empty()) {
    // The cache cannot serve that version (compacted away, or ahead of an
    // etcd restored to an earlier revision): list from etcd, as client-go
    // does after "too old resource version".
    lastSyncUnavailable_ = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++state_.consistentLists;
    }
    listed = Listed{};
    outcome = listPages(connection, version, ListRequest{"", true}, listed, refusal);
  }
  if (outcome == Outcome::Relist) return refused(refusal, "list");
  return outcome;
}

// One list, page by page. Relist (with the answer in `refusal`) when the
// version asked for cannot be served.
Reflector::Outcome Reflector::listPages(ApiConnection& connection, const std::string& version,
                                        const ListRequest& request, Listed& listed,
                                        ApiResponse& refusal) {
  const std::string apiVersion = type_.group.empty() ? version : type_.group + "/" + version;
  std::string continueToken;
  bool whole = !request.paged;
  while (true) {
    std::string target = type_.path(version);
    char separator = '?';
    const auto add = [&](const std::string& parameter) {
      target += separator + parameter;
      separator = '&';
    };
    // A continue token carries the list's version; the API refuses both.
    if (!continueToken.empty()) {
      add("continue=" + urlEncode(continueToken));
    } else if (!request.resourceVersion.empty()) {
      add("resourceVersion=" + urlEncode(request.resourceVersion));
    }
    if (!whole) add("limit=" + std::to_string(options_.pageSize));
    if (!type_.fieldSelector.empty()) add("fieldSelector=" + urlEncode(type_.fieldSelector));
    ApiResponse response = getPage(connection, target);
    if (stopping()) return Outcome::Stopped;
    if (response.status == 404) return Outcome::Absent;
    if (response.status != 200) {
      const bool expired = isExpired(response);
      if (expired) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++state_.expired;
      }
      if (expired && !continueToken.empty() && !whole) {
        // The continue token outlived etcd's compaction: client-go's pager
        // then lists everything at once at the version first asked for.
        continueToken.clear();
        listed.items.clear();
        whole = true;
        continue;
      }
      if (expired || isTooLargeResourceVersion(response)) {
        refusal = std::move(response);
        return Outcome::Relist;
      }
      return refused(response, "list");
    }

    JsonDocument page;
    const std::string parseError =
        parseJsonInSitu(response.body.data(), response.body.size(), kMaxDepth, page);
    const JsonValue* items = member(&page, "items");
    if (!parseError.empty() || !isArray(items)) {
      fail("list: the answer is not a list" + (parseError.empty() ? "" : ": " + parseError));
      return Outcome::Failed;
    }
    for (const JsonValue& item : items->GetArray()) {
      ClusterObject record;
      std::string error;
      if (readClusterObject(type_.kind, apiVersion, item, record, &error)) {
        listed.items.insert_or_assign(keyOf(record), std::move(record));
      } else if (!error.empty()) {
        log("warn", objectKey(&item) + " skipped: " + error);
      }
    }
    const JsonValue* metadata = member(&page, "metadata");
    continueToken = std::string(stringMember(metadata, "continue"));
    if (continueToken.empty()) {
      listed.resourceVersion = std::string(stringMember(metadata, "resourceVersion"));
      return Outcome::Continue;
    }
    // Some API servers ignore `limit` for lists from the watch cache and
    // answer in one page; this one pages.
    listed.paged = true;
  }
}

// A page answered 429 (API Priority and Fairness) or 503 with Retry-After is
// asked for again once the server said to, bounded by backoffMax: its
// continue token is still good, so the pages before it are kept.
ApiResponse Reflector::getPage(ApiConnection& connection, const std::string& target) {
  for (int attempt = 0;; ++attempt) {
    ApiResponse response = client_.get(target, connection);
    const bool throttled =
        (response.status == 429 || response.status == 503) && response.retryAfter.has_value();
    if (!throttled || attempt == kThrottledRetries || stopping()) return response;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++state_.throttled;
    }
    const auto told = std::chrono::duration_cast<std::chrono::milliseconds>(*response.retryAfter);
    if (!pause(std::min(std::max(told, options_.backoffInitial), options_.backoffMax))) {
      return response;
    }
  }
}

}  // namespace aiadmit
