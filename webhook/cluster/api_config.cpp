#include "webhook/cluster/api_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "webhook/codec/base64.h"
#include "webhook/codec/json.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit {

namespace {

bool readWholeFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return !in.bad();
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

// "https://host:port[/]" -> host and port; IPv6 in brackets.
bool parseServer(std::string_view server, std::string& host, int& port, std::string& error) {
  constexpr std::string_view scheme = "https://";
  if (server.substr(0, scheme.size()) != scheme) {
    error = "server \"" + std::string(server) + "\" is not an https:// URL";
    return false;
  }
  std::string_view rest = server.substr(scheme.size());
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    if (rest.substr(slash) != "/") {
      error =
          "server \"" + std::string(server) + "\" has a path, which this client does not support";
      return false;
    }
    rest = rest.substr(0, slash);
  }
  port = 443;
  std::string_view portText;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) {
      error = "server \"" + std::string(server) + "\": unclosed [";
      return false;
    }
    host = std::string(rest.substr(1, close - 1));
    if (close + 1 < rest.size() && rest[close + 1] == ':') portText = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) portText = rest.substr(colon + 1);
  }
  if (!portText.empty()) {
    port = std::atoi(std::string(portText).c_str());
    if (port <= 0 || port > 65535) {
      error = "server \"" + std::string(server) + "\": bad port";
      return false;
    }
  }
  if (host.empty()) {
    error = "server \"" + std::string(server) + "\" has no host";
    return false;
  }
  return true;
}

const JsonValue* namedEntry(const JsonValue* list, std::string_view name, std::string_view field) {
  if (!isArray(list)) return nullptr;
  for (const JsonValue& item : list->GetArray()) {
    if (stringMember(&item, "name") == name) return member(&item, field);
  }
  return nullptr;
}

// A kubeconfig path is relative to the kubeconfig's folder.
std::string resolved(const std::string& kubeconfig, std::string_view path) {
  if (path.empty() || path.front() == '/') return std::string(path);
  const size_t slash = kubeconfig.rfind('/');
  return (slash == std::string::npos ? std::string() : kubeconfig.substr(0, slash + 1)) +
         std::string(path);
}

// `FIELD-data` (base64) or `FIELD` (a file) of a kubeconfig entry.
bool dataOrFile(const std::string& kubeconfig, const JsonValue* entry, std::string_view field,
                std::string& out, std::string& error) {
  const std::string dataField = std::string(field) + "-data";
  if (const std::string_view data = stringMember(entry, dataField); !data.empty()) {
    if (!base64Decode(data, out)) {
      error = dataField + " is not base64";
      return false;
    }
    return true;
  }
  if (const std::string_view file = stringMember(entry, field); !file.empty()) {
    const std::string path = resolved(kubeconfig, file);
    if (!readWholeFile(path, out)) {
      error = std::string(field) + " " + path + " cannot be read";
      return false;
    }
  }
  return true;
}

bool readUser(const std::string& path, const JsonValue* user, ApiServerConfig& out,
              std::string& error) {
  if (member(user, "exec") != nullptr || member(user, "auth-provider") != nullptr) {
    error =
        "the user authenticates through an exec or auth-provider plugin; give a token or a "
        "client certificate";
    return false;
  }
  out.token = std::string(stringMember(user, "token"));
  if (const std::string_view file = stringMember(user, "tokenFile"); !file.empty()) {
    out.tokenFile = resolved(path, file);
  }
  if (!dataOrFile(path, user, "client-certificate", out.clientCertPem, error) ||
      !dataOrFile(path, user, "client-key", out.clientKeyPem, error)) {
    return false;
  }
  if (out.clientCertPem.empty() != out.clientKeyPem.empty()) {
    error = "client-certificate and client-key go together";
    return false;
  }
  return true;
}

}  // namespace

std::string ApiServerConfig::describe() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "https://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + " (" + source +
         ")";
}

InClusterEnvironment InClusterEnvironment::fromProcess() {
  InClusterEnvironment environment;
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  environment.host = host ? host : "";
  environment.port = port ? port : "";
  return environment;
}

