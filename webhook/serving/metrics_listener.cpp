#include "webhook/serving/metrics_listener.h"

namespace aiadmit {

TransportLimits metricsListenerLimits(const TransportLimits& webhook) {
  TransportLimits limits = webhook;
  limits.maxConnections = kMetricsListenerConnections;
  // Only GETs: a request with a body is refused (413) before it is read.
  limits.maxBodyBytes = 0;
  limits.maxInflightBodyBytes = 0;
  return limits;
}

bool answerOperations(const HttpRequest& request, const Metrics& metrics,
                      const std::atomic<bool>& ready, HttpAnswer& answer) {
  if (request.method != "GET") return false;
  answer.contentType = "text/plain";
  if (request.path == "/healthz") {
    answer.body = "ok\n";
  } else if (request.path == "/readyz") {
    const bool isReady = ready.load();
    answer.status = isReady ? 200 : 503;
    answer.body = isReady ? "ok\n" : "shutting down\n";
  } else if (request.path == "/metrics") {
    answer.contentType = "text/plain; version=0.0.4";
    answer.body = metrics.render();
  } else {
    return false;
  }
  return true;
}

MetricsListener::MetricsListener(const TransportLimits& webhookLimits, Metrics& metrics,
                                 const std::atomic<bool>& ready)
    : endpoints_(metrics, ready),
      transport_(metricsListenerLimits(webhookLimits), 1, endpoints_, metrics, nullptr) {}

bool MetricsListener::listen(const std::string& host, int port, std::string* error) {
  return transport_.listen(host, port, error);
}

void MetricsListener::Endpoints::handle(const HttpRequest& request, HttpAnswer& answer) {
  if (answerOperations(request, metrics_, ready_, answer)) return;
  const bool known =
      request.path == "/metrics" || request.path == "/healthz" || request.path == "/readyz";
  if (known) {
    answer.allow = "GET";
    return refuse(request.path, 405, std::string(request.method) + " is not allowed; GET it",
                  answer);
  }
  refuse(request.path, 404, "not found; this port serves GET /metrics, /healthz and /readyz",
         answer);
}

void MetricsListener::Endpoints::refuse(std::string_view, int status, const std::string& message,
                                        HttpAnswer& answer) {
  answer.status = status;
  answer.contentType = "text/plain";
  answer.body = message + "\n";
}

}  // namespace aiadmit
