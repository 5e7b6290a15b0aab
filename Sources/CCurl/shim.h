#ifndef KVOD_CCURL_SHIM_H
#define KVOD_CCURL_SHIM_H
// The one place KVOEtcd includes libcurl. curl_easy_setopt, curl_multi_setopt
// and curl_easy_getinfo are variadic, which Swift cannot call: each typed
// helper below passes one kind of argument.
#include <curl/curl.h>
#include <stdint.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

// MARK: - Easy handles

static inline CURLcode kvod_curl_easy_set_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode kvod_curl_easy_set_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode kvod_curl_easy_set_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode kvod_curl_easy_set_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}

/// CURLOPT_SOCKOPTFUNCTION setting TCP_KEEPCNT, which libcurl 7.88 has no
/// option for, to the count passed as its data.
static inline int kvod_curl_set_keepalive_count(void *count, curl_socket_t fd, curlsocktype purpose) {
    (void)purpose;
    int probes = (int)(intptr_t)count;
    return setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) == 0 ? CURL_SOCKOPT_OK : CURL_SOCKOPT_ERROR;
}

/// TCP keepalive on the transfer's connection: the first probe after
/// `idle_seconds` of silence, then one every `interval_seconds`; `probes`
/// unanswered end the connection.
static inline CURLcode kvod_curl_easy_set_keepalive(CURL *easy, long idle_seconds, long interval_seconds, int probes) {
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_TCP_KEEPIDLE, idle_seconds);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_TCP_KEEPINTVL, interval_seconds);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, kvod_curl_set_keepalive_count);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_SOCKOPTDATA, (void *)(intptr_t)probes);
    return rc;
}

/// The signature of CURLOPT_WRITEFUNCTION.
typedef size_t (*kvod_curl_write_callback)(char *bytes, size_t size, size_t count, void *userdata);
static inline CURLcode kvod_curl_easy_set_write_function(CURL *easy, kvod_curl_write_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
}

/// The HTTP status of a finished transfer, or 0 if none was received.
static inline long kvod_curl_easy_response_code(CURL *easy) {
    long code = 0;
    if (curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}

// MARK: - Multi handles

/// The signatures of CURLMOPT_SOCKETFUNCTION and CURLMOPT_TIMERFUNCTION.
typedef int (*kvod_curl_socket_callback)(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp);
typedef int (*kvod_curl_timer_callback)(CURLM *multi, long timeout_ms, void *userp);

static inline CURLMcode kvod_curl_multi_set_socket_function(CURLM *multi, kvod_curl_socket_callback callback,
                                                            void *userp) {
    CURLMcode rc = curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
    return rc != CURLM_OK ? rc : curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, userp);
}
static inline CURLMcode kvod_curl_multi_set_timer_function(CURLM *multi, kvod_curl_timer_callback callback,
                                                           void *userp) {
    CURLMcode rc = curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
    return rc != CURLM_OK ? rc : curl_multi_setopt(multi, CURLMOPT_TIMERDATA, userp);
}

/// The result of a CURLMSG_DONE message (a member of an anonymous union).
static inline CURLcode kvod_curl_msg_result(const CURLMsg *message) { return message->data.result; }

#endif
