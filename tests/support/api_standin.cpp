#include "tests/support/api_standin.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>

#include "tests/support/test_support.h"
#include "webhook/codec/json.h"

namespace aiadmit::testing {

struct ApiStandIn::Watch {
  std::string path;
  uint64_t sentUpTo = 0;
  bool bookmarks = false;
  bool stalled = false;
  bool disconnect = false;
  bool end = false;
  std::vector<std::string> queued;  // BOOKMARK and ERROR lines
  std::chrono::steady_clock::time_point deadline;
};

namespace {

std::string status(int code, const std::string& reason, const std::string& message,
                   const std::string& details = "") {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         message + R"(","reason":")" + reason + "\"" +
         (details.empty() ? "" : R"(,"details":)" + details) + R"(,"code":)" +
         std::to_string(code) + "}";
}

// What the watch cache answers for a version it has not reached (after 3 s).
std::string tooLarge(uint64_t asked, uint64_t current) {
  return status(504, "Timeout",
                "Too large resource version: " + std::to_string(asked) +
                    ", current: " + std::to_string(current),
                R"({"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource )"
                R"(version"}],"retryAfterSeconds":1})");
}

std::string errorEvent(const std::string& statusJson) {
  return R"({"type":"ERROR","object":)" + statusJson + "}\n";
}

// "/apis/GROUP/VERSION/PLURAL" -> GROUP and VERSION; false for other paths.
bool groupVersionOf(const std::string& path, std::string& group, std::string& version) {
  if (path.rfind("/apis/", 0) != 0) return false;
  const size_t groupEnd = path.find('/', 6);
  if (groupEnd == std::string::npos) return false;
  const size_t versionEnd = path.find('/', groupEnd + 1);
  if (versionEnd == std::string::npos) return false;
  group = path.substr(6, groupEnd - 6);
  version = path.substr(groupEnd + 1, versionEnd - groupEnd - 1);
  return true;
}

std::string keyOf(const JsonValue& object) {
  const JsonValue* metadata = member(&object, "metadata");
  const std::string_view ns = stringMember(metadata, "namespace");
  const std::string name(stringMember(metadata, "name"));
  return ns.empty() ? name : std::string(ns) + "/" + name;
}

}  // namespace

ApiStandIn::ApiStandIn() {
  const TempDir& certs = devCertificates();
  server_ = std::make_unique<httplib::SSLServer>(certs.file("tls.crt").c_str(),
                                                 certs.file("tls.key").c_str());
  // Every open watch holds a worker: more than the default eight.
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  // As kube-apiserver, any number of requests on one connection (httplib's
  // default closes it after five).
  server_->set_keep_alive_max_count(100000);
  server_->Get(R"(/.*)", [this](const httplib::Request& request, httplib::Response& response) {
    handle(request.path, &request, &response);
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  EXPECT_GT(port_, 0);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the accept loop runs would not end it: wait for the loop.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_->is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(server_->is_running());
}

ApiStandIn::~ApiStandIn() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string ApiStandIn::caPem() const {
  return readFile(devCertificates().file("ca.crt"));
}

ApiServerConfig ApiStandIn::config(const std::string& tokenFile) const {
  ApiServerConfig config;
  config.host = "127.0.0.1";
  config.port = port_;
  config.caPem = caPem();
  config.tokenFile = tokenFile;
  config.source = "test";
  return config;
}

std::string standInKubeconfig(int port) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: standin\nclusters:\n- name: standin\n"
         "  cluster:\n    server: https://127.0.0.1:" +
         std::to_string(port) + "\n    certificate-authority: " + devCertificates().file("ca.crt") +
         "\ncontexts:\n- name: standin\n  context:\n    cluster: standin\n    user: standin\n"
         "users:\n- name: standin\n  user:\n    token: token-1\n";
}

void ApiStandIn::serve(const std::string& path, const std::string& apiVersion,
                       const std::string& kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  collections_[path].apiVersion = apiVersion;
  collections_[path].kind = kind;
}

std::string ApiStandIn::stamped(const std::string& objectJson, uint64_t resourceVersion,
                                std::string* key) const {
  JsonDocument document;
  document.Parse(objectJson.c_str(), objectJson.size());
  EXPECT_FALSE(document.HasParseError()) << objectJson.substr(0, 200);
  JsonValue& metadata = ensureObject(document, "metadata", document.GetAllocator());
  setString(metadata, "resourceVersion", std::to_string(resourceVersion), document.GetAllocator());
  if (key) *key = keyOf(document);
  return toJson(document);
}

void ApiStandIn::put(const std::string& path, const std::string& objectJson) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Collection& collection = collections_.at(path);
    const uint64_t version = ++resourceVersion_;
    std::string key;
    std::string object = stamped(objectJson, version, &key);
    const bool exists = collection.objects.count(key) != 0;
    collection.objects[key] = object;
    collection.events.push_back({version, exists ? "MODIFIED" : "ADDED", std::move(object)});
  }
  changed_.notify_all();
}

