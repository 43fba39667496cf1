#include "webhook/codec/base64.h"

#include <openssl/evp.h>

namespace aiadmit {

void appendBase64(std::string& out, std::string_view data) {
  const size_t start = out.size();
  const size_t size = (data.size() + 2) / 3 * 4;
  out.resize(start + size + 1);  // EVP_EncodeBlock ends what it writes with a NUL
  EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + start),
                  reinterpret_cast<const unsigned char*>(data.data()),
                  static_cast<int>(data.size()));
  out.resize(start + size);
}

std::string base64Encode(std::string_view data) {
  std::string out;
  appendBase64(out, data);
  return out;
}

bool base64Decode(std::string_view text, std::string& out) {
  EVP_ENCODE_CTX* context = EVP_ENCODE_CTX_new();
  if (context == nullptr) return false;
  EVP_DecodeInit(context);
  out.resize(text.size());
  int written = 0;
  int finalBytes = 0;
  const bool ok = EVP_DecodeUpdate(context, reinterpret_cast<unsigned char*>(out.data()), &written,
                                   reinterpret_cast<const unsigned char*>(text.data()),
                                   static_cast<int>(text.size())) >= 0 &&
                  EVP_DecodeFinal(context, reinterpret_cast<unsigned char*>(out.data()) + written,
                                  &finalBytes) == 1;
  EVP_ENCODE_CTX_free(context);
  out.resize(ok ? static_cast<size_t>(written + finalBytes) : 0);
  return ok;
}

}  // namespace aiadmit
