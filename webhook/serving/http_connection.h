// One HTTPS (or plain HTTP) connection as a state machine on an I/O thread:
// TLS handshake, idle keep-alive, request headers, body, answer, and a
// lingering close. Each phase has a deadline and each buffer a limit, so that
// no client, idle, slow or hostile, can make the server spend memory, threads
// or CPU without bound.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/serving/metrics.h"

namespace aiadmit {

using Milliseconds = std::chrono::milliseconds;

struct TransportLimits {
  // Past this many open connections a new one closes the longest-idle one
  // (or the longest-waiting handshake or header) instead of waiting.
  size_t maxConnections = 4096;
  size_t maxHeaderBytes = 16 * 1024;  // request line and headers (431)
  size_t maxRequestLineBytes = 4096;  // method, target and version (414)
  // The API server's own limit on a request (3 MiB): no object it stores
  // makes a larger review. Refused (413) before it is read.
  size_t maxBodyBytes = 3 * 1024 * 1024;
  // Bodies being received or decided, all connections together: what bounds
  // memory when many large reviews arrive at once (twenty-one of 3 MiB; 256
  // of 1 MiB at once peaked at 163 MB with twice this, against the Pod's 256
  // Mi). Charged as the bytes arrive, not from what a request declares, so
  // that connections that declare large bodies and send nothing hold
  // nothing; a body that finds no room waits for it, unread, and is a 503
  // only if its deadline passes first.
  size_t maxInflightBodyBytes = 64 * 1024 * 1024;
  Milliseconds handshakeTimeout{5000};
  Milliseconds headerTimeout{10000};      // from the first byte of a request
  Milliseconds bodyTimeout{10000};        // when the request carries no ?timeout=
  Milliseconds maxRequestTimeout{30000};  // the API server's own ceiling
  Milliseconds writeTimeout{10000};
  Milliseconds idleTimeout{90000};  // the API server's idle connection timeout

  // No one connection holds more than this share of the in-flight budget: a
  // few connections cannot take it all.
  static constexpr size_t kConnectionShares = 4;
  // The largest body a connection may send: the body limit, or its share of
  // the budget when that is smaller (413 past it).
  size_t connectionBodyBytes() const {
    return std::min(maxBodyBytes, maxInflightBodyBytes / kConnectionShares);
  }
};

struct TransportShared;

// Bytes of the in-flight body budget (TransportLimits::maxInflightBodyBytes)
// that one body holds, given back when the charge goes. Movable, so that a
// body handed to a worker stays counted until its answer is made.
class HttpConnection;

// A request body as a std::string that grows as its bytes arrive. Beast's
// string_body reserves the declared Content-Length at once, and memory that
// malloc hands out again is resident as soon as it is given: 256 connections
// declaring 1 MiB each held 256 MiB whatever they had sent.
struct ArrivingBody {
  using value_type = std::string;

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(boost::beast::http::header<isRequest, Fields>&, value_type& body) : body_(body) {}
    void init(const boost::optional<std::uint64_t>&, boost::beast::error_code& error) {
      error = {};
    }
    template <class Buffers>
    std::size_t put(const Buffers& buffers, boost::beast::error_code& error) {
      std::size_t added = 0;
      for (const auto buffer : boost::beast::buffers_range_ref(buffers)) {
        body_.append(static_cast<const char*>(buffer.data()), buffer.size());
        added += buffer.size();
      }
      error = {};
      return added;
    }
    void finish(boost::beast::error_code& error) { error = {}; }

   private:
    value_type& body_;
  };
};

class BodyCharge {
 public:
  BodyCharge() = default;
  explicit BodyCharge(TransportShared& shared) : shared_(&shared) {}
  BodyCharge(BodyCharge&& other) noexcept { *this = std::move(other); }
  BodyCharge& operator=(BodyCharge&& other) noexcept;
  BodyCharge(const BodyCharge&) = delete;
  BodyCharge& operator=(const BodyCharge&) = delete;
  ~BodyCharge() { release(); }

  size_t bytes() const { return bytes_; }
  // Grows the charge to `total` bytes; false, and unchanged, when the budget
  // has no room for them.
  bool growTo(size_t total);
  void release();

 private:
  friend class HttpConnection;
  // Wakes the connections waiting for room, after bytes were given back.
  void wakeWaiting();
  TransportShared* shared_ = nullptr;
  size_t bytes_ = 0;
};

// What a handler is given: a complete request.
struct HttpRequest {
  std::string_view method;
  std::string_view path;
  std::string_view query;
  std::string_view contentType;
  std::string_view body;
  std::chrono::steady_clock::time_point started;
  // The body's storage and its charge on the budget: a handler that answers
  // later may move both out, so that the body is neither copied nor
  // uncounted while it waits (null where the transport keeps them).
  std::string* ownBody = nullptr;
  BodyCharge* charge = nullptr;
};

struct HttpAnswer;
// Takes the answer to a request that the application gives later: call it
// once, from any thread.
using AnswerLater = std::function<void(HttpAnswer)>;

struct HttpAnswer {
  int status = 200;
  std::string_view contentType = "application/json";
  std::string body;
  std::string_view allow;  // the Allow header of a 405
  bool close = false;      // end the connection after this answer
  // Set by a handler that needs an answer from elsewhere first (an I/O
  // thread must not wait): the transport calls it with the function that
  // takes the better answer, and writes this answer instead when none came
  // within `waitAtMost` (or by the request's deadline). The request's body
  // is gone once handle() returns.
  std::function<void(AnswerLater)> later;
  std::chrono::milliseconds waitAtMost{0};
};

