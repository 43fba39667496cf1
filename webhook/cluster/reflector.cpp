#include "webhook/cluster/reflector.h"

#include <algorithm>

#include "webhook/cluster/api_status.h"
#include "webhook/codec/json.h"
#include "webhook/codec/json_parse.h"

namespace aiadmit {

namespace {

constexpr size_t kMaxDepth = 128;

}  // namespace

std::string Reflector::servedApiVersion() const {
  return type_.group.empty() ? version_ : type_.group + "/" + version_;
}

Reflector::Reflector(ApiClient& client, ResourceType type, ReflectorOptions options,
                     std::function<void()> onChange, Log log)
    : client_(client),
      type_(std::move(type)),
      options_(options),
      onChange_(std::move(onChange)),
      log_(std::move(log)),
      random_(options.seed != 0 ? options.seed : std::random_device{}()) {
  state_.kind = type_.kind;
}

bool Reflector::stopping() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stop_;
}

void Reflector::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop_ = true;
  wake_.notify_all();
}

bool Reflector::pause(std::chrono::milliseconds delay) {
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait_for(lock, delay, [&] { return stop_; });
  return !stop_;
}

std::chrono::milliseconds Reflector::nextBackoff() {
  std::lock_guard<std::mutex> lock(mutex_);
  const double max = static_cast<double>(options_.backoffMax.count());
  double delay = static_cast<double>(options_.backoffInitial.count());
  for (int i = 0; i < backoffStep_ && delay < max; ++i) delay *= 2;
  delay = std::min(delay, max);
  ++backoffStep_;
  // Half fixed, half random: many replicas that lost the API together do not
  // come back in step.
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  delay *= jitter(random_);
  // The server said when to come back (429 from API Priority and Fairness):
  // never sooner, and never later than the longest backoff.
  if (retryAfter_) {
    delay = std::min(std::max(delay, static_cast<double>(retryAfter_->count())), max);
    retryAfter_.reset();
  }
  const auto wait = std::chrono::milliseconds(static_cast<int64_t>(delay));
  lastBackoff_ = std::chrono::steady_clock::now() + wait;
  return wait;
}

void Reflector::log(std::string_view level, const std::string& message) const {
  if (log_) log_(level, std::string(kindName(type_.kind)) + ": " + message);
}

void Reflector::fail(const std::string& error) {
  const auto now = std::chrono::steady_clock::now();
  bool began;
  bool quiet;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // backoffReset without a failure since the last backoff ended: the
    // backoff, and what the log has said, start over.
    quiet = backoffStep_ == 0 || now - lastBackoff_ >= options_.backoffReset;
    if (quiet) backoffStep_ = 0;
    began = !state_.failing;
    if (began) state_.failingSince = now;
    state_.failing = true;
    state_.lastError = error;
    ++state_.failures;
  }
  // Once per distinct failure: one that comes back on every reconnect (an
  // ERROR event on each new watch) is one line, not one per retry.
  if (quiet) loggedError_.clear();
  if (error != loggedError_) {
    log("warn", error);
    loggedError_ = error;
    recoveryLogged_ = false;
  }
  // The watcher's state changed even though the cache did not: let it look.
  if (began) onChange_();
}

void Reflector::succeeded() {
  bool recovered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    recovered = state_.failing;
    state_.failing = false;
  }
  if (!recovered) return;
  if (!recoveryLogged_) log("info", "recovered");
  recoveryLogged_ = true;
  onChange_();
}

// A watch delivered an event or a bookmark, or ran until the server ended it:
// what it serves can be trusted again.
void Reflector::held() {
  if (probation_) {
    probation_ = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      state_.synced = true;
    }
    onChange_();
  }
  succeeded();
}

Reflector::Outcome Reflector::refused(const ApiResponse& response, std::string_view what) {
  if (response.status == 401) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++state_.unauthorized;
  }
  if (stopping()) return Outcome::Stopped;
  if (response.status == 429 || response.status == 503) retryAfter_ = response.retryAfter;
  std::string error = std::string(what) + ": " + describeRefusal(response);
  if (response.status == 403) error += " (does the ClusterRole grant get, list and watch?)";
  fail(error);
  return Outcome::Failed;
}

