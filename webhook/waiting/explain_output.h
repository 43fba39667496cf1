// explain's two outputs: JSON for machines, text for people.
#pragma once

#include <string>

#include "webhook/waiting/waiting.h"

namespace aiadmit {

// The report as `-o json` prints it: {"waiting": [...], "idle": [...]}.
std::string explainJson(const WaitingReport& report);
// The report as people read it; `now` (RFC 3339, UTC) is what waits are
// measured to.
std::string explainText(const WaitingReport& report, const std::string& now);

}  // namespace aiadmit