// The server's endpoints, called on I/O threads: they must not block.
class HttpApplication {
 public:
  virtual ~HttpApplication() = default;
  virtual void handle(const HttpRequest& request, HttpAnswer& answer) = 0;
  // The answer to a request the transport refuses (a limit, a deadline, bad HTTP).
  virtual void refuse(std::string_view path, int status, const std::string& message,
                      HttpAnswer& answer) = 0;
  // Whether a request to `path` needs a caller whose client certificate was
  // verified; one without is refused once its headers are in.
  virtual bool needsAuthenticatedCaller(std::string_view /*path*/) const { return false; }
};

// What every connection shares: limits, the application, counters.
struct TransportShared {
  TransportLimits limits;
  HttpApplication* application = nullptr;
  Metrics* metrics = nullptr;
  boost::asio::ssl::context* tls = nullptr;  // null: plain HTTP
  std::atomic<bool> draining{false};         // every answer closes its connection
  std::atomic<size_t> openConnections{0};
  std::atomic<size_t> inflightBodyBytes{0};
  // Connections whose body waits for room in the budget, woken when a
  // charge gives bytes back (`waitingForRoom` counts them, so that a charge
  // given back takes no lock when none waits).
  std::mutex roomMutex;
  std::vector<std::weak_ptr<HttpConnection>> awaitingRoom;
  std::atomic<size_t> waitingForRoom{0};
};

// One event loop on one thread, and the connections it serves. Only that
// thread touches the lists, so they need no lock.
class IoThread {
 private:
  friend class HttpConnection;
  // Before the loop, so that connections the loop still holds when it is
  // destroyed can leave the lists.
  std::list<HttpConnection*> idle_;
  std::list<HttpConnection*> waiting_;

 public:
  boost::asio::io_context context{1};

  // Closes the connection idle the longest, else the one waiting longest on a
  // handshake or headers; false when every connection is busy.
  bool shedOne();
  // At the end of a drain: closes idle connections.
  void endIdleConnections();
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(TransportShared& shared, IoThread& thread, boost::asio::ip::tcp::socket socket);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  void start();
  // Ends the connection at once, counted as a connection-cap closure.
  void shed();

 private:
  friend class IoThread;
  friend class BodyCharge;
  // Wait: the application answers later (HttpAnswer::later).
  enum class Phase { Handshake, Idle, Header, Body, Wait, Write, Linger, Closed };
  enum class AfterWrite { ReadBody, NextRequest, Close };
  enum class Direction { Read, Write };
  using Clock = std::chrono::steady_clock;
  using Parser = boost::beast::http::request_parser<ArrivingBody>;

  void enterPhase(Phase phase, Clock::time_point deadline);
  void setDeadline(Clock::time_point deadline);
  void waitTimer();
  void onTimer();
  void onDeadline();

  void waitFor(boost::asio::socket_base::wait_type wait, void (HttpConnection::*next)());
  bool retryWhenReady(int result, void (HttpConnection::*next)());
  // Reads into or writes from `data`, through TLS or straight: the bytes
  // moved, or 0 when none could be (the connection then waits for the
  // socket and calls `next`, or has closed).
  size_t transfer(Direction direction, char* data, size_t size, void (HttpConnection::*next)());
  void onIoError(const boost::system::error_code& error);
  void handshake();
  void beginRequest();
  void readLoop();
  void answerTimeout();
  bool parse();
  bool requestLineTooLong() const;
  bool checkHeader();
  bool checkCaller();
  bool chargeBody();
  // Called from any thread when the budget has room again.
  void resumeBody();
  void refuseNoRoom();
  void sendContinue();
  void respond();
  void awaitAnswer(HttpAnswer fallback, bool keepAlive);
  void refuse(int status, const std::string& message, Limit limit);
  void write(const HttpAnswer& answer, bool keepAlive);
  void writeLoop();
  void linger();
  void close();

  TransportShared& shared_;
  IoThread& thread_;
  boost::asio::ip::tcp::socket socket_;
  SSL* ssl_;  // null without TLS
  boost::asio::steady_timer timer_;
  Clock::time_point deadline_ = Clock::time_point::max();
  Clock::time_point armed_ = Clock::time_point::max();
  Phase phase_ = Phase::Handshake;
  bool timedOut_ = false;
  bool awaitingRoom_ = false;  // its body waits for room in the budget
  std::list<HttpConnection*>* list_ = nullptr;
  std::list<HttpConnection*>::iterator position_;

  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  bool headerChecked_ = false;
  bool startLineDone_ = false;
  size_t requestsServed_ = 0;
  Clock::time_point requestStarted_;
  std::string path_;  // of the request being read, for refusals
  BodyCharge charge_;
  std::string out_;
  size_t written_ = 0;
  AfterWrite afterWrite_ = AfterWrite::Close;
  // While waiting: the answer to write when the application's comes too late.
  std::optional<HttpAnswer> fallback_;
  bool fallbackKeepAlive_ = false;
  uint64_t awaited_ = 0;  // which wait a late answer belongs to
  int nesting_ = 0;
};

}  // namespace aiadmit
