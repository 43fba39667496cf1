#include "webhook/cluster/api_lookup.h"

#include <algorithm>
#include <optional>

#include "webhook/cluster/reflector.h"
#include "webhook/codec/json.h"
#include "webhook/codec/json_parse.h"

namespace aiadmit {

namespace {

ApiClientOptions lookupClientOptions(const ApiLookupOptions& options) {
  ApiClientOptions client;
  client.connectTimeout = options.timeout;
  client.requestTimeout = options.timeout;
  client.maxBodyBytes = size_t{1} << 20;  // one object
  client.userAgent = "aiadmit (lookup)";
  return client;
}

// A DNS-1123 subdomain, which every kind asked about requires of its names:
// anything else cannot exist, and needs no escaping in a path.
bool isObjectName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

constexpr size_t kMaxDepth = 128;

// The object of a 200, read as the view reads its kind; nullopt when it
// cannot be (then only its presence is known).
std::optional<ClusterObject> readAnswer(const ClusterRef& ref, const std::string& apiVersion,
                                        std::string body) {
  JsonDocument document;
  if (!parseJsonInSitu(body.data(), body.size(), kMaxDepth, document).empty()) return std::nullopt;
  ClusterObject object;
  std::string error;
  if (!readClusterObject(ref.kind, apiVersion, document, object, &error)) return std::nullopt;
  return object;
}

}  // namespace

struct ApiLookup::Batch {
  std::mutex mutex;
  ClusterAnswers answers;
  size_t left = 0;
  Done done;
  std::chrono::steady_clock::time_point patientUntil{};
};

namespace {
bool isClaimKind(ClusterKind kind) {
  return kind == ClusterKind::ResourceClaimTemplate || kind == ClusterKind::ResourceClaim;
}
}  // namespace

ApiLookup::ApiLookup(ApiServerConfig config, ServedVersion servedVersion, ApiLookupOptions options)
    : client_(std::move(config), lookupClientOptions(options)),
      servedVersion_(std::move(servedVersion)),
      options_(options) {
  for (size_t i = 0; i < std::max<size_t>(1, options_.threads); ++i) {
    threads_.emplace_back([this] { run(); });
  }
}

ApiLookup::~ApiLookup() {
  stop();
}

void ApiLookup::stop() {
  std::deque<Question> unasked;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    unasked.swap(queue_);
  }
  wake_.notify_all();
  client_.stopAll();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
  for (const Question& question : unasked) answer(question, Presence::Unknown);
}

ApiLookupCounts ApiLookup::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

std::string ApiLookup::pathOf(const ClusterRef& ref, const std::string& apiVersion) {
  for (const ResourceType& type : clusterResourceTypes()) {
    if (type.kind != ref.kind) continue;
    if (!isObjectName(ref.name) || (type.namespaced && !isObjectName(ref.namespaceName))) {
      return "";
    }
    std::string path = apiVersion.find('/') == std::string::npos ? "/api/" : "/apis/";
    path += apiVersion;
    if (type.namespaced) path += "/namespaces/" + ref.namespaceName;
    return path + "/" + type.plural + "/" + ref.name;
  }
  return "";
}

void ApiLookup::confirm(std::vector<ClusterRef> refs, Done done,
                        std::chrono::milliseconds patience) {
  auto batch = std::make_shared<Batch>();
  batch->done = std::move(done);
  batch->patientUntil = std::chrono::steady_clock::now() + patience;
  batch->left = refs.size() + 1;  // and one for this call, so `done` runs once all are queued
  const auto now = std::chrono::steady_clock::now();
  for (ClusterRef& ref : refs) {
    Question question{std::move(ref), batch};
    std::unique_lock<std::mutex> lock(mutex_);
    if (rememberedAbsent(question.ref, now)) {
      ++counts_.absent;
      lock.unlock();
      answer(question, Presence::No);
    } else if (stopping_ || queue_.size() + asking_ >= options_.maxPending) {
      ++counts_.unknown;
      lock.unlock();
      answer(question, Presence::Unknown);
    } else {
      queue_.push_back(std::move(question));
      lock.unlock();
      wake_.notify_one();
    }
  }
  answer(Question{ClusterRef{}, batch}, Presence::Unknown);
}

// Records one answer; the last one hands the batch to its callback. The
// empty ref stands for confirm()'s own share and is not an answer.
void ApiLookup::answer(const Question& question, Presence presence,
                       std::optional<ClusterObject> found) {
  Done done;
  ClusterAnswers answers;
  {
    std::lock_guard<std::mutex> lock(question.batch->mutex);
    if (!question.ref.name.empty()) question.batch->answers.presence[question.ref] = presence;
    if (found) question.batch->answers.found.push_back(std::move(*found));
    if (--question.batch->left != 0) return;
    done = std::move(question.batch->done);
    answers = std::move(question.batch->answers);
  }
  done(std::move(answers));
}

void ApiLookup::run() {
  while (true) {
    Question question;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      question = std::move(queue_.front());
      queue_.pop_front();
      ++asking_;
    }
    std::optional<ClusterObject> found;
    Presence presence = ask(question.ref, found);
    while (presence == Presence::No && isClaimKind(question.ref.kind) &&
           std::chrono::steady_clock::now() + kPatientStep < question.batch->patientUntil) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (wake_.wait_for(lock, kPatientStep, [&] { return stopping_; })) break;
      }
      presence = ask(question.ref, found);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --asking_;
      if (presence == Presence::Yes) ++counts_.found;
      if (presence == Presence::No) {
        ++counts_.absent;
        remember(question.ref, std::chrono::steady_clock::now());
      }
      if (presence == Presence::Unknown) ++counts_.unknown;
    }
    answer(question, presence, std::move(found));
  }
}

Presence ApiLookup::ask(const ClusterRef& ref, std::optional<ClusterObject>& found) {
  const std::string version = servedVersion_ ? servedVersion_(ref.kind) : "";
  if (version.empty()) return Presence::Unknown;
  const std::string path = pathOf(ref, version);
  if (path.empty()) return Presence::No;
  ApiResponse response = client_.get(path);
  if (response.status == 200) {
    found = readAnswer(ref, version, std::move(response.body));
    return Presence::Yes;
  }
  if (response.status == 404) return Presence::No;
  return Presence::Unknown;
}

bool ApiLookup::rememberedAbsent(const ClusterRef& ref, std::chrono::steady_clock::time_point now) {
  const auto found = absentUntil_.find(ref);
  if (found == absentUntil_.end()) return false;
  if (found->second > now) return true;
  absentUntil_.erase(found);
  return false;
}

void ApiLookup::remember(const ClusterRef& ref, std::chrono::steady_clock::time_point now) {
  // Whether a claim or claim template exists decides what a workload is, and
  // the one a workload names is often created right after it (Helm makes the
  // kinds it does not know last): the Pods its controller makes a moment
  // later must ask again, or they would be placed nowhere.
  if (isClaimKind(ref.kind)) {
    return;
  }
  if (absentUntil_.size() >= options_.maxRemembered) {
    std::erase_if(absentUntil_, [&](const auto& entry) { return entry.second <= now; });
    if (absentUntil_.size() >= options_.maxRemembered) absentUntil_.clear();
  }
  absentUntil_[ref] = now + options_.absentFor;
}

}  // namespace aiadmit
