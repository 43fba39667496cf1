#pragma once

#include "mutators/mutator.h"

namespace aiadmit {

// The profile's run-to-completion limits for training and batch Jobs, and for
// the Jobs a CronJob creates (its jobTemplate): backoffLimit,
// activeDeadlineSeconds and ttlSecondsAfterFinished, each when absent.
//
// The API server sets a Job's backoffLimit to 6 before admission when the
// manifest leaves it out, so on a Job that value counts as absent (unless
// backoffLimitPerIndex is set, which makes backoffLimit mean something else):
// the row says so (JobSettingPointers::serverBackoffLimit). A CronJob's
// jobTemplate is not defaulted and is read as sent.
struct JobDefaultsMutator final : Mutator {
  JobDefaultsMutator();
};

}  // namespace aiadmit
