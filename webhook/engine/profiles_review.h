// The check of aiadmit's own profiles ConfigMap before the API server stores
// it (POST /validate-profiles, called by the webhook
// profiles.validate.aiadmit.dev of manifests/base/webhooks.yaml for that
// ConfigMap alone). The running replicas refuse a profile set that does not
// load and keep their last good one, but a replica that starts on it exits:
// refusing it at apply keeps it from ever being stored.
//
// The ConfigMap's profile files (its data and binaryData keys that
// isProfileFileName accepts) are loaded as `serve` loads its profiles
// directory and `aiadmit profiles lint` checks it (loadProfileFiles). A set
// that does not load is denied (HTTP 200, allowed: false) with each error as
// KEY:LINE:COLUMN: FIELD: MESSAGE; a review that cannot be read is a 400. A
// DELETE, and an UPDATE that leaves the files as they were (labels, a
// finalizer's removal), are allowed whatever the ConfigMap holds. A set whose
// annotation aiadmit.dev/release names a later release than this replica's
// is admitted with a warning when it does not load: during an upgrade the old
// replicas answer for the new release's ConfigMap, and a field they do not
// know may be the new release's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit {

// Never throws.
ReviewAnswer answerProfilesReview(std::string_view body);

// The denial's message for these load errors: how many, what refusing them
// spares, and the first of them as `profiles lint` prints them.
std::string profilesDenialMessage(const std::vector<ProfileError>& errors);

}  // namespace aiadmit
