// Standard base64 (RFC 4648, padded), through OpenSSL: a patch in an
// AdmissionResponse, a ConfigMap's binaryData, a kubeconfig's certificates.
#pragma once

#include <string>
#include <string_view>

namespace aiadmit {

// Appends `data` in base64 to `out`.
void appendBase64(std::string& out, std::string_view data);
std::string base64Encode(std::string_view data);
// False when `text` is not base64.
bool base64Decode(std::string_view text, std::string& out);

}  // namespace aiadmit