bool inClusterConfig(const InClusterEnvironment& environment, ApiServerConfig& out,
                     std::string& error) {
  if (environment.host.empty() || environment.port.empty()) {
    error = "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not running in a Pod";
    return false;
  }
  ApiServerConfig config;
  config.host = environment.host;
  config.port = std::atoi(environment.port.c_str());
  if (config.port <= 0 || config.port > 65535) {
    error = "KUBERNETES_SERVICE_PORT \"" + environment.port + "\" is not a port";
    return false;
  }
  config.tokenFile = environment.serviceAccountDir + "/token";
  std::string token;
  if (!readWholeFile(config.tokenFile, token) || trimmed(token).empty()) {
    error = config.tokenFile + " cannot be read: the Pod mounts no service-account token";
    return false;
  }
  const std::string caFile = environment.serviceAccountDir + "/ca.crt";
  if (!readWholeFile(caFile, config.caPem) || config.caPem.empty()) {
    error = caFile + " cannot be read";
    return false;
  }
  config.source = "in-cluster";
  out = std::move(config);
  return true;
}

bool kubeconfigConfig(const std::string& path, const std::string& context, ApiServerConfig& out,
                      std::string& error) {
  std::string text;
  if (!readWholeFile(path, text)) {
    error = path + " cannot be read";
    return false;
  }
  std::vector<ManifestDocument> documents;
  std::string parseError;
  if (!parseManifests(text, documents, &parseError) || documents.size() != 1) {
    error = path + ": " + (parseError.empty() ? "not one YAML document" : parseError);
    return false;
  }
  const JsonValue* root = documents[0].json.get();
  const std::string contextName =
      context.empty() ? std::string(stringMember(root, "current-context")) : context;
  const JsonValue* contextEntry = namedEntry(member(root, "contexts"), contextName, "context");
  if (contextEntry == nullptr) {
    error = path + ": no context \"" + contextName + "\"";
    return false;
  }
  const std::string_view clusterName = stringMember(contextEntry, "cluster");
  const JsonValue* cluster = namedEntry(member(root, "clusters"), clusterName, "cluster");
  const JsonValue* user =
      namedEntry(member(root, "users"), stringMember(contextEntry, "user"), "user");
  if (cluster == nullptr) {
    error = path + ": no cluster \"" + std::string(clusterName) + "\"";
    return false;
  }
  const JsonValue* insecure = member(cluster, "insecure-skip-tls-verify");
  if (insecure != nullptr && insecure->IsBool() && insecure->GetBool()) {
    error = path + ": insecure-skip-tls-verify is set; give the cluster's certificate-authority";
    return false;
  }
  ApiServerConfig config;
  if (!parseServer(stringMember(cluster, "server"), config.host, config.port, error) ||
      !dataOrFile(path, cluster, "certificate-authority", config.caPem, error) ||
      (user != nullptr && !readUser(path, user, config, error))) {
    error = path + ": " + error;
    return false;
  }
  config.source = path + " context " + contextName;
  config.namespaceName = std::string(stringMember(contextEntry, "namespace"));
  out = std::move(config);
  return true;
}

BearerToken::BearerToken(std::string fixed, std::string file, std::chrono::milliseconds refresh)
    : fixed_(std::move(fixed)), file_(std::move(file)), refresh_(refresh) {}

std::string BearerToken::current() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_.empty()) return fixed_;
  const auto now = std::chrono::steady_clock::now();
  if (!fresh_ || now - readAt_ >= refresh_) {
    std::string text;
    // A failed read keeps the last token: the kubelet swaps the file with a
    // rename, so a read never sees half a token, but the file may be gone
    // for a moment.
    if (readWholeFile(file_, text)) cached_ = trimmed(std::move(text));
    readAt_ = now;
    fresh_ = true;
    ++reads_;
  }
  return cached_.empty() ? fixed_ : cached_;
}

void BearerToken::refused() {
  std::lock_guard<std::mutex> lock(mutex_);
  fresh_ = false;
}

uint64_t BearerToken::reads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reads_;
}

}  // namespace aiadmit
