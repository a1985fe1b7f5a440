#include "common/check_code.h"

#include <openssl/evp.h>

#include <cstdlib>

#include "common/canonical_json.h"
#include "common/log.h"

namespace clusterd {

std::string Sha256Hex(std::string_view bytes) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  // EVP_Digest only fails when OpenSSL cannot provide SHA-256 at all (a broken install);
  // no caller could recover, and an empty or wrong checkCode would silently drop ConfigMaps.
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &digest_length, EVP_sha256(), nullptr) != 1) {
    LogError("common", "OpenSSL SHA-256 digest failed");
    std::abort();
  }
  std::string hex(2 * digest_length, '\0');
  for (unsigned int i = 0; i < digest_length; ++i) {
    hex[2 * i] = kHexDigits[digest[i] >> 4];
    hex[2 * i + 1] = kHexDigits[digest[i] & 0xF];
  }
  return hex;
}

std::string CheckCode(const nlohmann::ordered_json& record) {
  return Sha256Hex(CanonicalJson(record));
}

}  // namespace clusterd
