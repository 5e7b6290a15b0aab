#include "kvod_sha256.h"

#include <openssl/evp.h>

void kvod_sha256_hex(const void *bytes, size_t length, char *hex) {
    static const char digits[] = "0123456789abcdef";
    unsigned char digest[32];
    unsigned int size = sizeof(digest);
    EVP_Digest(bytes, length, digest, &size, EVP_sha256(), NULL);
    for (unsigned int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 0xF];
    }
    hex[64] = '\0';
}
