#ifndef HOMEGATE_CLIBCRYPTO_SHIM_H
#define HOMEGATE_CLIBCRYPTO_SHIM_H
// libcrypto's arbitrary-precision integers (OpenSSL 3, Debian's libssl-dev).
#include <openssl/bn.h>
#endif
