// `aiadmit workload-types suggest CRD_FILE...`: for each CustomResourceDefinition
// in the files, the WorkloadType document whose templates are the fields its
// schema shapes like a pod template, and the webhook rules an overlay adds
// so that the API server sends aiadmit the kind.
#pragma once

#include "webhook/cli/cli.h"

namespace aiadmit {

int workloadTypesCommand(const Arguments& args);

}  // namespace aiadmit