void ApiStandIn::remove(const std::string& path, const std::string& name, const std::string& ns) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Collection& collection = collections_.at(path);
    const std::string key = ns.empty() ? name : ns + "/" + name;
    const auto found = collection.objects.find(key);
    ASSERT_NE(found, collection.objects.end()) << key;
    const uint64_t version = ++resourceVersion_;
    collection.events.push_back({version, "DELETED", stamped(found->second, version, nullptr)});
    collection.objects.erase(found);
  }
  changed_.notify_all();
}

void ApiStandIn::advance() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++resourceVersion_;
}

uint64_t ApiStandIn::resourceVersion() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return resourceVersion_;
}

void ApiStandIn::bookmark(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Collection& collection = collections_.at(path);
    for (const auto& watch : watches_) {
      if (watch->path != path || !watch->bookmarks) continue;
      watch->queued.push_back(R"({"type":"BOOKMARK","object":{"kind":")" + collection.kind +
                              R"(","apiVersion":")" + collection.apiVersion +
                              R"(","metadata":{"resourceVersion":")" +
                              std::to_string(resourceVersion_) + "\"}}}\n");
    }
  }
  changed_.notify_all();
}

void ApiStandIn::compact() {
  std::lock_guard<std::mutex> lock(mutex_);
  compactedBelow_ = resourceVersion_;
  for (auto& [path, collection] : collections_) collection.events.clear();
}

void ApiStandIn::expireOpenWatches() {
  sendErrorToOpenWatches(410, "Expired", "too old resource version");
}

void ApiStandIn::disconnectWatches() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& watch : watches_) watch->disconnect = true;
  }
  changed_.notify_all();
}

void ApiStandIn::endWatches() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& watch : watches_) watch->end = true;
  }
  changed_.notify_all();
}

void ApiStandIn::stallNextWatches(int count) {
  std::lock_guard<std::mutex> lock(mutex_);
  stallNext_ = count;
}

void ApiStandIn::expireNextContinue() {
  std::lock_guard<std::mutex> lock(mutex_);
  expireContinue_ = true;
}

void ApiStandIn::sendErrorToOpenWatches(int code, const std::string& reason,
                                        const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& watch : watches_) {
      watch->queued.push_back(errorEvent(status(code, reason, message)));
      watch->end = true;
    }
  }
  changed_.notify_all();
}

void ApiStandIn::errorNextWatches(const std::string& path, int count, int code,
                                  const std::string& reason, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  watchErrors_[path] = Refusal{count, code, reason, message, -1};
}

void ApiStandIn::refuseNextLists(const std::string& path, int count, int code,
                                 const std::string& reason, const std::string& message,
                                 int retryAfterSeconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  listRefusals_[path] = Refusal{count, code, reason, message, retryAfterSeconds};
}

void ApiStandIn::repair(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  watchErrors_.erase(path);
  listRefusals_.erase(path);
}

void ApiStandIn::restore(uint64_t resourceVersion) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t before = resourceVersion_;
    resourceVersion_ = resourceVersion;
    for (auto& [path, collection] : collections_) {
      std::erase_if(collection.events,
                    [&](const Event& event) { return event.resourceVersion > resourceVersion; });
    }
    for (const auto& watch : watches_) {
      watch->queued.push_back(errorEvent(tooLarge(before, resourceVersion)));
      watch->end = true;
    }
  }
  changed_.notify_all();
}

