#include "webhook/cluster/reflector.h"

#include <algorithm>

#include "webhook/cluster/api_status.h"
#include "webhook/kube/json.h"

namespace aiadmit {

namespace {

constexpr size_t kMaxDepth = 128;

}  // namespace

std::string Reflector::servedApiVersion() const {
  return type_.group.empty() ? version_ : type_.group + "/" + version_;
}

std::string ResourceType::path(std::string_view version) const {
  if (group.empty()) return "/api/" + std::string(version) + "/" + plural;
  return "/apis/" + group + "/" + std::string(version) + "/" + plural;
}

std::string ResourceType::discoveryPath() const {
  return group.empty() ? "" : "/apis/" + group;
}

const std::vector<ResourceType>& clusterResourceTypes() {
  using Absent = ResourceType::WhenAbsent;
  const std::vector<std::string> dra = {"v1", "v1beta2", "v1beta1"};
  static const std::vector<ResourceType> types = {
      {ClusterKind::Node, "", {"v1"}, "nodes", Absent::Error},
      {ClusterKind::ResourceSlice, "resource.k8s.io", dra, "resourceslices", Absent::Empty},
      {ClusterKind::DeviceClass, "resource.k8s.io", dra, "deviceclasses", Absent::Empty},
      {ClusterKind::ResourceClaimTemplate, "resource.k8s.io", dra, "resourceclaimtemplates",
       Absent::Empty, true},
      {ClusterKind::ResourceClaim, "resource.k8s.io", dra, "resourceclaims", Absent::Empty, true},
      {ClusterKind::PriorityClass, "scheduling.k8s.io", {"v1"}, "priorityclasses", Absent::Error},
      {ClusterKind::Namespace, "", {"v1"}, "namespaces", Absent::Error},
      {ClusterKind::LocalQueue,
       "kueue.x-k8s.io",
       {"v1beta2", "v1beta1"},
       "localqueues",
       Absent::Unknown,
       true},
      {ClusterKind::RuntimeClass, "node.k8s.io", {"v1"}, "runtimeclasses", Absent::Error},
      // Only with --waiting-metrics. The field selector leaves out the Pods
      // that hold nothing any more; the view keeps the GPU Pods of the rest.
      {ClusterKind::Pod,
       "",
       {"v1"},
       "pods",
       Absent::Error,
       true,
       "status.phase!=Succeeded,status.phase!=Failed"},
      {ClusterKind::QueueWorkload,
       "kueue.x-k8s.io",
       {"v1beta2", "v1beta1"},
       "workloads",
       Absent::Unknown,
       true},
  };
  return types;
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

}  // namespace aiadmit
