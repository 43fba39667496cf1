#include "webhook/serving/http_transport.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>

namespace aiadmit {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

HttpTransport::HttpTransport(const TransportLimits& limits, size_t ioThreads,
                             HttpApplication& application, Metrics& metrics,
                             asio::ssl::context* tls) {
  shared_.limits = limits;
  shared_.application = &application;
  shared_.metrics = &metrics;
  shared_.tls = tls;
  for (size_t i = 0; i < std::max<size_t>(ioThreads, 1); ++i) {
    threads_.push_back(std::make_unique<IoThread>());
  }
}

HttpTransport::~HttpTransport() {
  stop();
}

bool HttpTransport::listen(const std::string& host, int port, std::string* error) {
  error_code ec;
  tcp::endpoint endpoint;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, static_cast<unsigned short>(port));
  } else {
    // A name ("localhost"): its first address.
    tcp::resolver resolver(threads_.front()->context);
    const auto found = resolver.resolve(host, std::to_string(port), ec);
    if (ec || found.empty()) {
      *error = "cannot resolve " + host + (ec ? ": " + ec.message() : std::string());
      return false;
    }
    endpoint = found.begin()->endpoint();
  }
  acceptor_ = std::make_unique<tcp::acceptor>(threads_.front()->context);
  acceptRetry_ = std::make_unique<asio::steady_timer>(threads_.front()->context);
  // SO_REUSEADDR only lets a restart bind past connections in TIME_WAIT;
  // without SO_REUSEPORT a second server on the same port is refused.
  acceptor_->open(endpoint.protocol(), ec);
  // [::] serves IPv4 too (as ::ffff:a.b.c.d), whatever net.ipv6.bindv6only says.
  if (!ec && endpoint.address().is_v6()) acceptor_->set_option(boost::asio::ip::v6_only(false), ec);
  if (!ec) acceptor_->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_->bind(endpoint, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    *error = ec.message();
    acceptor_.reset();
    return false;
  }
  port_ = acceptor_->local_endpoint().port();
  return true;
}

void HttpTransport::start() {
  accept();
  for (auto& thread : threads_) {
    runners_.emplace_back([context = &thread->context] {
      auto work = asio::make_work_guard(*context);
      context->run();
    });
  }
}

void HttpTransport::accept() {
  IoThread& thread = *threads_[next_++ % threads_.size()];
  acceptor_->async_accept(thread.context,
                          [this, &thread](const error_code& error, tcp::socket socket) {
                            onAccepted(error, std::move(socket), thread);
                          });
}

void HttpTransport::onAccepted(const error_code& error, tcp::socket socket, IoThread& thread) {
  if (error == asio::error::operation_aborted || !acceptor_ || !acceptor_->is_open()) return;
  if (error) {
    // Out of descriptors or memory: wait a little instead of spinning on the error.
    shared_.metrics->recordAcceptError();
    acceptRetry_->expires_after(std::chrono::milliseconds(50));
    acceptRetry_->async_wait([this](const error_code& waited) {
      if (!waited) accept();
    });
    return;
  }
  const size_t open = shared_.openConnections.fetch_add(1, std::memory_order_relaxed) + 1;
  shared_.metrics->recordConnectionOpened();
  auto connection = std::make_shared<HttpConnection>(shared_, thread, std::move(socket));
  if (open <= shared_.limits.maxConnections) {
    asio::post(thread.context, [connection] { connection->start(); });
  } else {
    makeRoom(std::move(connection), thread, 0);
  }
  accept();
}

// Past the cap the newcomer is served and the connection idle the longest
// goes: looked for on the newcomer's thread, then on each other in turn.
// Only when every connection is busy is the newcomer refused.
void HttpTransport::makeRoom(std::shared_ptr<HttpConnection> connection, IoThread& home,
                             size_t tried) {
  IoThread& candidate = *threads_[(indexOf(home) + tried) % threads_.size()];
  asio::post(candidate.context, [this, connection, &home, &candidate, tried]() mutable {
    const bool made = candidate.shedOne();
    if (made || tried + 1 >= threads_.size()) {
      asio::post(home.context, [connection, made] {
        if (made) {
          connection->start();
        } else {
          connection->shed();
        }
      });
      return;
    }
    makeRoom(std::move(connection), home, tried + 1);
  });
}

size_t HttpTransport::indexOf(const IoThread& thread) const {
  for (size_t i = 0; i < threads_.size(); ++i) {
    if (threads_[i].get() == &thread) return i;
  }
  return 0;
}

void HttpTransport::beginDrain() {
  shared_.draining.store(true);
}

void HttpTransport::stopAccepting() {
  asio::post(threads_.front()->context, [this] {
    error_code ignored;
    if (acceptor_) acceptor_->close(ignored);
    if (acceptRetry_) acceptRetry_->cancel();
  });
  for (auto& thread : threads_) {
    asio::post(thread->context, [thread = thread.get()] { thread->endIdleConnections(); });
  }
}

size_t HttpTransport::openConnections() const {
  return shared_.openConnections.load();
}

void HttpTransport::stop() {
  for (auto& thread : threads_) thread->context.stop();
  for (auto& runner : runners_) {
    if (runner.joinable()) runner.join();
  }
  runners_.clear();
}

}  // namespace aiadmit
