#include "webhook/serving/http_connection.h"

#include <openssl/err.h>
#include <sys/socket.h>
#include <boost/asio/post.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "webhook/serving/duration.h"
#include "webhook/serving/http_status.h"
#include "webhook/serving/tls.h"

namespace aiadmit {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

// Reads ask for this much at a time: a small review's whole request arrives
// in one read; bodies come in records of at most 16 KiB anyway.
constexpr size_t kHeaderReadBytes = 4096;
constexpr size_t kBodyReadBytes = 16384;
// An idle connection keeps no more buffer than this.
constexpr size_t kIdleBufferBytes = 8192;
// After an answer that ends the connection, what the client still sends is
// read and dropped for this long, so that the answer is not lost to a reset.
constexpr Milliseconds kLingerTime{2000};
constexpr size_t kLingerBytes = 1024 * 1024;
// At the end of a drain, how long a new connection has to send its request.
constexpr Milliseconds kDrainGrace{1000};
// Requests answered back to back without a trip through the event loop.
constexpr int kMaxNesting = 8;

std::string_view asView(boost::beast::string_view text) {
  return {text.data(), text.size()};
}

std::string seconds(Milliseconds duration) {
  const auto millis = duration.count();
  return millis % 1000 == 0 ? std::to_string(millis / 1000) + " s" : std::to_string(millis) + " ms";
}

}  // namespace

BodyCharge& BodyCharge::operator=(BodyCharge&& other) noexcept {
  if (this == &other) return *this;
  release();
  shared_ = other.shared_;
  bytes_ = std::exchange(other.bytes_, 0);
  return *this;
}

bool BodyCharge::growTo(size_t total) {
  if (total <= bytes_) return true;
  const size_t more = total - bytes_;
  size_t current = shared_->inflightBodyBytes.load(std::memory_order_relaxed);
  do {
    if (current + more > shared_->limits.maxInflightBodyBytes) return false;
  } while (!shared_->inflightBodyBytes.compare_exchange_weak(current, current + more,
                                                             std::memory_order_relaxed));
  bytes_ = total;
  shared_->metrics->addInflightBodyBytes(static_cast<int64_t>(more));
  return true;
}

void BodyCharge::release() {
  if (bytes_ == 0) return;
  shared_->inflightBodyBytes.fetch_sub(bytes_, std::memory_order_relaxed);
  shared_->metrics->addInflightBodyBytes(-static_cast<int64_t>(bytes_));
  bytes_ = 0;
  // Paired with the fence of a body that starts to wait: either it sees
  // these bytes free, or this sees it waiting.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (shared_->waitingForRoom.load(std::memory_order_relaxed) != 0) wakeWaiting();
}

void BodyCharge::wakeWaiting() {
  std::vector<std::weak_ptr<HttpConnection>> waiting;
  {
    std::lock_guard<std::mutex> lock(shared_->roomMutex);
    waiting.swap(shared_->awaitingRoom);
    shared_->waitingForRoom.fetch_sub(waiting.size(), std::memory_order_relaxed);
  }
  for (const auto& connection : waiting) {
    if (auto alive = connection.lock()) alive->resumeBody();
  }
}

bool IoThread::shedOne() {
  for (auto* list : {&idle_, &waiting_}) {
    if (!list->empty()) {
      list->front()->shed();
      return true;
    }
  }
  return false;
}

void IoThread::endIdleConnections() {
  // A connection that has served no request yet is new: its client is about
  // to send one, which would be lost if it were closed now. It gets a short
  // grace instead; one that served requests before the drain and has been
  // idle since is closed.
  const auto grace = std::chrono::steady_clock::now() + kDrainGrace;
  for (auto it = idle_.begin(); it != idle_.end();) {
    HttpConnection* connection = *it++;
    if (connection->requestsServed_ > 0) {
      connection->close();
    } else {
      connection->setDeadline(std::min(connection->deadline_, grace));
    }
  }
}

