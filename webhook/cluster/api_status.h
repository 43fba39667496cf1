// Reading the API server's answers the way client-go does: a metav1.Status
// for a refusal (its code, reason and causes), and an APIGroup discovery
// document for the versions a group serves.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/cluster/api_client.h"
#include "webhook/codec/json.h"

namespace aiadmit {

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string urlEncode(std::string_view text);

// "HTTP CODE REASON: MESSAGE" of a metav1.Status body, or the status alone;
// the transport error when there was no answer. Never object contents: a
// Status carries none.
std::string describeRefusal(const ApiResponse& response);

// 410 Gone or reason Expired: the resourceVersion asked for is compacted away.
bool isExpired(const ApiResponse& response);
// The API server has not seen the resourceVersion asked for yet (its watch
// cache lags, or etcd was restored to an earlier revision): a Status whose
// cause is ResourceVersionTooLarge or whose message says "Too large resource
// version", as client-go's isTooLargeResourceVersionError reads it.
bool isTooLargeResourceVersion(const ApiResponse& response);

// "namespace/name" (or "name") from an object's metadata, for the cache and
// the log: names only, never contents.
std::string objectKey(const JsonValue* object);

// The versions an APIGroup document (GET /apis/GROUP) lists as served, in
// its order; false with `error` when the body is not one.
bool servedVersions(const std::string& body, std::vector<std::string>& versions,
                    std::string* error);

}  // namespace aiadmit
