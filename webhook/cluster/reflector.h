// One resource's list+watch cache, following the API's contract as
// client-go's reflector does: find the served version by discovery, list in
// pages (limit/continue) from the watch cache first (resourceVersion=0),
// watch from the list's resourceVersion with bookmarks, move the
// resourceVersion forward on every event and bookmark, list again on 410
// Gone (at watch start or as an ERROR event) and, after a backoff that grows
// across reconnects, on any other ERROR event; honour Retry-After; notice a
// stream that goes quiet.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/cluster/api_client.h"
#include "webhook/cluster/cluster_view.h"

namespace aiadmit {

struct ReflectorOptions {
  std::chrono::milliseconds backoffInitial{800};
  std::chrono::milliseconds backoffMax{30000};
  // The backoff grows across failures and reconnects, and starts again from
  // backoffInitial only once this long has passed without one: client-go's
  // backoff manager (its resetDuration), so that a watch that opens and then
  // fails (an ERROR event, each time) does not retry at the initial rate.
  std::chrono::milliseconds backoffReset{std::chrono::minutes(2)};
  // The server ends each watch after timeoutSeconds, picked between this and
  // twice this (as client-go spreads them), and the watch starts again from
  // the last resourceVersion without a list.
  std::chrono::seconds watchTimeout{300};
  // No byte (event or bookmark) for this long: the stream is stalled, drop it
  // and watch again. Bookmarks come about once a minute.
  std::chrono::milliseconds stallTimeout{std::chrono::seconds(150)};
  // How often a resource found absent (404) is looked for again.
  std::chrono::milliseconds absentRecheck{std::chrono::minutes(5)};
  int pageSize = 500;
  uint32_t seed = 0;  // 0: random jitter
};

// What /metrics and the log say about one resource.
struct ResourceState {
  ClusterKind kind = ClusterKind::Node;
  std::string apiVersion;  // the version being watched ("" until served)
  // The cache holds a list the watch keeps current: listed, and no ERROR
  // event since (an ERROR event makes the kind unknown until it is listed
  // again).
  bool synced = false;
  bool absent = false;         // not served (a CRD that is not installed)
  bool unserved = false;       // served only in versions aiadmit does not read: unknown
  std::string servedVersions;  // what discovery listed, when unserved ("v1alpha3")
  bool failing = false;        // the last list or watch attempt failed
  std::string lastError;       // no object contents
  std::string resourceVersion;
  size_t objects = 0;
  uint64_t lists = 0;    // completed lists
  uint64_t relists = 0;  // lists after the first (410 Gone, 404, restarts)
  uint64_t watches = 0;  // watch streams opened
  uint64_t events = 0;   // ADDED, MODIFIED and DELETED applied
  uint64_t bookmarks = 0;
  uint64_t expired = 0;       // 410 Gone seen, at watch start or as an ERROR event
  uint64_t stalls = 0;        // streams dropped for silence
  uint64_t unauthorized = 0;  // 401 answers
  uint64_t errorEvents = 0;   // ERROR events other than 410 Gone: listed again after a backoff
  uint64_t throttled = 0;     // 429, or 503 with Retry-After: waited as told
  // Lists from etcd (resourceVersion="") after the watch cache could not serve one.
  uint64_t consistentLists = 0;
  uint64_t failures = 0;
  std::chrono::steady_clock::time_point failingSince{};
};

class Reflector {
 public:
  using Log = std::function<void(std::string_view level, const std::string& message)>;

  Reflector(ApiClient& client, ResourceType type, ReflectorOptions options,
            std::function<void()> onChange, Log log);
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Lists and watches until stop().
  void run();
  void stop();

  ResourceState state() const;
  // Adds the cached objects to `builder` and marks the kind listed, when the
  // cache is synced and has not been failing for `staleAfter` or longer.
  // Returns whether it did.
  bool contribute(ClusterView::Builder& builder, std::chrono::steady_clock::time_point now,
                  std::chrono::milliseconds staleAfter) const;

 private:
  // Relist: at once (410 Gone). ListAgain: after a backoff (an ERROR event).
  enum class Outcome { Continue, Relist, ListAgain, Failed, Absent, Unserved, Stopped };
  struct ListRequest {
    std::string resourceVersion;  // "" (etcd), "0" (any: the watch cache) or the last seen
    bool paged = true;            // with limit
  };
  struct Listed {
    std::map<std::string, ClusterObject> items;
    std::string resourceVersion;
    bool paged = false;  // the server answered with a continue token
  };

  Outcome list();
  // Run thread only: snapshot_ made again from cache_ after a change, built
  // without the lock and swapped in under it.
  void snapshotCache();
  // The objects of a list, shared, with their snapshot.
  struct SharedCache {
    std::map<std::string, SharedClusterObject> objects;
    ClusterObjectsPtr snapshot;
  };
  static SharedCache shareCache(std::map<std::string, ClusterObject> items);
  Outcome discover(ApiConnection& connection, std::string& version);
  Outcome unserved(const std::vector<std::string>& served);
  Outcome absent();
  // Drops the objects and the version they were read at, when the resource
  // is not there to be read; mutex_ held.
  void forgetObjectsLocked();
  Outcome listVersion(ApiConnection& connection, const std::string& version, Listed& listed);
  Outcome listPages(ApiConnection& connection, const std::string& version,
                    const ListRequest& request, Listed& listed, ApiResponse& refusal);
  ApiResponse getPage(ApiConnection& connection, const std::string& target);
  ListRequest relistRequest() const;
  Outcome watch();
  Outcome handleEvent(std::string_view line, bool& sawEvent);
  Outcome errorEvent(const JsonValue* status);
  Outcome refused(const ApiResponse& response, std::string_view what);
  void fail(const std::string& error);
  void succeeded();
  void held();
  bool pause(std::chrono::milliseconds delay);
  std::chrono::milliseconds nextBackoff();
  void log(std::string_view level, const std::string& message) const;
  bool stopping() const;
  std::string servedApiVersion() const;  // run thread only

  ApiClient& client_;
  const ResourceType type_;
  const ReflectorOptions options_;
  const std::function<void()> onChange_;
  const Log log_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  // By keyOf(). Written by the run thread only (under the lock, for
  // state()), which may therefore read it without the lock.
  std::map<std::string, SharedClusterObject> cache_;
  // cache_ as of its last change, immutable: contribute() hands it to the
  // view being built, which shares it instead of copying the objects.
  ClusterObjectsPtr snapshot_ = std::make_shared<const ClusterObjects>();
  ResourceState state_;
  std::string version_;  // served version in use
  int backoffStep_ = 0;
  std::chrono::steady_clock::time_point lastBackoff_{};  // when the last backoff ended
  std::mt19937 random_;
  // Run thread only.
  bool lastSyncUnavailable_ = false;  // the last resourceVersion cannot be listed: use etcd
  bool pagedByServer_ = false;        // the last list came in pages: keep asking for them
  // Since an ERROR event, until a watch holds (an event, a bookmark, or a
  // stream the server ended): lists do not make the kind known again.
  bool probation_ = false;
  std::optional<std::chrono::milliseconds> retryAfter_;  // the server's, for the next wait
  std::string loggedError_;  // the failure last logged, until backoffReset passes without one
  bool recoveryLogged_ = true;
  std::string loggedServed_;  // the unserved versions last logged
};

}  // namespace aiadmit