HttpConnection::HttpConnection(TransportShared& shared, IoThread& thread,
                               asio::ip::tcp::socket socket)
    : shared_(shared),
      thread_(thread),
      socket_(std::move(socket)),
      ssl_(shared.tls != nullptr ? SSL_new(shared.tls->native_handle()) : nullptr),
      timer_(thread.context),
      buffer_(shared.limits.maxHeaderBytes + kBodyReadBytes),
      charge_(shared) {}

HttpConnection::~HttpConnection() {
  if (list_ != nullptr) list_->erase(position_);
  if (ssl_ != nullptr) SSL_free(ssl_);
  charge_.release();
  shared_.openConnections.fetch_sub(1, std::memory_order_relaxed);
  shared_.metrics->recordConnectionClosed();
}

void HttpConnection::start() {
  error_code error;
  socket_.set_option(asio::ip::tcp::no_delay(true), error);
  if (!error) socket_.non_blocking(true, error);
  if (!error) socket_.native_non_blocking(true, error);
  if (error) return close();
  if (shared_.tls == nullptr) return beginRequest();  // plain HTTP
  if (ssl_ == nullptr || SSL_set_fd(ssl_, socket_.native_handle()) != 1) return close();
  SSL_set_accept_state(ssl_);
  enterPhase(Phase::Handshake, Clock::now() + shared_.limits.handshakeTimeout);
  handshake();
}

void HttpConnection::shed() {
  shared_.metrics->recordLimit(Limit::Connections);
  close();
}

// --- phases and the one timer ----------------------------------------------------

void HttpConnection::enterPhase(Phase phase, Clock::time_point deadline) {
  phase_ = phase;
  std::list<HttpConnection*>* wanted = nullptr;
  if (phase == Phase::Idle) wanted = &thread_.idle_;
  if (phase == Phase::Handshake || phase == Phase::Header) wanted = &thread_.waiting_;
  // To the back: each list stays ordered by how long its members have waited.
  if (list_ != nullptr && wanted != nullptr) {
    wanted->splice(wanted->end(), *list_, position_);
  } else if (list_ != nullptr) {
    list_->erase(position_);
  } else if (wanted != nullptr) {
    position_ = wanted->insert(wanted->end(), this);
  }
  list_ = wanted;
  setDeadline(deadline);
}

// The timer is re-armed only when a deadline comes earlier than the armed
// expiry; a later one is picked up when the timer fires. A connection that
// streams requests thus costs no timer operation per request, and an idle
// one wakes at most twice in its idle timeout.
void HttpConnection::setDeadline(Clock::time_point deadline) {
  deadline_ = deadline;
  timedOut_ = false;
  if (deadline < armed_) {
    armed_ = deadline;
    timer_.expires_at(deadline);
    waitTimer();
  }
}

void HttpConnection::waitTimer() {
  timer_.async_wait([self = shared_from_this()](const error_code& error) {
    if (error != asio::error::operation_aborted) self->onTimer();
  });
}

void HttpConnection::onTimer() {
  if (phase_ == Phase::Closed) return;
  if (deadline_ == Clock::time_point::max()) {
    armed_ = Clock::time_point::max();
    return;
  }
  if (Clock::now() < deadline_) {
    armed_ = deadline_;
    timer_.expires_at(deadline_);
    waitTimer();
    return;
  }
  armed_ = Clock::time_point::max();
  onDeadline();
}

void HttpConnection::onDeadline() {
  switch (phase_) {
    case Phase::Handshake:
      shared_.metrics->recordLimit(Limit::HandshakeDeadline);
      return close();
    case Phase::Idle:
      shared_.metrics->recordLimit(Limit::IdleTimeout);
      return close();
    case Phase::Body:
      // A body that waited for room in the budget all this time: 503.
      if (awaitingRoom_) {
        awaitingRoom_ = false;
        return refuseNoRoom();
      }
      [[fallthrough]];
    case Phase::Header:
      // The pending wait ends with operation_aborted; onIoError answers 408.
      timedOut_ = true;
      socket_.cancel();
      return;
    case Phase::Wait: {
      const HttpAnswer fallback = std::move(*fallback_);
      fallback_.reset();
      return write(fallback, fallbackKeepAlive_ && !fallback.close);
    }
    case Phase::Write:
      shared_.metrics->recordLimit(Limit::WriteDeadline);
      return close();
    case Phase::Linger:
    case Phase::Closed:
      return close();
  }
}

