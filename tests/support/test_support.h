// Real parts for tests: the aiadmit binary started over TLS on a free loopback
// port, a TLS client that verifies it, kubectl for applying patches and
// kubernetes-models for schema validation.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "webhook/codec/base64.h"
#include "webhook/codec/json.h"
#include "webhook/codec/non_copyable.h"
#include "webhook/model/workload.h"

namespace aiadmit::testing {

std::string sourceDir();
std::string binaryPath();
std::string corpusDir();  // ../shared/corpus beside the repository
// build/stacks: the CRDs and published examples of the serving and training
// stacks' Go modules, and Trainer's runtimePatches merge (scripts/build-stacks,
// run on first use, once per pin; a failure is recorded in the current test).
const std::string& stacksDir();
// The CRD files of a group and plural: ../shared/crds's, and the one its
// project's Go module ships at the release tests/e2e/stacks pins.
std::vector<std::string> crdFiles(const std::string& group, const std::string& resource);

// The first document of a YAML text, as kubectl reads it; an empty document
// with the failure recorded in the current test when it does not parse.
std::shared_ptr<JsonDocument> yamlObject(const std::string& yaml);

// The first pod template of an object of one of Kubernetes' own kinds (a
// Pod, a Deployment, a CronJob), read where its built-in row puts it; an
// empty view for any other kind.
PodTemplateView firstTemplateOf(const JsonValue& object);

// The node of a CRD's openAPIV3Schema a workload-type pointer pattern names,
// following `*` into additionalProperties (maps) or items (lists); nullptr
// when the schema has no such field.
const JsonValue* crdSchemaAt(const JsonValue* schema, const std::string& pointer);

std::string readFile(const std::string& path);
void writeFile(const std::string& path, std::string_view content);

struct CommandResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};
// Runs argv[0] with arguments (no shell), feeding `input` on stdin.
CommandResult runCommand(const std::vector<std::string>& argv, const std::string& input = "");

class TempDir : NonCopyable {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// A directory laid out as the kubelet lays out a Secret or ConfigMap volume:
// each key is a symlink through ..data into a hidden version directory, and
// an update writes a new version and swaps ..data to it with one rename,
// then removes the previous version and keys that are gone.
class ProjectedVolume {
 public:
  const std::string& path() const { return dir_.path(); }
  std::string file(std::string_view name) const { return dir_.file(name); }
  void publish(const std::map<std::string, std::string>& files);

 private:
  TempDir dir_;
  int version_ = 0;
  std::string current_;
  std::vector<std::string> keys_;
};

// ../shared/crds: the real CRDs of the AI workload kinds.
std::string sharedCrds();
// Validates custom resources against their CRDs in `crds` with
// tests/schema/validate_crd.mjs: "Kind/name" -> "ok", or what is wrong.
std::map<std::string, std::string> validateCustomResources(const std::vector<std::string>& objects,
                                                           const std::string& crds = sharedCrds());

// The shipped profiles, written into `dir` with gpu.deviceClasses of each
// set to `deviceClasses` (a test driver's class, such as dra-example-driver's
// gpu.example.com); returns the directory to pass as --profiles.
std::string profilesAllowingDeviceClasses(const TempDir& dir,
                                          const std::vector<std::string>& deviceClasses);

// The shipped profiles and `extra` (file name -> text) beside them, written
// into `dir`; returns the directory to pass as --profiles.
std::string shippedProfilesWith(const TempDir& dir,
                                const std::map<std::string, std::string>& extra);

// A development CA and serving certificate made by certs/gen-dev-certs.sh,
// once per test process: ca.crt, tls.crt, tls.key.
const TempDir& devCertificates();

struct HttpResponse {
  int status = 0;  // 0: no answer (connection or TLS failure)
  std::string body;
  std::multimap<std::string, std::string> headers;
};

class WebhookServer {
 public:
  struct Options {
    std::string profilesDir;  // default: the repository's profiles/
    std::string certFile;     // default: devCertificates()
    std::string keyFile;
    std::vector<std::string> extraArgs;
  };
  WebhookServer();
  explicit WebhookServer(Options options);
  ~WebhookServer();

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  HttpResponse post(const std::string& path, const std::string& body,
                    const std::string& contentType = "application/json") const;
  HttpResponse get(const std::string& path) const;
  // The plain-HTTP port of --metrics-listen HOST:0, once its "metrics
  // listening" line is out (0 when none came within 20 s); GET over it.
  int metricsPort() const;
  HttpResponse getPlain(const std::string& path) const;
  // Sends SIGTERM and waits; returns the exit status (or -1).
  int terminate();
  // Everything the server printed so far.
  std::string output() const;
  // Waits until a printed line contains `text`; false after `seconds`.
  bool waitForOutput(const std::string& text, double seconds) const;

 private:
  void start(Options options);
  pid_t pid_ = -1;
  int port_ = 0;
  int stdoutFd_ = -1;
  std::string caFile_;
  std::thread reader_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::string output_;
  bool exited_ = false;
};

// A raw connection for what no well-behaved client sends: partial bodies,
// lying headers, plain HTTP on the TLS port, idle and half-open connections.
class RawConnection : NonCopyable {
 public:
  // Connects to 127.0.0.1:port; with `tls`, completes a TLS handshake.
  RawConnection(int port, bool tls);
  ~RawConnection();

  bool connected() const { return fd_ >= 0 && (ssl_ != nullptr || !tls_); }
  bool send(std::string_view bytes);
  // Reads one HTTP response (headers and Content-Length body) or until the
  // peer closes or `seconds` pass. Returns what arrived.
  std::string readResponse(double seconds);
  // True when the peer closed the connection within `seconds`.
  bool closedByPeer(double seconds);
  void close();

 private:
  int readSome(char* buffer, int size, double seconds);
  bool tls_;
  int fd_ = -1;
  void* context_ = nullptr;  // SSL_CTX
  void* ssl_ = nullptr;      // SSL
};

// The HTTP status of a raw response, 0 when none.
int statusOf(const std::string& rawResponse);

// An AdmissionReview request for `object` (a JSON text).
std::string makeReview(const std::string& objectJson, std::string_view operation,
                       std::string_view uid, const std::string& oldObjectJson = "",
                       std::string_view namespaceName = "default");

struct ReviewResponse {
  std::string apiVersion;
  std::string kind;
  std::string uid;
  bool allowed = false;
  std::string patchType;
  std::string patch;  // decoded JSON Patch; empty when none
  std::vector<std::string> warnings;
  std::map<std::string, std::string> auditAnnotations;
  int statusCode = 0;
  std::string statusReason;
  std::string message;
};
// Parses a response body; fails the current test when it is not a review.
ReviewResponse parseReviewResponse(const std::string& body);

std::string base64Decode(std::string_view text);

// `kubectl patch --local -f OBJ --type=json -p PATCH -o json`: the patched
// object, or "" with the failure recorded in the current test.
std::string applyPatch(const std::string& objectJson, const std::string& patchJson);

// Validates objects with kubernetes-models (tests/schema/validate.mjs).
CommandResult validateSchemas(const std::vector<std::string>& objectJsons);

struct CorpusObject {
  std::string file;  // file name in the corpus
  int index = 0;     // document index in the file
  std::string kind;
  std::string name;
  std::string json;
};
// Every object of ../shared/corpus/manifests, in file order.
std::vector<CorpusObject> corpusObjects();

// Parses a JSON text; fails the test and returns an empty document on error.
std::shared_ptr<JsonDocument> parseJson(const std::string& text);

}  // namespace aiadmit::testing
