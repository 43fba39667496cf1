// `aiadmit explain`: why GPU work waits while GPUs sit idle, from a live
// cluster (--kubeconfig) or a snapshot file (--cluster), as text or JSON.
#pragma once

#include <string>

#include "webhook/cli/cli.h"
#include "webhook/kube/waiting.h"

namespace aiadmit {

int explainCommand(const Arguments& args);

// The report as `-o json` prints it: {"waiting": [...], "idle": [...]}.
std::string explainJson(const WaitingReport& report);
// The report as people read it; `now` (RFC 3339, UTC) is what waits are
// measured to.
std::string explainText(const WaitingReport& report, const std::string& now);

}  // namespace aiadmit