// --- TLS (or plain HTTP) straight on the non-blocking socket ------------------------
//
// OpenSSL reads and writes the socket itself; the event loop only says when
// it is ready. An idle connection holds no TLS record buffer then (OpenSSL
// releases them), and an answer that fits the socket buffer is written
// without a trip through the loop. Without TLS (the metrics listener) the
// same is done with recv and send.

void HttpConnection::waitFor(asio::socket_base::wait_type wait, void (HttpConnection::*next)()) {
  socket_.async_wait(wait, [self = shared_from_this(), next](const error_code& error) {
    if (self->phase_ == Phase::Closed) return;
    if (error) return self->onIoError(error);
    ((*self).*next)();
  });
}

// What a failed SSL call wants: true when it will be retried once the socket is ready.
bool HttpConnection::retryWhenReady(int result, void (HttpConnection::*next)()) {
  const int error = SSL_get_error(ssl_, result);
  if (error == SSL_ERROR_WANT_READ) {
    waitFor(asio::socket_base::wait_read, next);
    return true;
  }
  if (error == SSL_ERROR_WANT_WRITE) {
    waitFor(asio::socket_base::wait_write, next);
    return true;
  }
  ERR_clear_error();
  return false;
}

size_t HttpConnection::transfer(Direction direction, char* data, size_t size,
                                void (HttpConnection::*next)()) {
  const bool reading = direction == Direction::Read;
  if (ssl_ != nullptr) {
    const int chunk = static_cast<int>(std::min<size_t>(size, 1 << 30));
    const int result = reading ? SSL_read(ssl_, data, chunk) : SSL_write(ssl_, data, chunk);
    if (result > 0) return static_cast<size_t>(result);
    if (!retryWhenReady(result, next)) close();  // gone, or broke TLS
    return 0;
  }
  for (;;) {
    const ssize_t result = reading ? ::recv(socket_.native_handle(), data, size, 0)
                                   : ::send(socket_.native_handle(), data, size, MSG_NOSIGNAL);
    if (result > 0) return static_cast<size_t>(result);
    if (result < 0 && errno == EINTR) continue;
    if (result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      waitFor(reading ? asio::socket_base::wait_read : asio::socket_base::wait_write, next);
    } else {
      close();  // gone
    }
    return 0;
  }
}

void HttpConnection::onIoError(const error_code& error) {
  if (error == asio::error::operation_aborted && timedOut_) return answerTimeout();
  close();
}

void HttpConnection::handshake() {
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) return beginRequest();
  if (retryWhenReady(result, &HttpConnection::handshake)) return;
  shared_.metrics->recordHandshakeFailure();
  close();
}

// --- reading a request --------------------------------------------------------------

void HttpConnection::beginRequest() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(shared_.limits.maxHeaderBytes));
  parser_->body_limit(shared_.limits.connectionBodyBytes());
  headerChecked_ = false;
  startLineDone_ = false;
  path_.clear();
  if (out_.capacity() > kIdleBufferBytes) std::string().swap(out_);
  if (buffer_.size() > 0) {  // a pipelined request is already here
    requestStarted_ = Clock::now();
    enterPhase(Phase::Header, requestStarted_ + shared_.limits.headerTimeout);
    if (parse()) readLoop();
    return;
  }
  if (buffer_.capacity() > kIdleBufferBytes) buffer_.shrink_to_fit();
  enterPhase(Phase::Idle, Clock::now() + shared_.limits.idleTimeout);
  readLoop();
}

void HttpConnection::readLoop() {
  while (phase_ != Phase::Closed) {
    const size_t room = buffer_.max_size() - buffer_.size();
    const size_t want = phase_ == Phase::Body ? kBodyReadBytes : kHeaderReadBytes;
    const auto space = buffer_.prepare(std::min(room, want));
    const size_t read = transfer(Direction::Read, static_cast<char*>(space.data()), space.size(),
                                 &HttpConnection::readLoop);
    if (read == 0) return;
    buffer_.commit(read);
    if (phase_ == Phase::Idle) {
      requestStarted_ = Clock::now();
      enterPhase(Phase::Header, requestStarted_ + shared_.limits.headerTimeout);
    }
    if (!parse()) return;
  }
}

