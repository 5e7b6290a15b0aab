// SHA-256 from OpenSSL's libcrypto, for kvod's HTTP tokens: kvod compares a
// token by its digest, and kvoctl's `token new` prints the digest to store.
#ifndef KVOD_SHA256_H
#define KVOD_SHA256_H

#include <stddef.h>

/// The SHA-256 of `length` bytes as 64 lower-case hex digits and a NUL in `hex`
/// (65 bytes), as sha256sum prints it.
void kvod_sha256_hex(const void *bytes, size_t length, char *hex);

#endif