ResourceState Reflector::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ResourceState copy = state_;
  copy.objects = cache_.size();
  return copy;
}

bool Reflector::contribute(ClusterView::Builder& builder, std::chrono::steady_clock::time_point now,
                           std::chrono::milliseconds staleAfter) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!state_.synced) return false;
  if (state_.failing && now - state_.failingSince >= staleAfter) return false;
  if (state_.absent && type_.whenAbsent == ResourceType::WhenAbsent::Unknown) return false;
  builder.addAll(type_.kind, snapshot_);
  builder.markListed(type_.kind);
  return true;
}

Reflector::SharedCache Reflector::shareCache(std::map<std::string, ClusterObject> items) {
  SharedCache shared;
  auto snapshot = std::make_shared<ClusterObjects>();
  snapshot->reserve(items.size());
  for (auto& [key, object] : items) {
    auto record = std::make_shared<const ClusterObject>(std::move(object));
    snapshot->push_back(record);
    shared.objects.emplace_hint(shared.objects.end(), key, std::move(record));
  }
  shared.snapshot = std::move(snapshot);
  return shared;
}

void Reflector::snapshotCache() {
  auto snapshot = std::make_shared<ClusterObjects>();
  snapshot->reserve(cache_.size());
  for (const auto& [key, object] : cache_) snapshot->push_back(object);
  std::lock_guard<std::mutex> lock(mutex_);
  snapshot_ = std::move(snapshot);
}

Reflector::Outcome Reflector::handleEvent(std::string_view line, bool& sawEvent) {
  std::string text(line);
  JsonDocument event;
  if (!parseJsonInSitu(text.data(), text.size(), kMaxDepth, event).empty() || !event.IsObject()) {
    fail("watch: an event is not JSON");
    return Outcome::Failed;
  }
  const std::string_view type = stringMember(&event, "type");
  const JsonValue* object = member(&event, "object");
  const std::string_view resourceVersion =
      stringMember(member(object, "metadata"), "resourceVersion");
  sawEvent = true;
  if (type == "ERROR") return errorEvent(object);
  if (type == "BOOKMARK") {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!resourceVersion.empty()) state_.resourceVersion = std::string(resourceVersion);
      ++state_.bookmarks;
    }
    held();
    return Outcome::Continue;
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") {
    fail("watch: unknown event type \"" + std::string(type.substr(0, 40)) + "\"");
    return Outcome::Failed;
  }
  ClusterObject record;
  std::string error;
  const bool read = type == "DELETED" ||
                    readClusterObject(type_.kind, servedApiVersion(), *object, record, &error);
  const std::string key = type == "DELETED" ? objectKey(object) : keyOf(record);
  SharedClusterObject shared = read && type != "DELETED"
                                   ? std::make_shared<const ClusterObject>(std::move(record))
                                   : nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (type == "DELETED") {
      cache_.erase(key);
    } else if (read) {
      cache_.insert_or_assign(key, std::move(shared));
    }
    if (!resourceVersion.empty()) state_.resourceVersion = std::string(resourceVersion);
    ++state_.events;
  }
  if (read) snapshotCache();  // before onChange_: the publisher takes the new one
  held();
  if (!read && log_) {
    log_("warn",
         std::string(kindName(type_.kind)) + " " + objectKey(object) + " skipped: " + error);
  }
  onChange_();
  return Outcome::Continue;
}

Reflector::Outcome Reflector::errorEvent(const JsonValue* status) {
  ApiResponse refusal;
  const JsonValue* code = member(status, "code");
  refusal.status = code != nullptr && code->IsInt() ? code->GetInt() : 500;
  if (status != nullptr) refusal.body = toJson(*status);
  if (isExpired(refusal)) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++state_.expired;
    return Outcome::Relist;
  }
  // Any other ERROR (a watch cache ahead of an etcd restored to an earlier
  // revision, a CRD's conversion webhook failing) ends a stream that will not
  // come back from this resourceVersion, on a cache that may no longer be the
  // cluster's: the kind is unknown now, not staleAfter from now, until a new
  // list, after a backoff that keeps growing while this repeats.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    state_.synced = false;
    ++state_.errorEvents;
  }
  fail("watch ERROR event: " + describeRefusal(refusal) + "; listing again");
  probation_ = true;
  onChange_();
  return Outcome::ListAgain;
}

