#include "webhook/cluster/reflector.h"

#include <algorithm>
#include <cctype>

#include "webhook/kube/json.h"

namespace aiadmit {

namespace {

constexpr size_t kMaxDepth = 128;

std::string urlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

// "CODE REASON: MESSAGE" of a metav1.Status body, or the status alone.
std::string describeRefusal(const ApiResponse& response) {
  if (response.status == 0) return response.error;
  std::string text = response.body;
  JsonDocument status;
  std::string described = "HTTP " + std::to_string(response.status);
  if (parseJsonInSitu(text.data(), text.size(), kMaxDepth, status).empty()) {
    const std::string_view reason = stringMember(&status, "reason");
    const std::string_view message = stringMember(&status, "message");
    if (!reason.empty()) described += " " + std::string(reason);
    if (!message.empty()) described += ": " + std::string(message.substr(0, 300));
  }
  return described;
}

std::string keyOfMetadata(const JsonValue* object) {
  const JsonValue* metadata = member(object, "metadata");
  const std::string_view ns = stringMember(metadata, "namespace");
  const std::string_view name = stringMember(metadata, "name");
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

}  // namespace

std::string Reflector::servedApiVersion() const {
  return type_.group.empty() ? version_ : type_.group + "/" + version_;
}

std::string ResourceType::path(std::string_view version) const {
  if (group.empty()) return "/api/" + std::string(version) + "/" + plural;
  return "/apis/" + group + "/" + std::string(version) + "/" + plural;
}

const std::vector<ResourceType>& clusterResourceTypes() {
  using Absent = ResourceType::WhenAbsent;
  const std::vector<std::string> dra = {"v1", "v1beta2", "v1beta1"};
  static const std::vector<ResourceType> types = {
      {ClusterKind::Node, "", {"v1"}, "nodes", Absent::Error},
      {ClusterKind::ResourceSlice, "resource.k8s.io", dra, "resourceslices", Absent::Empty},
      {ClusterKind::DeviceClass, "resource.k8s.io", dra, "deviceclasses", Absent::Empty},
      {ClusterKind::ResourceClaimTemplate, "resource.k8s.io", dra, "resourceclaimtemplates",
       Absent::Empty},
      {ClusterKind::ResourceClaim, "resource.k8s.io", dra, "resourceclaims", Absent::Empty},
      {ClusterKind::PriorityClass, "scheduling.k8s.io", {"v1"}, "priorityclasses", Absent::Error},
      {ClusterKind::Namespace, "", {"v1"}, "namespaces", Absent::Error},
      {ClusterKind::LocalQueue,
       "kueue.x-k8s.io",
       {"v1beta2", "v1beta1"},
       "localqueues",
       Absent::Unknown},
      {ClusterKind::RuntimeClass, "node.k8s.io", {"v1"}, "runtimeclasses", Absent::Error},
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
  double delay = static_cast<double>(options_.backoffInitial.count());
  for (int i = 0; i < backoffStep_ && delay < static_cast<double>(options_.backoffMax.count());
       ++i) {
    delay *= 2;
  }
  delay = std::min(delay, static_cast<double>(options_.backoffMax.count()));
  ++backoffStep_;
  // Half fixed, half random: many replicas that lost the API together do not
  // come back in step.
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(delay * jitter(random_)));
}

void Reflector::fail(const std::string& error) {
  bool changed;
  bool began;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    began = !state_.failing;
    if (began) state_.failingSince = std::chrono::steady_clock::now();
    changed = began || state_.lastError != error;
    state_.failing = true;
    state_.lastError = error;
    ++state_.failures;
  }
  if (changed && log_) log_("warn", std::string(kindName(type_.kind)) + ": " + error);
  // The watcher's state changed even though the cache did not: let it look.
  if (began) onChange_();
}

void Reflector::succeeded() {
  bool recovered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    recovered = state_.failing;
    state_.failing = false;
    backoffStep_ = 0;
  }
  if (recovered && log_) log_("info", std::string(kindName(type_.kind)) + ": recovered");
  if (recovered) onChange_();
}

Reflector::Outcome Reflector::refused(const ApiResponse& response, std::string_view what) {
  if (response.status == 401) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++state_.unauthorized;
  }
  if (stopping()) return Outcome::Stopped;
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

