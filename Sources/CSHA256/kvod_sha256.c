#include "kvod_sha256.h"

#include <openssl/evp.h>
#include <pthread.h>

// Fetched once: EVP_sha256() makes every EVP_Digest look the algorithm up in
// OpenSSL 3's providers again, which cost more than the digest itself.
static EVP_MD *sha256;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static void fetch_sha256(void) { sha256 = EVP_MD_fetch(NULL, "SHA256", NULL); }

void kvod_sha256_hex(const void *bytes, size_t length, char *hex) {
    static const char digits[] = "0123456789abcdef";
    unsigned char digest[32];
    unsigned int size = sizeof(digest);
    pthread_once(&sha256_once, fetch_sha256);
    // A digest that failed is the empty string, which matches no line of a tokens file.
    if (!EVP_Digest(bytes, length, digest, &size, sha256 != NULL ? sha256 : EVP_sha256(), NULL) || size != 32) {
        hex[0] = '\0';
        return;
    }
    for (unsigned int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 0xF];
    }
    hex[64] = '\0';
}