Reflector::Outcome Reflector::watch() {
  std::string resourceVersion;
  int timeoutSeconds;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    resourceVersion = state_.resourceVersion;
    std::uniform_real_distribution<double> spread(1.0, 2.0);
    timeoutSeconds =
        static_cast<int>(static_cast<double>(options_.watchTimeout.count()) * spread(random_));
  }
  const std::string target =
      type_.path(version_) +
      "?watch=1&allowWatchBookmarks=true&resourceVersion=" + urlEncode(resourceVersion) +
      "&timeoutSeconds=" + std::to_string(std::max(timeoutSeconds, 1)) +
      (type_.fieldSelector.empty() ? "" : "&fieldSelector=" + urlEncode(type_.fieldSelector));
  const auto started = std::chrono::steady_clock::now();
  auto lastLine = started;
  bool sawEvent = false;
  Outcome outcome = Outcome::Continue;
  const ApiResponse response = client_.stream(
      target, options_.stallTimeout,
      [&](std::string_view line) {
        lastLine = std::chrono::steady_clock::now();
        outcome = handleEvent(line, sawEvent);
        return outcome == Outcome::Continue;
      },
      [&] {
        // The server took the watch: the cache is current again, unless an
        // ERROR event put it on probation.
        if (!probation_) succeeded();
      });
  if (stopping()) return Outcome::Stopped;
  if (response.status == 410) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++state_.expired;
    return Outcome::Relist;
  }
  // Gone while watched (a CRD removed, a version no longer served): list
  // again, which looks for the versions that are served.
  if (response.status == 404) return Outcome::Absent;
  if (response.status != 200) return refused(response, "watch");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++state_.watches;
  }
  if (outcome != Outcome::Continue) return outcome;
  const auto now = std::chrono::steady_clock::now();
  if (!response.error.empty()) {
    if (now - lastLine >= options_.stallTimeout) {
      // Silence past the bookmark interval: a half-open connection or a
      // stuck proxy. Watch again from where we were.
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++state_.stalls;
      }
      log("warn", "the watch stalled; watching again");
      return Outcome::Continue;
    }
    fail("watch: the stream broke: " + response.error);
    return Outcome::Failed;
  }
  // A stream the server ends at once, with nothing in it, is not a healthy
  // watch: back off instead of spinning.
  if (!sawEvent && now - started < std::chrono::seconds(1)) {
    fail("watch: the server ended the stream at once");
    return Outcome::Failed;
  }
  held();
  return Outcome::Continue;
}

void Reflector::run() {
  bool needList = true;
  while (!stopping()) {
    if (needList) {
      const Outcome outcome = list();
      if (outcome == Outcome::Stopped) return;
      if (outcome == Outcome::Absent || outcome == Outcome::Unserved) {
        if (!pause(options_.absentRecheck)) return;
        continue;
      }
      if (outcome != Outcome::Continue) {
        if (!pause(nextBackoff())) return;
        continue;
      }
      needList = false;
    }
    switch (watch()) {
      case Outcome::Continue:
        break;
      case Outcome::Relist:
        log("info", "resourceVersion expired; listing again");
        needList = true;
        break;
      case Outcome::ListAgain:
        if (!pause(nextBackoff())) return;
        needList = true;
        break;
      case Outcome::Failed:
        if (!pause(nextBackoff())) return;
        break;
      case Outcome::Absent:
      case Outcome::Unserved:
        needList = true;
        break;
      case Outcome::Stopped:
        return;
    }
  }
}

// The list half: discovery of the served version, the pages of one list over
// one keep-alive connection, and the resourceVersion each list asks for, as
// client-go's reflector and pager choose it.

namespace {

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
