/* SPDX-License-Identifier: MIT */
/* The tls transport's private ctrl operations (namespace "tls"): what was
 * negotiated on a connection.  C99, like every plugin_api header. */
#ifndef TWINWIRE_TLS_H
#define TWINWIRE_TLS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ctrl(transport, conn, "tls", op, data, len). */
enum tw_tls_ctrl_op {
    /** data: struct tw_tls_session * (its size set); the connection's
     *  session once TW_EV_CONNECTED was reported (-ENOTCONN before). */
    TW_TLS_CTRL_SESSION = 1
};

/** A connection's session.  Filled up to `size`; texts NUL-terminated. */
struct tw_tls_session {
    uint32_t size;          /**< set by the caller: sizeof(struct tw_tls_session) */
    uint32_t version;       /**< 2: up to kernel_tls */
    uint32_t resumed;       /**< 1 when the handshake resumed an earlier session */
    int32_t verify_result;  /**< OpenSSL's X509_V_* result of checking the peer (0: ok or not checked) */
    char protocol[16];      /**< "TLSv1.3" */
    char cipher[64];        /**< "TLS_AES_256_GCM_SHA384" */
    char peer_subject[256]; /**< the peer certificate's subject, "" when it sent none */
    /* version 2 */
    uint32_t kernel_tls; /**< TW_TLS_KTLS_* bits: which side of the session the kernel runs (tls.ktls) */
};

/** tw_tls_session.kernel_tls: the kernel seals this end's records (kTLS send)... */
#define TW_TLS_KTLS_SEND 1u
/** ...and opens the peer's (kTLS receive). */
#define TW_TLS_KTLS_RECEIVE 2u

#ifdef __cplusplus
}
#endif

#endif
