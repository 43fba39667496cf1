// A stand-in for kube-apiserver's list and watch, over TLS on a free
// loopback port, following the documented contract (API concepts: efficient
// detection of changes, watch bookmarks, retrieving large results in chunks):
// lists carry metadata.resourceVersion and, with `limit`, a `continue`
// token; a watch from a resourceVersion sends every later change as a
// chunked stream of {"type","object"} lines, BOOKMARKs when asked for them,
// and ends after timeoutSeconds; a resourceVersion older than the last
// compaction is 410 Expired, at watch start or as an ERROR event; a bearer
// token it does not accept is 401. A resource it does not serve is 404, as a
// CRD that is not installed; GET of one object of a collection (also under
// /namespaces/NS/) is 200 with it or 404; GET /apis/GROUP is the group's APIGroup
// discovery document, listing the versions it serves collections of. A list
// at a resourceVersion it has not reached is 504 "Too large resource
// version", and a watch from one gets that as an ERROR event. Tests drive the
// failures it can show, and can see each request's time and connection.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "webhook/cluster/api_config.h"
#include "webhook/codec/non_copyable.h"

namespace httplib {
class Server;
}

namespace aiadmit::testing {

// A kubeconfig that reads a stand-in on this loopback port, trusting its CA
// (the development one), with token-1.
std::string standInKubeconfig(int port);

class ApiStandIn : NonCopyable {
 public:
  ApiStandIn();
  ~ApiStandIn();

  int port() const { return port_; }
  std::string caPem() const;
  // How a client reaches it: this port, its CA, the bearer token in `tokenFile`.
  ApiServerConfig config(const std::string& tokenFile) const;

  // Serves the collection at `path` ("/api/v1/nodes") of `kind` objects.
  void serve(const std::string& path, const std::string& apiVersion, const std::string& kind);
  // Stores an object (JSON) as a create or an update, with a new
  // resourceVersion, and tells open watches.
  void put(const std::string& path, const std::string& objectJson);
  void remove(const std::string& path, const std::string& name, const std::string& ns = "");
  // Moves the resourceVersion on, as writes to resources nobody watches here do.
  void advance();
  uint64_t resourceVersion() const;

  // Sends a BOOKMARK at the current resourceVersion to the open watches of
  // `path` that asked for bookmarks.
  void bookmark(const std::string& path);
  // Forgets the history before now: a watch from an older resourceVersion
  // gets 410 Expired at its start.
  void compact();
  // Sends an ERROR event with a 410 Expired Status on every open watch.
  void expireOpenWatches();
  // Cuts open watch streams without the closing chunk (a dropped connection).
  void disconnectWatches();
  // Ends open watch streams cleanly, as timeoutSeconds does.
  void endWatches();
  // The next `count` watches answer 200 and then send nothing, ever.
  void stallNextWatches(int count);
  // The next list request that carries a continue token gets 410 Expired.
  void expireNextContinue();
  // Sends an ERROR event with this Status on every open watch, which then ends.
  void sendErrorToOpenWatches(int code, const std::string& reason, const std::string& message);
  // The next `count` watches of `path` (-1: every one until repair()) answer
  // 200, send an ERROR event with this Status at once and end: a CRD whose
  // conversion webhook fails, say.
  void errorNextWatches(const std::string& path, int count, int code, const std::string& reason,
                        const std::string& message);
  // The next `count` lists of `path` (-1: every one until repair()) answer
  // with this Status and, when `retryAfterSeconds` >= 0, a Retry-After header.
  void refuseNextLists(const std::string& path, int count, int code, const std::string& reason,
                       const std::string& message, int retryAfterSeconds = -1);
  void repair(const std::string& path);
  // etcd restored from a backup taken at `resourceVersion`: what came after is
  // gone, the versions clients saw are now ahead of the server's, and open
  // watches get the "Too large resource version" ERROR event.
  void restore(uint64_t resourceVersion);
  // Lists at resourceVersion=0 are answered whole, without a continue token,
  // as the watch cache of many API server versions does whatever `limit` says.
  void ignoreLimitAtVersionZero(bool ignore);
  // TLS handshakes completed: the connections clients opened.
  uint64_t tlsHandshakes() const;
  // Bearer tokens it accepts (default: {"token-1"}).
  void acceptTokens(std::set<std::string> tokens);

  struct Request {
    std::string path;
    std::map<std::string, std::string> params;
    std::string token;
    int status = 0;
    int connection = -1;  // the client's port: requests with the same one shared a connection
    std::chrono::steady_clock::time_point at;  // when it arrived
  };
  std::vector<Request> requests() const;
  size_t openWatches() const;
  // Waits for `count` open watches of `path` ("" for any); false at the deadline.
  // A watch the client has left still counts until the stand-in next writes to
  // it or its timeoutSeconds pass: a quiet stream cannot tell that its
  // connection closed.
  bool waitForOpenWatches(size_t count, std::chrono::milliseconds timeout,
                          const std::string& path = "") const;

 private:
  struct Event {
    uint64_t resourceVersion;
    std::string type;
    std::string object;
  };
  struct Collection {
    std::string apiVersion;
    std::string kind;
    std::map<std::string, std::string> objects;  // key -> JSON with metadata.resourceVersion
    std::vector<Event> events;
  };
  struct Watch;
  struct Refusal {
    int count = 0;  // -1: until repair()
    int code = 0;
    std::string reason;
    std::string message;
    int retryAfterSeconds = -1;
  };
  static bool take(std::map<std::string, Refusal>& refusals, const std::string& path,
                   Refusal& refusal);
  void discovery(const std::string& group, void* response) const;
  bool getObject(const std::string& path, void* response) const;
  bool refuseList(Collection& collection, Request& request, void* response);
  void handle(const std::string& path, const void* request, void* response);
  void list(Collection& collection, const Request& request, void* response);
  void watch(const std::string& path, const Request& request, void* response);
  std::string stamped(const std::string& objectJson, uint64_t resourceVersion,
                      std::string* key) const;
  void record(const Request& request);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::string, Collection> collections_;
  std::vector<std::shared_ptr<Watch>> watches_;
  std::vector<Request> requests_;
  std::set<std::string> tokens_ = {"token-1"};
  uint64_t resourceVersion_ = 100;
  uint64_t compactedBelow_ = 0;
  int stallNext_ = 0;
  bool expireContinue_ = false;
  bool ignoreLimitAtZero_ = false;
  std::map<std::string, Refusal> watchErrors_;  // by path
  std::map<std::string, Refusal> listRefusals_;
  bool closing_ = false;
};

}  // namespace aiadmit::testing