void HttpConnection::answerTimeout() {
  if (phase_ == Phase::Header) {
    return refuse(408,
                  "request headers did not arrive within " + seconds(shared_.limits.headerTimeout),
                  Limit::HeaderDeadline);
  }
  if (phase_ != Phase::Body) return close();
  const auto expected = parser_->content_length();
  refuse(408,
         "request body is incomplete: " + std::to_string(parser_->get().body().size()) +
             (expected ? " of " + std::to_string(*expected) : std::string()) +
             " bytes arrived within the deadline",
         Limit::BodyDeadline);
}

// Feeds what was read to the parser; true when more must be read.
bool HttpConnection::parse() {
  for (;;) {
    if (!startLineDone_ && requestLineTooLong()) {
      refuse(414,
             "request line is longer than " + std::to_string(shared_.limits.maxRequestLineBytes) +
                 " bytes",
             Limit::RequestLine);
      return false;
    }
    error_code error;
    const size_t used = parser_->put(buffer_.data(), error);
    buffer_.consume(used);
    // The parser consumes the request line on its own, then the headers at once.
    if (used > 0) startLineDone_ = true;
    if (error == http::error::need_more) break;
    if (error == http::error::header_limit) {
      refuse(431,
             "request headers are larger than " + std::to_string(shared_.limits.maxHeaderBytes) +
                 " bytes",
             Limit::HeaderBytes);
      return false;
    }
    if (error == http::error::body_limit) {
      refuse(413,
             "request body is larger than " + std::to_string(shared_.limits.connectionBodyBytes()) +
                 " bytes",
             Limit::BodyBytes);
      return false;
    }
    if (error) {
      shared_.metrics->recordMalformedRequest();
      refuse(400, "malformed HTTP request: " + error.message(), Limit::None);
      return false;
    }
    if (parser_->is_header_done() && !headerChecked_) {
      headerChecked_ = true;
      if (!checkHeader()) return false;
    }
    if (headerChecked_ && !chargeBody()) return false;
    if (parser_->is_done()) {
      respond();
      return false;
    }
    if (used == 0 || buffer_.size() == 0) break;
  }
  return true;
}

bool HttpConnection::requestLineTooLong() const {
  const auto* data = static_cast<const char*>(buffer_.data().data());
  const std::string_view seen(data, buffer_.size());
  const size_t limit = shared_.limits.maxRequestLineBytes;
  const size_t end = seen.substr(0, limit + 2).find('\n');
  return end == std::string_view::npos ? seen.size() > limit + 1 : end > limit + 1;
}

// Once the headers are in: what can be refused before a byte of the body is read.
bool HttpConnection::checkHeader() {
  const auto& request = parser_->get();
  const std::string_view target = asView(request.target());
  path_ = std::string(target.substr(0, target.find('?')));
  if (!checkCaller()) return false;
  const auto lengths = request.equal_range(http::field::content_length);
  if (std::distance(lengths.first, lengths.second) > 1 ||
      (lengths.first != lengths.second &&
       asView(lengths.first->value()).find(',') != std::string_view::npos)) {
    shared_.metrics->recordMalformedRequest();
    refuse(400, "Content-Length must be given once, as one number", Limit::None);
    return false;
  }
  // The body must arrive within the API server's ?timeout=, at most ours.
  Milliseconds budget = shared_.limits.bodyTimeout;
  const size_t query = target.find('?');
  for (std::string_view rest = query == std::string_view::npos ? "" : target.substr(query + 1);
       !rest.empty();) {
    const size_t amp = rest.find('&');
    const std::string_view param = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? "" : rest.substr(amp + 1);
    if (param.rfind("timeout=", 0) != 0) continue;
    if (auto parsed = parseDuration(param.substr(8), shared_.limits.maxRequestTimeout)) {
      budget = *parsed;
    }
  }
  enterPhase(Phase::Body, requestStarted_ + budget);
  if (!parser_->is_done() && buffer_.size() == 0 &&
      boost::beast::iequals(request[http::field::expect], "100-continue")) {
    sendContinue();
    return false;
  }
  return true;
}

