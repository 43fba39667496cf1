// The serving transport: a fixed number of I/O threads, each running its own
// event loop over the connections it was handed; one listening socket
// (backlog SOMAXCONN, never shared with another process) whose accepted
// connections are dealt to the threads in turn.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "webhook/serving/http_connection.h"

namespace aiadmit {

class HttpTransport {
 public:
  // `tls` null: plain HTTP (the metrics listener).
  HttpTransport(const TransportLimits& limits, size_t ioThreads, HttpApplication& application,
                Metrics& metrics, boost::asio::ssl::context* tls);
  ~HttpTransport();

  // Binds and listens; false with `error` set (a port in use, say).
  bool listen(const std::string& host, int port, std::string* error);
  int port() const { return port_; }
  // Starts the I/O threads and accepting.
  void start();

  // From now on every answer ends its connection.
  void beginDrain();
  // Stops accepting and closes idle connections; requests in progress finish.
  void stopAccepting();
  size_t openConnections() const;
  // Stops the event loops and joins the threads.
  void stop();

 private:
  void accept();
  void onAccepted(const boost::system::error_code& error, boost::asio::ip::tcp::socket socket,
                  IoThread& thread);
  void makeRoom(std::shared_ptr<HttpConnection> connection, IoThread& home, size_t tried);
  size_t indexOf(const IoThread& thread) const;

  TransportShared shared_;
  std::vector<std::unique_ptr<IoThread>> threads_;
  std::vector<std::thread> runners_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::unique_ptr<boost::asio::steady_timer> acceptRetry_;
  size_t next_ = 0;
  int port_ = 0;
};

}  // namespace aiadmit
