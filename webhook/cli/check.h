// `aiadmit check`: the webhook's decisions offline, on manifest files, through
// the same engine as `serve` (mutate, then validate the mutated object, as the
// API server calls the two webhooks).
#pragma once

#include "webhook/cli/cli.h"

namespace aiadmit {

int checkCommand(const Arguments& args);

}  // namespace aiadmit