// Before the body is read or budgeted: a caller without a verified client
// certificate gets nothing but the probes.
bool HttpConnection::checkCaller() {
  if (!shared_.application->needsAuthenticatedCaller(path_) ||
      CertificateStore::callerAuthenticated(ssl_)) {
    return true;
  }
  shared_.metrics->recordUnauthenticatedCaller();
  refuse(403, "a client certificate signed by the CA of --client-ca is required", Limit::None);
  return false;
}

// The body's bytes so far are charged to the in-flight budget as they
// arrive: what a request declares costs nothing until it is sent. When the
// budget has no room (a burst of large reviews), the body waits, unread,
// until a charge gives bytes back or its deadline passes (then 503): a
// burst is answered late rather than refused.
bool HttpConnection::chargeBody() {
  const size_t size = parser_->get().body().size();
  if (charge_.growTo(size)) return true;
  {
    std::lock_guard<std::mutex> lock(shared_.roomMutex);
    shared_.waitingForRoom.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (charge_.growTo(size)) {
      shared_.waitingForRoom.fetch_sub(1, std::memory_order_relaxed);
      return true;
    }
    shared_.awaitingRoom.push_back(weak_from_this());
  }
  awaitingRoom_ = true;
  return false;
}

void HttpConnection::resumeBody() {
  asio::post(thread_.context, [self = shared_from_this()] {
    if (self->phase_ != Phase::Body || !self->awaitingRoom_) return;
    self->awaitingRoom_ = false;
    if (!self->chargeBody()) return;  // waits again
    if (self->parser_->is_done()) return self->respond();
    if (self->parse()) self->readLoop();
  });
}

void HttpConnection::refuseNoRoom() {
  refuse(503,
         "too many request bodies in flight (" +
             std::to_string(shared_.limits.maxInflightBodyBytes) + " bytes); retry",
         Limit::InflightBodyBytes);
}

void HttpConnection::sendContinue() {
  out_ = "HTTP/1.1 100 Continue\r\n\r\n";
  written_ = 0;
  afterWrite_ = AfterWrite::ReadBody;
  writeLoop();
}

// --- answering ------------------------------------------------------------------------

void HttpConnection::respond() {
  auto& request = parser_->get();
  const std::string_view target = asView(request.target());
  const size_t query = target.find('?');
  const HttpRequest view{asView(request.method_string()),
                         target.substr(0, query),
                         query == std::string_view::npos ? "" : target.substr(query + 1),
                         asView(request[http::field::content_type]),
                         request.body(),
                         requestStarted_,
                         &request.body(),
                         &charge_};
  HttpAnswer answer;
  shared_.application->handle(view, answer);
  const bool keepAlive = request.keep_alive() && !answer.close;
  parser_.reset();  // the body goes now, not when the connection goes
  ++requestsServed_;
  charge_.release();  // unless the application took it with the body
  if (answer.later) return awaitAnswer(std::move(answer), keepAlive);
  write(answer, keepAlive);
}

// Nothing is read meanwhile: the client waits for this answer (HTTP/1.1
// without pipelining, as the API server sends). The wait keeps the request's
// deadline, shortened to what the application allows.
void HttpConnection::awaitAnswer(HttpAnswer fallback, bool keepAlive) {
  auto later = std::move(fallback.later);
  fallback.later = nullptr;
  const Clock::time_point until = std::min(deadline_, Clock::now() + fallback.waitAtMost);
  fallbackKeepAlive_ = keepAlive;
  fallback_ = std::move(fallback);
  const uint64_t wait = ++awaited_;
  enterPhase(Phase::Wait, until);
  later([self = shared_from_this(), wait](HttpAnswer answer) {
    asio::post(self->thread_.context, [self, wait, answer = std::move(answer)]() mutable {
      if (self->phase_ != Phase::Wait || self->awaited_ != wait) return;  // too late
      const bool keepAlive = self->fallbackKeepAlive_ && !answer.close;
      self->fallback_.reset();
      // An answer from a worker may itself wait for another (the API's).
      if (answer.later) return self->awaitAnswer(std::move(answer), keepAlive);
      self->write(answer, keepAlive);
    });
  });
}