Reflector::Outcome Reflector::listVersion(const std::string& version,
                                          std::map<std::string, ClusterObject>& items,
                                          std::string& resourceVersion) {
  const std::string apiVersion = type_.group.empty() ? version : type_.group + "/" + version;
  std::string continueToken;
  int restarts = 0;
  while (true) {
    std::string target = type_.path(version) + "?limit=" + std::to_string(options_.pageSize);
    if (!continueToken.empty()) target += "&continue=" + urlEncode(continueToken);
    ApiResponse response = client_.get(target);
    if (stopping()) return Outcome::Stopped;
    if (response.status == 404) return Outcome::Absent;
    if (response.status == 410 && !continueToken.empty() && restarts < 3) {
      // The continue token outlived etcd's compaction: the list must start over.
      ++restarts;
      continueToken.clear();
      items.clear();
      std::lock_guard<std::mutex> lock(mutex_);
      ++state_.expired;
      continue;
    }
    if (response.status != 200) return refused(response, "list");

    JsonDocument page;
    const std::string parseError =
        parseJsonInSitu(response.body.data(), response.body.size(), kMaxDepth, page);
    const JsonValue* list = member(&page, "items");
    if (!parseError.empty() || !isArray(list)) {
      fail("list: the answer is not a list" + (parseError.empty() ? "" : ": " + parseError));
      return Outcome::Failed;
    }
    for (const JsonValue& item : list->GetArray()) {
      ClusterObject record;
      std::string error;
      if (readClusterObject(type_.kind, apiVersion, item, record, &error)) {
        items.insert_or_assign(keyOf(record), std::move(record));
      } else if (log_) {
        log_("warn",
             std::string(kindName(type_.kind)) + " " + keyOfMetadata(&item) + " skipped: " + error);
      }
    }
    const JsonValue* metadata = member(&page, "metadata");
    continueToken = std::string(stringMember(metadata, "continue"));
    if (continueToken.empty()) {
      resourceVersion = std::string(stringMember(metadata, "resourceVersion"));
      return Outcome::Continue;
    }
  }
}

Reflector::Outcome Reflector::list() {
  std::vector<std::string> versions = type_.versions;
  if (!version_.empty()) {
    // The version in use first; a cluster upgrade may have removed it.
    versions.erase(std::remove(versions.begin(), versions.end(), version_), versions.end());
    versions.insert(versions.begin(), version_);
  }
  for (const std::string& version : versions) {
    std::map<std::string, ClusterObject> items;
    std::string resourceVersion;
    const Outcome outcome = listVersion(version, items, resourceVersion);
    if (outcome == Outcome::Absent) continue;
    if (outcome != Outcome::Continue) return outcome;
    // Shared before the lock is taken; the new cache and its snapshot go in together.
    SharedCache shared = shareCache(std::move(items));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      version_ = version;
      cache_ = std::move(shared.objects);
      snapshot_ = std::move(shared.snapshot);
      state_.apiVersion = type_.group.empty() ? version : type_.group + "/" + version;
      state_.resourceVersion = resourceVersion;
      state_.synced = true;
      state_.absent = false;
      if (state_.lists++ > 0) ++state_.relists;
    }
    succeeded();
    onChange_();
    return Outcome::Continue;
  }
  // No version is served: a CRD that is not installed, or a cluster without DRA.
  if (type_.whenAbsent == ResourceType::WhenAbsent::Error) {
    fail("list: the API serves no version of " + type_.plural);
    return Outcome::Failed;
  }
  bool changed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    changed = !state_.absent || !state_.synced;
    version_.clear();
    cache_.clear();
    snapshot_ = std::make_shared<const ClusterObjects>();
    state_.apiVersion.clear();
    state_.absent = true;
    state_.synced = true;
    if (state_.lists++ > 0) ++state_.relists;
  }
  succeeded();
  if (changed) {
    if (log_) log_("info", std::string(kindName(type_.kind)) + ": not served by this cluster");
    onChange_();
  }
  return Outcome::Absent;
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
  if (type == "ERROR") {
    const JsonValue* code = member(object, "code");
    if (code != nullptr && code->IsInt() && code->GetInt() == 410) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++state_.expired;
      return Outcome::Relist;
    }
    ApiResponse refusal;
    refusal.status = code != nullptr && code->IsInt() ? code->GetInt() : 500;
    refusal.body = toJson(*object);
    fail("watch ERROR event: " + describeRefusal(refusal));
    return Outcome::Failed;
  }
  if (type == "BOOKMARK") {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!resourceVersion.empty()) state_.resourceVersion = std::string(resourceVersion);
    ++state_.bookmarks;
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
  const std::string key = type == "DELETED" ? keyOfMetadata(object) : keyOf(record);
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
  if (!read && log_) {
    log_("warn",
         std::string(kindName(type_.kind)) + " " + keyOfMetadata(object) + " skipped: " + error);
  }
  onChange_();
  return Outcome::Continue;
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
      "&timeoutSeconds=" + std::to_string(std::max(timeoutSeconds, 1));
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
      [&] { succeeded(); });  // the server took the watch: the cache is current again
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
      if (log_)
        log_("warn", std::string(kindName(type_.kind)) + ": the watch stalled; watching again");
      return Outcome::Continue;
    }
    fail("watch: the stream broke: " + response.error);
    return Outcome::Failed;
  }
  succeeded();
  // A stream the server ends at once, with nothing in it, is not a healthy
  // watch: back off instead of spinning.
  if (!sawEvent && now - started < std::chrono::seconds(1)) {
    fail("watch: the server ended the stream at once");
    return Outcome::Failed;
  }
  return Outcome::Continue;
}

void Reflector::run() {
  bool needList = true;
  while (!stopping()) {
    if (needList) {
      const Outcome outcome = list();
      if (outcome == Outcome::Stopped) return;
      if (outcome == Outcome::Absent) {
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
        if (log_)
          log_("info",
               std::string(kindName(type_.kind)) + ": resourceVersion expired; listing again");
        needList = true;
        break;
      case Outcome::Failed:
        if (!pause(nextBackoff())) return;
        break;
      case Outcome::Absent:
        needList = true;
        break;
      case Outcome::Stopped:
        return;
    }
  }
}

}  // namespace aiadmit
