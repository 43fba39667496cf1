// GET /metrics, /healthz and /readyz over plain HTTP on a port of their own
// (serve --metrics-listen): what Prometheus scrapes without the webhook's CA
// and off the port the API server calls. The same event-driven transport as
// the webhook's, on an event loop of its own, bounded tighter: a few
// connections, no request body, the webhook's header limits and deadlines.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "webhook/serving/http_transport.h"
#include "webhook/serving/metrics.h"

namespace aiadmit {

// Connections the metrics listener keeps open at most: Prometheus replicas
// and a person with curl, never the API server.
inline constexpr size_t kMetricsListenerConnections = 64;

// The webhook's limits as the metrics listener applies them.
TransportLimits metricsListenerLimits(const TransportLimits& webhook);

// Answers GET /healthz, /readyz and /metrics, on either listener; false for
// any other request, which the caller answers.
bool answerOperations(const HttpRequest& request, const Metrics& metrics,
                      const std::atomic<bool>& ready, HttpAnswer& answer);

class MetricsListener {
 public:
  // `metrics` is rendered and also counts this listener's connections and
  // limits; `ready` is what /readyz answers. Both outlive the listener.
  MetricsListener(const TransportLimits& webhookLimits, Metrics& metrics,
                  const std::atomic<bool>& ready);

  // Binds and listens; false with `error` set (a port in use, say).
  bool listen(const std::string& host, int port, std::string* error);
  int port() const { return transport_.port(); }
  void start() { transport_.start(); }
  void stop() { transport_.stop(); }

 private:
  class Endpoints final : public HttpApplication {
   public:
    Endpoints(const Metrics& metrics, const std::atomic<bool>& ready)
        : metrics_(metrics), ready_(ready) {}
    void handle(const HttpRequest& request, HttpAnswer& answer) override;
    void refuse(std::string_view path, int status, const std::string& message,
                HttpAnswer& answer) override;

   private:
    const Metrics& metrics_;
    const std::atomic<bool>& ready_;
  };

  Endpoints endpoints_;
  HttpTransport transport_;
};

}  // namespace aiadmit
