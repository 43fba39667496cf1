#include "webhook/cluster/cluster_ref.h"

namespace aiadmit {

std::string ClusterRef::describe() const {
  std::string text(kindName(kind));
  text += ' ';
  if (!namespaceName.empty()) text += namespaceName + "/";
  return text + name;
}

}  // namespace aiadmit