void ApiStandIn::ignoreLimitAtVersionZero(bool ignore) {
  std::lock_guard<std::mutex> lock(mutex_);
  ignoreLimitAtZero_ = ignore;
}

uint64_t ApiStandIn::tlsHandshakes() const {
  SSL_CTX* context = static_cast<httplib::SSLServer*>(server_.get())->ssl_context();
  return static_cast<uint64_t>(SSL_CTX_sess_accept_good(context));
}

bool ApiStandIn::take(std::map<std::string, Refusal>& refusals, const std::string& path,
                      Refusal& refusal) {
  const auto found = refusals.find(path);
  if (found == refusals.end() || found->second.count == 0) return false;
  refusal = found->second;
  if (found->second.count > 0) --found->second.count;
  return true;
}

void ApiStandIn::acceptTokens(std::set<std::string> tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  tokens_ = std::move(tokens);
}

std::vector<ApiStandIn::Request> ApiStandIn::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

size_t ApiStandIn::openWatches() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return watches_.size();
}

bool ApiStandIn::waitForOpenWatches(size_t count, std::chrono::milliseconds timeout,
                                    const std::string& path) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    return static_cast<size_t>(std::count_if(watches_.begin(), watches_.end(), [&](const auto& w) {
             return (path.empty() || w->path == path) && !w->end && !w->disconnect;
           })) >= count;
  });
}

void ApiStandIn::record(const Request& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  requests_.push_back(request);
}

void ApiStandIn::handle(const std::string& path, const void* rawRequest, void* rawResponse) {
  const auto& http = *static_cast<const httplib::Request*>(rawRequest);
  auto& response = *static_cast<httplib::Response*>(rawResponse);
  Request request;
  request.path = path;
  request.at = std::chrono::steady_clock::now();
  request.connection = http.remote_port;
  for (const auto& [name, value] : http.params) request.params[name] = value;
  const std::string authorization = http.get_header_value("Authorization");
  if (authorization.rfind("Bearer ", 0) == 0) request.token = authorization.substr(7);

  std::unique_lock<std::mutex> lock(mutex_);
  const bool authorized = tokens_.count(request.token) != 0;
  if (authorized && path.rfind("/apis/", 0) == 0 && path.find('/', 6) == std::string::npos) {
    discovery(path.substr(6), rawResponse);
    request.status = response.status;
    lock.unlock();
    record(request);
    return;
  }
  const auto found = collections_.find(path);
  if (authorized && found == collections_.end() && getObject(path, rawResponse)) {
    request.status = response.status;
    lock.unlock();
    record(request);
    return;
  }
  if (!authorized || found == collections_.end()) {
    request.status = authorized ? 404 : 401;
    response.status = request.status;
    response.set_content(authorized ? status(404, "NotFound",
                                             "the server could not find the "
                                             "requested resource")
                                    : status(401, "Unauthorized", "Unauthorized"),
                         "application/json");
    lock.unlock();
    record(request);
    return;
  }
  if (request.params.count("watch") != 0 && request.params.at("watch") != "0" &&
      request.params.at("watch") != "false") {
    lock.unlock();
    watch(path, request, rawResponse);
    return;
  }
  list(found->second, request, rawResponse);
  lock.unlock();
  record(request);
}

// Called with mutex_ held. GET of one object of a served collection:
// ".../PLURAL/NAME", or ".../namespaces/NS/PLURAL/NAME" of a collection served
// across namespaces; 200 with it or 404. False when `path` names no object
// of a served collection.
bool ApiStandIn::getObject(const std::string& path, void* rawResponse) const {
  auto& response = *static_cast<httplib::Response*>(rawResponse);
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size()) return false;
  std::string collectionPath = path.substr(0, slash);
  std::string key = path.substr(slash + 1);
  const size_t namespaces = collectionPath.find("/namespaces/");
  if (namespaces != std::string::npos) {
    const size_t nameStart = namespaces + std::string("/namespaces/").size();
    const size_t nameEnd = collectionPath.find('/', nameStart);
    if (nameEnd == std::string::npos) return false;
    key = collectionPath.substr(nameStart, nameEnd - nameStart) + "/" + key;
    collectionPath.erase(namespaces, nameEnd - namespaces);
  }
  const auto collection = collections_.find(collectionPath);
  if (collection == collections_.end()) return false;
  const auto object = collection->second.objects.find(key);
  if (object == collection->second.objects.end()) {
    response.status = 404;
    response.set_content(status(404, "NotFound", "not found"), "application/json");
  } else {
    response.status = 200;
    response.set_content(object->second, "application/json");
  }
  return true;
}

