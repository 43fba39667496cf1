#include "webhook/cli/cluster_source.h"

#include <chrono>
#include <iostream>

#include "webhook/cli/cli.h"
#include "webhook/cluster/api_config.h"

namespace aiadmit {

bool readClusterText(const ClusterSource& source, ListedSnapshot (*list)(ApiClient&),
                     ClusterText& out) {
  if (!source.snapshot.empty()) {
    out.name = source.snapshot;
    if (readAll(source.snapshot, out.text)) return true;
    std::cerr << "aiadmit: " << source.snapshot << ": cannot be read\n";
    return false;
  }
  out.name = "cluster";
  ApiServerConfig config;
  std::string error;
  if (!kubeconfigConfig(source.kubeconfig, "", config, error)) {
    std::cerr << "aiadmit: " << error << "\n";
    return false;
  }
  if (!config.namespaceName.empty()) out.defaultNamespace = config.namespaceName;
  ApiClientOptions options;
  options.requestTimeout = std::chrono::seconds(30);
  options.userAgent = "aiadmit-cli";
  ApiClient client(config, options);
  if (!client.ready(&error)) {
    std::cerr << "aiadmit: " << error << "\n";
    return false;
  }
  ListedSnapshot listed = list(client);
  if (!listed.error.empty()) {
    std::cerr << "aiadmit: " << config.describe() << ": " << listed.error << "\n";
    return false;
  }
  for (const std::string& resource : listed.forbidden) {
    std::cerr << "aiadmit: " << config.describe() << ": not allowed to list " << resource
              << ": read without them\n";
  }
  out.text = std::move(listed.text);
  return true;
}

}  // namespace aiadmit
