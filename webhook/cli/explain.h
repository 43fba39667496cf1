// `aiadmit explain`: why GPU work waits while GPUs sit idle, from a live
// cluster (--kubeconfig) or a snapshot file (--cluster), as text or JSON.
#pragma once

#include <string>

#include "webhook/cli/cli.h"
#include "webhook/waiting/explain_output.h"

namespace aiadmit {

int explainCommand(const Arguments& args);

}  // namespace aiadmit