// Called with mutex_ held. The APIGroup document of `group`, listing each
// version it serves a collection in; 404 when it serves none.
void ApiStandIn::discovery(const std::string& group, void* rawResponse) const {
  auto& response = *static_cast<httplib::Response*>(rawResponse);
  std::set<std::string> versions;
  for (const auto& [path, collection] : collections_) {
    std::string pathGroup;
    std::string version;
    if (groupVersionOf(path, pathGroup, version) && pathGroup == group) versions.insert(version);
  }
  if (versions.empty()) {
    response.status = 404;
    response.set_content(
        status(404, "NotFound", "the server could not find the requested resource"),
        "application/json");
    return;
  }
  std::string listed;
  for (const std::string& version : versions) {
    listed += std::string(listed.empty() ? "" : ",") + R"({"groupVersion":")" + group + "/" +
              version + R"(","version":")" + version + R"("})";
  }
  response.status = 200;
  response.set_content(R"({"kind":"APIGroup","apiVersion":"v1","name":")" + group +
                           R"(","versions":[)" + listed + R"(],"preferredVersion":)" +
                           R"({"groupVersion":")" + group + "/" + *versions.rbegin() +
                           R"(","version":")" + *versions.rbegin() + R"("}})",
                       "application/json");
}

// Called with mutex_ held: an injected refusal, a version not reached yet, or
// a continue token sent with a resourceVersion. True when it answered.
bool ApiStandIn::refuseList(Collection&, Request& request, void* rawResponse) {
  auto& response = *static_cast<httplib::Response*>(rawResponse);
  Refusal refusal;
  if (take(listRefusals_, request.path, refusal)) {
    request.status = response.status = refusal.code;
    response.set_content(status(refusal.code, refusal.reason, refusal.message), "application/json");
    if (refusal.retryAfterSeconds >= 0) {
      response.set_header("Retry-After", std::to_string(refusal.retryAfterSeconds));
    }
    return true;
  }
  const auto version = request.params.find("resourceVersion");
  if (version == request.params.end()) return false;
  if (request.params.count("continue") != 0) {
    request.status = response.status = 400;
    response.set_content(
        status(400, "BadRequest", "specifying resource version is not allowed when using continue"),
        "application/json");
    return true;
  }
  if (!version->second.empty() && std::stoull(version->second) > resourceVersion_) {
    request.status = response.status = 504;
    response.set_content(tooLarge(std::stoull(version->second), resourceVersion_),
                         "application/json");
    return true;
  }
  return false;
}

// Called with mutex_ held.
void ApiStandIn::list(Collection& collection, const Request& httpRequest, void* rawResponse) {
  auto& response = *static_cast<httplib::Response*>(rawResponse);
  Request& request = const_cast<Request&>(httpRequest);
  if (refuseList(collection, request, rawResponse)) return;
  size_t offset = 0;
  if (const auto token = request.params.find("continue"); token != request.params.end()) {
    if (expireContinue_) {
      expireContinue_ = false;
      request.status = 410;
      response.status = 410;
      response.set_content(status(410, "Expired", "The provided continue parameter is too old"),
                           "application/json");
      return;
    }
    // "o=OFFSET/rv=RV": characters a client must escape in a query.
    offset = std::stoul(token->second.substr(2, token->second.find('/') - 2));
  }
  size_t limit = collection.objects.size();
  const auto version = request.params.find("resourceVersion");
  const bool atZero = version != request.params.end() && version->second == "0";
  if (const auto given = request.params.find("limit");
      given != request.params.end() && !(atZero && ignoreLimitAtZero_)) {
    limit = std::max<size_t>(1, std::stoul(given->second));
  }
  std::string items;
  size_t index = 0;
  size_t sent = 0;
  for (const auto& [key, object] : collection.objects) {
    if (index++ < offset || sent == limit) continue;
    // List items carry no kind or apiVersion; the list does.
    JsonDocument item;
    item.Parse(object.c_str(), object.size());
    item.RemoveMember("kind");
    item.RemoveMember("apiVersion");
    items += (sent++ == 0 ? "" : ",") + toJson(item);
  }
  std::string metadata = R"({"resourceVersion":")" + std::to_string(resourceVersion_) + "\"";
  if (offset + sent < collection.objects.size()) {
    metadata += R"(,"continue":"o=)" + std::to_string(offset + sent) +
                "/rv=" + std::to_string(resourceVersion_) + R"(","remainingItemCount":)" +
                std::to_string(collection.objects.size() - offset - sent);
  }
  metadata += "}";
  request.status = 200;
  response.set_content(R"({"kind":")" + collection.kind + R"(List","apiVersion":")" +
                           collection.apiVersion + R"(","metadata":)" + metadata + R"(,"items":[)" +
                           items + "]}",
                       "application/json");
}