void HttpConnection::refuse(int status, const std::string& message, Limit limit) {
  if (limit != Limit::None) shared_.metrics->recordLimit(limit);
  HttpAnswer answer;
  shared_.application->refuse(path_, status, message, answer);
  if (parser_) parser_.reset();
  charge_.release();
  write(answer, false);
}

void HttpConnection::write(const HttpAnswer& answer, bool keepAlive) {
  keepAlive = keepAlive && !shared_.draining.load(std::memory_order_relaxed);
  enterPhase(Phase::Write, Clock::now() + shared_.limits.writeTimeout);
  out_.clear();
  out_.reserve(answer.body.size() + 160);
  out_ += "HTTP/1.1 ";
  out_ += std::to_string(answer.status);
  out_ += ' ';
  out_ += reasonPhrase(answer.status);
  out_ += "\r\nContent-Type: ";
  out_ += answer.contentType;
  out_ += "\r\nContent-Length: ";
  out_ += std::to_string(answer.body.size());
  if (!answer.allow.empty()) {
    out_ += "\r\nAllow: ";
    out_ += answer.allow;
  }
  if (!keepAlive) out_ += "\r\nConnection: close";
  out_ += "\r\n\r\n";
  out_ += answer.body;
  written_ = 0;
  afterWrite_ = keepAlive ? AfterWrite::NextRequest : AfterWrite::Close;
  writeLoop();
}

void HttpConnection::writeLoop() {
  while (written_ < out_.size()) {
    const size_t sent = transfer(Direction::Write, out_.data() + written_, out_.size() - written_,
                                 &HttpConnection::writeLoop);
    if (sent == 0) return;
    written_ += sent;
  }
  switch (afterWrite_) {
    case AfterWrite::ReadBody:
      if (parse()) readLoop();
      return;
    case AfterWrite::NextRequest:
      // An answer that promised keep-alive keeps it, even when a drain began
      // meanwhile: the client may already be sending its next request, which
      // is then answered with Connection: close. Requests answered back to
      // back go through the event loop now and then, to keep the stack shallow.
      if (nesting_ < kMaxNesting) {
        ++nesting_;
        beginRequest();
        --nesting_;
      } else {
        asio::post(thread_.context, [self = shared_from_this()] {
          if (self->phase_ != Phase::Closed) self->beginRequest();
        });
      }
      return;
    case AfterWrite::Close:
      return linger();
  }
}

// Half-close, then read and drop what the client still sends until it closes:
// closing with unread bytes would reset the connection and could destroy the
// answer before the client read it (a 413 sent before the body, say).
void HttpConnection::linger() {
  enterPhase(Phase::Linger, Clock::now() + kLingerTime);
  std::string().swap(out_);
  buffer_.clear();
  buffer_.shrink_to_fit();
  if (ssl_ != nullptr) {
    SSL_shutdown(ssl_);  // close_notify, if the socket takes it now
    ERR_clear_error();
  }
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  struct Drain {
    std::shared_ptr<HttpConnection> self;
    std::shared_ptr<std::array<char, 4096>> scratch;
    size_t total = 0;
    void operator()(const error_code& error, size_t bytes) {
      total += bytes;
      if (error || self->phase_ == Phase::Closed || total > kLingerBytes) return self->close();
      auto& socket = self->socket_;
      socket.async_read_some(asio::buffer(*scratch), std::move(*this));
    }
  };
  Drain{shared_from_this(), std::make_shared<std::array<char, 4096>>(), 0}(error_code{}, 0);
}

void HttpConnection::close() {
  if (phase_ == Phase::Closed) return;
  if (list_ != nullptr) list_->erase(position_);
  list_ = nullptr;
  phase_ = Phase::Closed;
  fallback_.reset();
  deadline_ = Clock::time_point::max();
  error_code ignored;
  socket_.close(ignored);
  timer_.cancel();
  charge_.release();
}

}  // namespace aiadmit
