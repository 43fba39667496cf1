// Where a subcommand reads the cluster from: a snapshot file (--cluster) or
// the API with a kubeconfig (--kubeconfig), read-only, in the same text so
// that both are read by the same code.
#pragma once

#include <string>

#include "webhook/cluster/api_snapshot.h"

namespace aiadmit {

struct ClusterSource {
  std::string kubeconfig;
  std::string snapshot;
};

struct ClusterText {
  std::string text;
  std::string name;  // the snapshot's path, or "cluster"
  // The kubeconfig context's namespace, else "default".
  std::string defaultNamespace = "default";
};

// Reads the snapshot, or lists what `list` lists with the kubeconfig's
// current context; false (printed on stderr) when it cannot.
bool readClusterText(const ClusterSource& source, ListedSnapshot (*list)(ApiClient&),
                     ClusterText& out);

}  // namespace aiadmit
