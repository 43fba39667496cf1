#include "tests/support/test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "webhook/codec/base64.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/model/workload.h"

namespace aiadmit::testing {

std::string sourceDir() {
  return AIADMIT_SOURCE_DIR;
}
std::string binaryPath() {
  return AIADMIT_BINARY;
}
std::string corpusDir() {
  return std::string(AIADMIT_SOURCE_DIR) + "/../shared/corpus";
}

const std::string& stacksDir() {
  static const std::string dir = [] {
    const std::string out = std::filesystem::path(binaryPath()).parent_path().string() + "/stacks";
    const CommandResult built = runCommand({sourceDir() + "/scripts/build-stacks", out});
    EXPECT_EQ(built.exitCode, 0) << built.out << built.err;
    return out;
  }();
  return dir;
}

std::vector<std::string> crdFiles(const std::string& group, const std::string& resource) {
  const std::string name = group + "_" + resource + ".yaml";
  std::vector<std::string> files;
  for (const std::string& dir : {corpusDir() + "/../crds", stacksDir() + "/crds"}) {
    if (std::filesystem::exists(dir + "/" + name)) files.push_back(dir + "/" + name);
  }
  return files;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void writeFile(const std::string& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

namespace {

// A server may close a connection while a test still writes to it; that is
// an answer to check, not a reason for the test process to die.
const bool kIgnoreSigpipe = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

void drain(int fd, std::string& into) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
}

}  // namespace

CommandResult runCommand(const std::vector<std::string>& argv, const std::string& input) {
  CommandResult result;
  int inPipe[2], outPipe[2], errPipe[2];
  if (pipe2(inPipe, O_CLOEXEC) != 0 || pipe2(outPipe, O_CLOEXEC) != 0 ||
      pipe2(errPipe, O_CLOEXEC) != 0) {
    return result;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(inPipe[0], 0);
    dup2(outPipe[1], 1);
    dup2(errPipe[1], 2);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(inPipe[0]);
  close(outPipe[1]);
  close(errPipe[1]);
  std::thread writer([&] {
    size_t written = 0;
    while (written < input.size()) {
      const ssize_t n = write(inPipe[1], input.data() + written, input.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    close(inPipe[1]);
  });
  std::thread errReader([&] { drain(errPipe[0], result.err); });
  drain(outPipe[0], result.out);
  errReader.join();
  writer.join();
  close(outPipe[0]);
  close(errPipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "aiadmit-test-XXXXXX").string();
  path_ = mkdtemp(pattern.data());
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void ProjectedVolume::publish(const std::map<std::string, std::string>& files) {
  namespace fs = std::filesystem;
  const std::string version = "..2024_01_01_00_00_00." + std::to_string(++version_);
  fs::create_directory(file(version));
  for (const auto& [name, content] : files) writeFile(file(version + "/" + name), content);
  fs::create_symlink(version, file("..data_tmp"));
  fs::rename(file("..data_tmp"), file("..data"));
  for (const auto& [name, content] : files) {
    if (!fs::exists(fs::symlink_status(file(name))))
      fs::create_symlink("..data/" + name, file(name));
  }
  for (const std::string& stale : keys_) {
    if (files.count(stale) == 0) fs::remove(file(stale));
  }
  if (!current_.empty()) fs::remove_all(file(current_));
  current_ = version;
  keys_.clear();
  for (const auto& [name, content] : files) keys_.push_back(name);
}

const TempDir& devCertificates() {
  static const TempDir* dir = [] {
    auto* made = new TempDir();
    const CommandResult result =
        runCommand({"bash", sourceDir() + "/certs/gen-dev-certs.sh", made->path(), "2"});
    if (result.exitCode != 0) ADD_FAILURE() << "gen-dev-certs.sh failed: " << result.err;
    return made;
  }();
  return *dir;
}

WebhookServer::WebhookServer() : WebhookServer(Options{}) {}

WebhookServer::WebhookServer(Options options) {
  start(std::move(options));
}

void WebhookServer::start(Options options) {
  if (options.profilesDir.empty()) options.profilesDir = sourceDir() + "/profiles";
  if (options.certFile.empty()) options.certFile = devCertificates().file("tls.crt");
  if (options.keyFile.empty()) options.keyFile = devCertificates().file("tls.key");
  caFile_ = devCertificates().file("ca.crt");

  std::vector<std::string> argv = {
      binaryPath(), "serve",          "--profiles",       options.profilesDir,
      "--tls-cert", options.certFile, "--tls-key",        options.keyFile,
      "--listen",   "127.0.0.1:0",    "--shutdown-delay", "0"};
  argv.insert(argv.end(), options.extraArgs.begin(), options.extraArgs.end());

  int outPipe[2];
  ASSERT_EQ(pipe2(outPipe, O_CLOEXEC), 0);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(outPipe[1], 1);
    dup2(outPipe[1], 2);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(outPipe[1]);
  stdoutFd_ = outPipe[0];
  reader_ = std::thread([this] {
    char buffer[8192];
    for (;;) {
      const ssize_t n = read(stdoutFd_, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      if (n <= 0) {
        exited_ = true;
        changed_.notify_all();
        return;
      }
      output_.append(buffer, static_cast<size_t>(n));
      changed_.notify_all();
    }
  });

  ASSERT_TRUE(waitForOutput("\"msg\":\"listening\"", 20)) << "server did not start:\n" << output();
  // "address":"127.0.0.1:PORT" or "[::]:PORT": the port after the last colon.
  const std::string text = output();
  const size_t address = text.find("\"address\":\"");
  ASSERT_NE(address, std::string::npos);
  const size_t end = text.find('"', address + 11);
  const size_t colon = text.rfind(':', end);
  port_ = std::atoi(text.c_str() + colon + 1);
  ASSERT_GT(port_, 0);
}

WebhookServer::~WebhookServer() {
  terminate();
  if (reader_.joinable()) reader_.join();
  if (stdoutFd_ >= 0) close(stdoutFd_);
}

int WebhookServer::terminate() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string WebhookServer::output() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return output_;
}

bool WebhookServer::waitForOutput(const std::string& text, double seconds) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, std::chrono::duration<double>(seconds), [&] {
    return output_.find(text) != std::string::npos || exited_;
  }) && output_.find(text) != std::string::npos;
}

namespace {
HttpResponse toResponse(const httplib::Result& result) {
  HttpResponse response;
  if (!result) return response;
  response.status = result->status;
  response.body = result->body;
  for (const auto& [key, value] : result->headers) response.headers.emplace(key, value);
  return response;
}

std::unique_ptr<httplib::SSLClient> clientFor(int port, const std::string& caFile) {
  auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
  client->set_ca_cert_path(caFile.c_str());
  client->enable_server_certificate_verification(true);
  client->set_connection_timeout(5, 0);
  client->set_read_timeout(20, 0);
  return client;
}
}  // namespace

HttpResponse WebhookServer::post(const std::string& path, const std::string& body,
                                 const std::string& contentType) const {
  auto client = clientFor(port_, caFile_);
  return toResponse(client->Post(path.c_str(), body, contentType.c_str()));
}

HttpResponse WebhookServer::get(const std::string& path) const {
  auto client = clientFor(port_, caFile_);
  return toResponse(client->Get(path.c_str()));
}

int WebhookServer::metricsPort() const {
  constexpr std::string_view line = "\"msg\":\"metrics listening\",\"address\":\"";
  if (!waitForOutput(std::string(line), 20)) return 0;
  const std::string text = output();
  const size_t address = text.find(line) + line.size();
  const size_t end = text.find('"', address);
  return std::atoi(text.c_str() + text.rfind(':', end) + 1);
}

HttpResponse WebhookServer::getPlain(const std::string& path) const {
  httplib::Client client("127.0.0.1", metricsPort());
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(20, 0);
  return toResponse(client.Get(path.c_str()));
}

RawConnection::RawConnection(int port, bool tls) : tls_(tls) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  if (!tls) return;
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  context_ = context;
  SSL* ssl = SSL_new(context);
  SSL_set_fd(ssl, fd_);
  if (SSL_connect(ssl) != 1) {
    SSL_free(ssl);
    return;
  }
  ssl_ = ssl;
  // Non-blocking from here on: a read that finds only TLS 1.3 session tickets
  // must come back to the test instead of waiting for application data.
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

RawConnection::~RawConnection() {
  close();
  if (context_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(context_));
}

void RawConnection::close() {
  if (ssl_ != nullptr) {
    SSL_free(static_cast<SSL*>(ssl_));
    ssl_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

bool RawConnection::send(std::string_view bytes) {
  if (fd_ < 0) return false;
  if (!tls_)
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  if (ssl_ == nullptr) return false;
  SSL* ssl = static_cast<SSL*>(ssl_);
  size_t written = 0;
  while (written < bytes.size()) {
    const int n = SSL_write(ssl, bytes.data() + written, static_cast<int>(bytes.size() - written));
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    const int error = SSL_get_error(ssl, n);
    if (error != SSL_ERROR_WANT_WRITE && error != SSL_ERROR_WANT_READ) return false;
    pollfd waiting{fd_, static_cast<short>(error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
    if (poll(&waiting, 1, 5000) <= 0) return false;
  }
  return true;
}

int RawConnection::readSome(char* buffer, int size, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  SSL* ssl = static_cast<SSL*>(ssl_);
  for (;;) {
    if (ssl != nullptr && SSL_pending(ssl) > 0) return SSL_read(ssl, buffer, size);
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    pollfd waiting{fd_, POLLIN, 0};
    if (left <= 0 || poll(&waiting, 1, static_cast<int>(left * 1000) + 1) <= 0) return -2;
    if (!tls_) return static_cast<int>(::recv(fd_, buffer, static_cast<size_t>(size), 0));
    if (ssl == nullptr) return 0;
    const int n = SSL_read(ssl, buffer, size);
    if (n > 0) return n;
    if (SSL_get_error(ssl, n) != SSL_ERROR_WANT_READ) return 0;  // closed or failed
  }
}

std::string RawConnection::readResponse(double seconds) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buffer[16384];
  while (fd_ >= 0) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    const int n = readSome(buffer, sizeof buffer, left);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
    const size_t headerEnd = out.find("\r\n\r\n");
    if (headerEnd == std::string::npos) continue;
    const size_t lengthAt = out.find("Content-Length: ");
    if (lengthAt == std::string::npos || lengthAt > headerEnd) break;
    const size_t length = std::strtoul(out.c_str() + lengthAt + 16, nullptr, 10);
    if (out.size() >= headerEnd + 4 + length) break;
  }
  return out;
}

bool RawConnection::closedByPeer(double seconds) {
  char buffer[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (fd_ >= 0) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    const int n = readSome(buffer, sizeof buffer, left);
    if (n == -2) return false;
    if (n <= 0) return true;
  }
  return true;
}

int statusOf(const std::string& rawResponse) {
  if (rawResponse.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::atoi(rawResponse.c_str() + 9);
}

std::shared_ptr<JsonDocument> parseJson(const std::string& text) {
  auto doc = std::make_shared<JsonDocument>();
  doc->Parse(text.c_str(), text.size());
  if (doc->HasParseError()) {
    ADD_FAILURE() << "not JSON: " << text.substr(0, 300);
    doc->SetObject();
  }
  return doc;
}

std::string makeReview(const std::string& objectJson, std::string_view operation,
                       std::string_view uid, const std::string& oldObjectJson,
                       std::string_view namespaceName) {
  const auto object = parseJson(objectJson);
  const std::string_view apiVersion = stringMember(object.get(), "apiVersion");
  const size_t slash = apiVersion.find('/');
  const std::string group =
      slash == std::string_view::npos ? "" : std::string(apiVersion.substr(0, slash));
  const std::string version =
      std::string(slash == std::string_view::npos ? apiVersion : apiVersion.substr(slash + 1));
  const std::string kind(stringMember(object.get(), "kind"));
  std::string name(stringMember(member(object.get(), "metadata"), "name"));
  std::string ns(stringMember(member(object.get(), "metadata"), "namespace"));
  if (ns.empty()) ns = std::string(namespaceName);
  std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":")" +
      std::string(uid) + R"(","kind":{"group":")" + group + R"(","version":")" + version +
      R"(","kind":")" + kind + R"("},"namespace":")" + ns + R"(","name":")" + name +
      R"(","operation":")" + std::string(operation) +
      R"(","userInfo":{"username":"test"},"object":)" + objectJson;
  if (!oldObjectJson.empty()) review += R"(,"oldObject":)" + oldObjectJson;
  review += R"(,"dryRun":false}})";
  return review;
}

std::string base64Decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  int bits = 0;
  uint32_t accumulator = 0;
  for (char c : text) {
    const int v = value(c);
    if (v < 0) continue;
    accumulator = (accumulator << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((accumulator >> bits) & 0xFF));
    }
  }
  return out;
}

ReviewResponse parseReviewResponse(const std::string& body) {
  ReviewResponse out;
  const auto doc = parseJson(body);
  out.apiVersion = std::string(stringMember(doc.get(), "apiVersion"));
  out.kind = std::string(stringMember(doc.get(), "kind"));
  const JsonValue* response = member(doc.get(), "response");
  if (!isObject(response)) {
    ADD_FAILURE() << "no response in " << body.substr(0, 300);
    return out;
  }
  out.uid = std::string(stringMember(response, "uid"));
  const JsonValue* allowed = member(response, "allowed");
  EXPECT_TRUE(allowed != nullptr && allowed->IsBool()) << body.substr(0, 300);
  out.allowed = allowed != nullptr && allowed->IsBool() && allowed->GetBool();
  out.patchType = std::string(stringMember(response, "patchType"));
  out.patch = base64Decode(stringMember(response, "patch"));
  if (const JsonValue* warnings = member(response, "warnings"); isArray(warnings)) {
    for (const JsonValue& w : warnings->GetArray()) out.warnings.emplace_back(stringOf(&w));
  }
  if (const JsonValue* annotations = member(response, "auditAnnotations"); annotations) {
    EXPECT_TRUE(annotations->IsObject()) << "auditAnnotations is not an object";
    if (isObject(annotations)) {
      for (const auto& entry : annotations->GetObject()) {
        EXPECT_TRUE(entry.value.IsString()) << "auditAnnotations values are strings";
        out.auditAnnotations[std::string(stringOf(&entry.name))] = stringOf(&entry.value);
      }
    }
  }
  if (const JsonValue* status = member(response, "status"); isObject(status)) {
    const JsonValue* code = member(status, "code");
    out.statusCode = code != nullptr && code->IsInt() ? code->GetInt() : 0;
    out.statusReason = std::string(stringMember(status, "reason"));
    out.message = std::string(stringMember(status, "message"));
  }
  return out;
}

std::string applyPatch(const std::string& objectJson, const std::string& patchJson) {
  TempDir dir;
  writeFile(dir.file("object.json"), objectJson);
  const CommandResult result =
      runCommand({"kubectl", "patch", "--local", "-f", dir.file("object.json"), "--type=json", "-p",
                  patchJson, "-o", "json"});
  if (result.exitCode != 0) {
    ADD_FAILURE() << "kubectl patch failed: " << result.err << "\npatch: " << patchJson;
    return "";
  }
  return result.out;
}

CommandResult validateSchemas(const std::vector<std::string>& objectJsons) {
  TempDir dir;
  std::string array = "[";
  for (size_t i = 0; i < objectJsons.size(); ++i) {
    if (i > 0) array += ",";
    array += objectJsons[i];
  }
  array += "]";
  writeFile(dir.file("objects.json"), array);
  const std::string script = sourceDir() + "/tests/schema/validate.mjs";
  return runCommand({"node", script, dir.file("objects.json")});
}

std::vector<CorpusObject> corpusObjects() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(corpusDir() + "/manifests")) {
    files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<CorpusObject> objects;
  for (const std::string& path : files) {
    std::vector<ManifestDocument> documents;
    std::string error;
    if (!parseManifests(readFile(path), documents, &error)) {
      ADD_FAILURE() << path << ": " << error;
      continue;
    }
    for (size_t i = 0; i < documents.size(); ++i) {
      CorpusObject object;
      object.file = std::filesystem::path(path).filename().string();
      object.index = static_cast<int>(i);
      object.kind = std::string(stringMember(documents[i].json.get(), "kind"));
      object.name = std::string(stringMember(member(documents[i].json.get(), "metadata"), "name"));
      object.json = toJson(*documents[i].json);
      objects.push_back(std::move(object));
    }
  }
  return objects;
}

std::string profilesAllowingDeviceClasses(const TempDir& dir,
                                          const std::vector<std::string>& deviceClasses) {
  std::string list;
  for (const std::string& name : deviceClasses) list += (list.empty() ? "" : ", ") + name;
  const std::string profiles = dir.file("profiles");
  std::filesystem::create_directories(profiles);
  for (const char* name : {"batch.yaml", "realtime.yaml", "training.yaml"}) {
    std::string text = readFile(sourceDir() + "/profiles/" + name);
    const std::string section = "\n  gpu:\n";
    const size_t gpu = text.find(section);
    EXPECT_NE(gpu, std::string::npos) << name;
    if (gpu != std::string::npos) {
      text.insert(gpu + section.size(), "    deviceClasses: [" + list + "]\n");
    }
    writeFile(profiles + "/" + name, text);
  }
  return profiles;
}

std::string shippedProfilesWith(const TempDir& dir,
                                const std::map<std::string, std::string>& extra) {
  const std::string profiles = dir.file("profiles");
  std::filesystem::create_directories(profiles);
  for (const char* name : {"batch.yaml", "realtime.yaml", "training.yaml"}) {
    writeFile(profiles + "/" + name, readFile(sourceDir() + "/profiles/" + name));
  }
  for (const auto& [name, text] : extra) writeFile(profiles + "/" + name, text);
  return profiles;
}

std::string sharedCrds() {
  return corpusDir() + "/../crds";
}

std::map<std::string, std::string> validateCustomResources(const std::vector<std::string>& objects,
                                                           const std::string& crds) {
  TempDir dir;
  std::string array = "[";
  for (size_t i = 0; i < objects.size(); ++i) array += (i > 0 ? "," : "") + objects[i];
  writeFile(dir.file("objects.json"), array + "]");
  const CommandResult result = runCommand({"node", sourceDir() + "/tests/schema/validate_crd.mjs",
                                           "--crds", crds, dir.file("objects.json")});
  EXPECT_TRUE(result.exitCode == 0 || result.exitCode == 1) << result.err;
  std::map<std::string, std::string> out;
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ok ", 0) == 0) {
      out[line.substr(3)] = "ok";
    } else if (line.rfind("FAIL ", 0) == 0) {
      const size_t colon = line.find(": ");
      out[line.substr(5, colon - 5)] = line.substr(colon + 2);
    }
  }
  const bool anyFailure = result.out.find("FAIL ") != std::string::npos;
  EXPECT_EQ(result.exitCode, anyFailure ? 1 : 0) << result.out;
  return out;
}

}  // namespace aiadmit::testing