void ApiStandIn::watch(const std::string& path, const Request& httpRequest, void* rawResponse) {
  auto& response = *static_cast<httplib::Response*>(rawResponse);
  Request request = httpRequest;
  auto watch = std::make_shared<Watch>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto version = request.params.find("resourceVersion");
    const uint64_t from = version == request.params.end() || version->second.empty()
                              ? resourceVersion_
                              : std::stoull(version->second);
    if (from < compactedBelow_) {
      request.status = 410;
      response.status = 410;
      response.set_content(status(410, "Expired",
                                  "too old resource version: " + std::to_string(from) + " (" +
                                      std::to_string(compactedBelow_) + ")"),
                           "application/json");
      requests_.push_back(request);
      return;
    }
    watch->path = path;
    watch->sentUpTo = from;
    Refusal refusal;
    if (take(watchErrors_, path, refusal)) {
      watch->queued.push_back(errorEvent(status(refusal.code, refusal.reason, refusal.message)));
      watch->end = true;
    } else if (from > resourceVersion_) {
      watch->queued.push_back(errorEvent(tooLarge(from, resourceVersion_)));
      watch->end = true;
    }
    watch->bookmarks = request.params.count("allowWatchBookmarks") != 0 &&
                       request.params.at("allowWatchBookmarks") == "true";
    watch->stalled = stallNext_ > 0;
    if (stallNext_ > 0) --stallNext_;
    const auto timeout = request.params.find("timeoutSeconds");
    watch->deadline =
        std::chrono::steady_clock::now() +
        std::chrono::seconds(timeout == request.params.end() ? 1800 : std::stoul(timeout->second));
    watches_.push_back(watch);
    request.status = 200;
    requests_.push_back(request);
  }
  changed_.notify_all();
  response.set_chunked_content_provider(
      "application/json",
      [this, watch](size_t, httplib::DataSink& sink) {
        std::vector<std::string> lines;
        bool done = false;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          while (lines.empty() && !done) {
            if (closing_ || watch->disconnect) return false;
            if (!watch->stalled) {
              const Collection& collection = collections_.at(watch->path);
              for (const Event& event : collection.events) {
                if (event.resourceVersion <= watch->sentUpTo) continue;
                lines.push_back(R"({"type":")" + event.type + R"(","object":)" + event.object +
                                "}\n");
                watch->sentUpTo = event.resourceVersion;
              }
              for (std::string& line : watch->queued) lines.push_back(std::move(line));
              watch->queued.clear();
              done = watch->end;
            }
            // timeoutSeconds ends even a stalled stream, so that one the
            // client gave up on does not hold a worker for ever.
            done = done || std::chrono::steady_clock::now() >= watch->deadline;
            if (lines.empty() && !done) changed_.wait_for(lock, std::chrono::milliseconds(20));
          }
        }
        for (const std::string& line : lines) {
          if (!sink.write(line.data(), line.size())) return false;
        }
        if (done) sink.done();
        return true;
      },
      [this, watch](bool) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          watches_.erase(std::remove(watches_.begin(), watches_.end(), watch), watches_.end());
        }
        changed_.notify_all();
      });
}

}  // namespace aiadmit::testing
