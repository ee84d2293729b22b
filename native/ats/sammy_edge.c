/*
 * sammy_edge: Sammy's application-informed pacing (thesis 2.3.2) at an Apache
 * Traffic Server edge. The thin adapter between Traffic Server's remap plugin API
 * and the C core it shares with the nginx module (../core: cmcd.c, rate.c,
 * options.c, socket.c, telemetry.c).
 *
 * A remap plugin, not a global one: its options belong to one delivery service
 * (one remap rule, one origin), it runs once per transaction right after the
 * request header is read and before the cache lookup (so cache hits and misses are
 * paced alike), and the remap step is where the CMCD query argument is taken out
 * of the URL, so `?CMCD=rtp%3D...` neither splits the cache into one object per
 * rate nor reaches the origin.
 *
 * Per transaction:
 *  1. remap: read rtp (header form wins over ?CMCD=), decide the rate as the
 *     other servers do (the spiral guard, then clamping: rate.h), and set
 *     SO_MAX_PACING_RATE on the client socket before any response byte is written;
 *     a request without rtp on a socket a previous response capped gets the cap
 *     removed. TCP_INFO is read for the retransmit and byte counts.
 *  2. send response header: Server-Timing: pace;dur=<kbps>;desc="<outcome>" (the
 *     origin's own pace metric, cached with the object, is replaced).
 *  3. transaction close: Traffic Server has handed the last byte to the kernel, but
 *     the socket's send buffer may still hold megabytes. The cap stays until
 *     TCP_INFO's notsent_bytes is 0 (polled on this thread, spaced by the expected
 *     remaining send time), then it is removed and the telemetry line written. The
 *     next request on the connection, or its close, ends the wait early.
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ts/ts.h>
/* remap.h uses ts.h's types */
#include <ts/remap.h>

#include "cmcd.h"
#include "options.h"
#include "rate.h"
#include "socket.h"
#include "telemetry.h"

#define PLUGIN_NAME "sammy_edge"
/* The plugin log: <log dir>/sammy_edge.log, one JSON line per response. */
#define TELEMETRY_LOG_NAME "sammy_edge"
#define PATH_LOGGED_MAX_BYTES 1024
/* The options a remap rule takes: the edge drains a tail before lifting the cap, it cannot hold a byte back. */
#define EDGE_OPTIONS (SAMMY_OPT_ALL & ~SAMMY_OPT_TAIL_HOLD)

typedef struct session session;

typedef struct {
  session *ssn;
  char path[PATH_LOGGED_MAX_BYTES];
  size_t path_length;
  sammy_rate_decision rate;
  char problem[256];
  sammy_tcp_info start;
  bool have_start;
  sammy_tcp_info last;
  bool have_last;
  int64_t begin_ns;
  int64_t progress_ns;
  uint32_t last_notsent_bytes;
  int status;
  int64_t bytes;
  bool aborted;
  const char *cache_lookup;
  char remote_address[INET6_ADDRSTRLEN];
  int remote_port;
} response;

/* Per client connection; its continuation's mutex guards it (hooks and the drain timer may run on different threads). */
struct session {
  TSCont timer_cont;
  TSAction timer;
  int fd;
  /* The client, to tell that `fd` is still its connection when the drain timer fires. */
  struct sockaddr_storage peer;
  /* A cap is (or may still be) set on the socket. */
  bool capped;
  /* The response whose tail is still leaving the socket. */
  response *draining;
};

static int ssn_arg = -1;
static int txn_arg = -1;
static TSCont txn_cont;
static TSCont ssn_cont;
static TSTextLogObject telemetry_log;

static struct {
  int paced, unpaced, disabled, unavailable, cmcd_ignored, guard_raised, setsockopt_errors, tcp_info_errors;
} stats;

static int64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int stat_id(const char *name) {
  int id;
  if (TSStatFindName(name, &id) == TS_SUCCESS) return id;
  return TSStatCreate(name, TS_RECORDDATATYPE_INT, TS_STAT_NON_PERSISTENT, TS_STAT_SYNC_COUNT);
}

static void count(int stat) {
  if (stat >= 0) TSStatIntIncrement(stat, 1);
}

/* ---------------------------------------------------------------- telemetry and the end of a response */

static void write_line(response *r) {
  if (telemetry_log == NULL) return;
  sammy_response_record record = {
    .time_ms           = now_ns(CLOCK_REALTIME) / 1000000,
    .path              = r->path,
    .path_length       = r->path_length,
    .status            = r->status,
    .bytes             = r->bytes,
    .duration_ms       = r->begin_ns > 0 ? (double)(now_ns(CLOCK_MONOTONIC) - r->begin_ns) / 1e6 : 0,
    .rate              = &r->rate,
    .start             = r->have_start ? &r->start : NULL,
    .end               = r->have_last ? &r->last : NULL,
    .remote_address    = r->remote_address,
    .remote_port       = r->remote_port,
    .aborted           = r->aborted,
    .cmcd_problem      = r->problem,
    /* A transaction without a lookup still has the field, as null. */
    .cache_lookup      = r->cache_lookup != NULL ? r->cache_lookup : "",
    .server            = "ats-edge",
  };
  char line[4096];
  sammy_format_telemetry(&record, line, sizeof line);
  TSTextLogObjectWrite(telemetry_log, "%s", line);
  /* Hand the line to the logging thread now, not when the buffer fills: readers wait for each response's line. */
  TSTextLogObjectFlush(telemetry_log);
}

/* Whether the session's descriptor is still its client's connection (it is forgotten once it is not). */
static bool socket_alive(session *s) {
  if (s->fd >= 0 && !sammy_same_peer(s->fd, (const struct sockaddr *)&s->peer)) s->fd = -1;
  return s->fd >= 0;
}

static void remove_cap(session *s) {
  if (!s->capped || !socket_alive(s)) return;
  int err = sammy_set_max_pacing_rate(s->fd, SAMMY_UNLIMITED_PACING_RATE);
  if (err != 0) {
    count(stats.setsockopt_errors);
    TSDebug(PLUGIN_NAME, "removing the cap failed: %s", strerror(err));
  }
  s->capped = false;
}

static bool read_last(session *s, response *r);

/*
 * Ends the draining response: its line is written (with TCP_INFO read now when
 * `read_now`), and `release` removes the cap (not when the next response sets its own).
 */
static void finish_draining(session *s, bool read_now, bool release) {
  response *r = s->draining;
  if (r == NULL) return;
  if (s->timer != NULL) {
    TSActionCancel(s->timer);
    s->timer = NULL;
  }
  if (read_now) read_last(s, r);
  write_line(r);
  if (release) remove_cap(s);
  s->draining = NULL;
  TSfree(r);
}

static bool read_last(session *s, response *r) {
  if (!socket_alive(s)) return false;
  sammy_tcp_info info;
  if (!sammy_read_tcp_info(s->fd, &info)) {
    count(stats.tcp_info_errors);
    return false;
  }
  r->last = info;
  r->have_last = true;
  return true;
}

/* Polls until the tail has left; scheduled on the session's thread, under its mutex. */
static void wait_for_drain(session *s) {
  response *r = s->draining;
  int64_t now = now_ns(CLOCK_MONOTONIC);
  if (!socket_alive(s)) {
    /* The connection is gone (its close ends the session next): touch nothing on this descriptor. */
    finish_draining(s, false, false);
    return;
  }
  if (!read_last(s, r) || r->last.notsent_bytes == 0 || now - r->progress_ns > SAMMY_MAX_DRAIN_STALL_MS * 1000000LL) {
    finish_draining(s, false, true);
    return;
  }
  if (r->last.notsent_bytes < r->last_notsent_bytes) r->progress_ns = now;
  r->last_notsent_bytes = r->last.notsent_bytes;
  uint64_t wait_ms = sammy_drain_poll_ms(r->last.notsent_bytes, r->rate.rate_bytes_per_s, r->last.delivery_rate_bytes_per_s);
  s->timer = TSContScheduleOnThread(s->timer_cont, (TSHRTime)wait_ms, TSEventThreadSelf());
}

static int on_timer(TSCont contp, TSEvent event, void *edata) {
  session *s = TSContDataGet(contp);
  s->timer = NULL;
  if (s->draining != NULL) wait_for_drain(s);
  return 0;
}

/* ---------------------------------------------------------------- sessions */

static session *session_of(TSHttpTxn txnp, int fd) {
  TSHttpSsn ssnp = TSHttpTxnSsnGet(txnp);
  session *s = TSUserArgGet(ssnp, ssn_arg);
  if (s != NULL) return s;
  s = TSmalloc(sizeof *s);
  *s = (session){.timer_cont = TSContCreate(on_timer, TSMutexCreate()), .timer = NULL, .fd = fd, .capped = false};
  const struct sockaddr *peer = TSHttpTxnClientAddrGet(txnp);
  if (peer != NULL) memcpy(&s->peer, peer, peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
  TSContDataSet(s->timer_cont, s);
  TSUserArgSet(ssnp, ssn_arg, s);
  TSHttpSsnHookAdd(ssnp, TS_HTTP_SSN_CLOSE_HOOK, ssn_cont);
  return s;
}

static int on_session_close(TSCont contp, TSEvent event, void *edata) {
  TSHttpSsn ssnp = edata;
  session *s = TSUserArgGet(ssnp, ssn_arg);
  if (s != NULL) {
    TSMutex mutex = TSContMutexGet(s->timer_cont);
    TSMutexLock(mutex);
    /* The connection is closing: the kernel sends what is left at the socket's cap; the line has the last TCP_INFO read. */
    finish_draining(s, false, false);
    TSMutexUnlock(mutex);
    TSContDestroy(s->timer_cont);
    TSfree(s);
    TSUserArgSet(ssnp, ssn_arg, NULL);
  }
  TSHttpSsnReenable(ssnp, TS_EVENT_HTTP_CONTINUE);
  return 0;
}

/* ---------------------------------------------------------------- transactions */

static void add_server_timing(TSHttpTxn txnp, const response *r) {
  TSMBuffer bufp;
  TSMLoc hdr;
  if (TSHttpTxnClientRespGet(txnp, &bufp, &hdr) != TS_SUCCESS) return;
  static const char name[] = "Server-Timing";
  TSMLoc field;
  /* The origin's own metric (e.g. desc="disabled" from a --pacing off server) is cached with the object: replace it. */
  while ((field = TSMimeHdrFieldFind(bufp, hdr, name, sizeof name - 1)) != TS_NULL_MLOC) {
    TSMimeHdrFieldDestroy(bufp, hdr, field);
    TSHandleMLocRelease(bufp, hdr, field);
  }
  char value[96];
  int n = snprintf(value, sizeof value, "pace;dur=%lld;desc=\"%s\"", (long long)r->rate.applied_rate_kbps,
                   sammy_pacing_name(r->rate.outcome));
  if (TSMimeHdrFieldCreateNamed(bufp, hdr, name, sizeof name - 1, &field) == TS_SUCCESS) {
    TSMimeHdrFieldValueStringInsert(bufp, hdr, field, -1, value, n);
    TSMimeHdrFieldAppend(bufp, hdr, field);
    TSHandleMLocRelease(bufp, hdr, field);
  }
  static const char tao[] = "Timing-Allow-Origin";
  if (TSMimeHdrFieldFind(bufp, hdr, tao, sizeof tao - 1) == TS_NULL_MLOC &&
      TSMimeHdrFieldCreateNamed(bufp, hdr, tao, sizeof tao - 1, &field) == TS_SUCCESS) {
    TSMimeHdrFieldValueStringInsert(bufp, hdr, field, -1, "*", 1);
    TSMimeHdrFieldAppend(bufp, hdr, field);
    TSHandleMLocRelease(bufp, hdr, field);
  }
  TSHandleMLocRelease(bufp, TS_NULL_MLOC, hdr);
}

static const char *cache_lookup_name(TSHttpTxn txnp) {
  int status;
  if (TSHttpTxnCacheLookupStatusGet(txnp, &status) != TS_SUCCESS) return NULL;
  switch (status) {
  case TS_CACHE_LOOKUP_MISS:
    return "miss";
  case TS_CACHE_LOOKUP_HIT_STALE:
    return "hit-stale";
  case TS_CACHE_LOOKUP_HIT_FRESH:
    return "hit-fresh";
  case TS_CACHE_LOOKUP_SKIPPED:
    return "skipped";
  default:
    return NULL;
  }
}

static void on_transaction_close(TSHttpTxn txnp, response *r) {
  TSMBuffer bufp;
  TSMLoc hdr;
  if (TSHttpTxnClientRespGet(txnp, &bufp, &hdr) == TS_SUCCESS) {
    r->status = TSHttpHdrStatusGet(bufp, hdr);
    TSHandleMLocRelease(bufp, TS_NULL_MLOC, hdr);
  }
  r->bytes = TSHttpTxnClientRespBodyBytesGet(txnp);
  if (r->bytes < 0) r->bytes = 0;
  r->aborted = TSHttpTxnAborted(txnp) == TS_SUCCESS;
  r->cache_lookup = cache_lookup_name(txnp);
  session *s = r->ssn;
  if (s == NULL) {
    write_line(r);
    TSfree(r);
    return;
  }
  TSMutex mutex = TSContMutexGet(s->timer_cont);
  TSMutexLock(mutex);
  finish_draining(s, true, false);
  s->draining = r;
  r->progress_ns = now_ns(CLOCK_MONOTONIC);
  r->last_notsent_bytes = UINT32_MAX;
  if (r->aborted) {
    finish_draining(s, true, true);
  } else {
    wait_for_drain(s);
  }
  TSMutexUnlock(mutex);
}

static int on_transaction(TSCont contp, TSEvent event, void *edata) {
  TSHttpTxn txnp = edata;
  response *r = TSUserArgGet(txnp, txn_arg);
  if (r != NULL) {
    if (event == TS_EVENT_HTTP_SEND_RESPONSE_HDR) {
      r->begin_ns = now_ns(CLOCK_MONOTONIC);
      add_server_timing(txnp, r);
    } else if (event == TS_EVENT_HTTP_TXN_CLOSE) {
      TSUserArgSet(txnp, txn_arg, NULL);
      on_transaction_close(txnp, r);
    }
  }
  TSHttpTxnReenable(txnp, TS_EVENT_HTTP_CONTINUE);
  return 0;
}

/* ---------------------------------------------------------------- reading the request */

/* One CMCD header field's value, repeated fields joined with ", " (as Node joins them), into `buf`. */
static size_t header_value(TSMBuffer bufp, TSMLoc hdr, const char *name, char *buf, size_t cap, bool *present) {
  size_t length = 0;
  *present = false;
  TSMLoc field = TSMimeHdrFieldFind(bufp, hdr, name, (int)strlen(name));
  while (field != TS_NULL_MLOC) {
    int n = 0;
    const char *value = TSMimeHdrFieldValueStringGet(bufp, hdr, field, -1, &n);
    if (*present && length + 2 <= cap) {
      memcpy(buf + length, ", ", 2);
      length += 2;
    }
    *present = true;
    if (value != NULL && n > 0) {
      size_t take = (size_t)n <= cap - length ? (size_t)n : cap - length;
      memcpy(buf + length, value, take);
      length += take;
    }
    TSMLoc next = TSMimeHdrFieldNextDup(bufp, hdr, field);
    TSHandleMLocRelease(bufp, hdr, field);
    field = next;
  }
  return length;
}

static sammy_rate_request read_rate(const sammy_options *o, TSRemapRequestInfo *rri, const char *query,
                                    int query_length) {
  /* Anything over max_cmcd_bytes is ignored whole; one byte more than that is enough to know. */
  size_t cap = (size_t)o->max_cmcd_bytes + 1;
  char *buffers = TSmalloc(SAMMY_CMCD_HEADER_COUNT * cap);
  sammy_cmcd_input in = {.query = query, .query_length = query_length > 0 ? (size_t)query_length : 0,
                         .honour_query = o->honour_query, .max_bytes = (size_t)o->max_cmcd_bytes};
  for (size_t i = 0; i < SAMMY_CMCD_HEADER_COUNT; i++) {
    bool present;
    char *buf = buffers + i * cap;
    size_t n = header_value(rri->requestBufp, rri->requestHdrp, SAMMY_CMCD_HEADER_FIELDS[i], buf, cap, &present);
    in.header[i] = present ? buf : NULL;
    in.header_length[i] = n;
  }
  sammy_rate_request rate = sammy_read_rate_request(&in);
  TSfree(buffers);
  return rate;
}

/* Takes every CMCD argument out of the request URL: it is per-request data, not part of the object's name. */
static void strip_cmcd_from_url(TSRemapRequestInfo *rri, const char *query, int query_length) {
  if (query == NULL || query_length <= 0 || memmem(query, (size_t)query_length, "CMCD", 4) == NULL) return;
  char *rest = TSmalloc((size_t)query_length + 1);
  size_t n = sammy_strip_cmcd_query(query, (size_t)query_length, rest);
  if (n != (size_t)query_length) TSUrlHttpQuerySet(rri->requestBufp, rri->requestUrl, rest, (int)n);
  TSfree(rest);
}

static void remote_of(TSHttpTxn txnp, response *r) {
  const struct sockaddr *addr = TSHttpTxnClientAddrGet(txnp);
  if (addr == NULL) return;
  if (addr->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
    inet_ntop(AF_INET, &in->sin_addr, r->remote_address, sizeof r->remote_address);
    r->remote_port = ntohs(in->sin_port);
  } else if (addr->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
    inet_ntop(AF_INET6, &in6->sin6_addr, r->remote_address, sizeof r->remote_address);
    r->remote_port = ntohs(in6->sin6_port);
  }
}

/* The socket this transaction alone writes to, or -1 (an internal request, or HTTP/2 whose streams share one). */
static int own_socket(TSHttpTxn txnp) {
  int fd = -1;
  if (TSHttpTxnIsInternal(txnp)) return -1;
  if (TSHttpTxnClientProtocolStackContains(txnp, "h2") != NULL) return -1;
  if (TSHttpTxnClientFdGet(txnp, &fd) != TS_SUCCESS) return -1;
  return fd;
}

/* Sets this response's cap, or removes a cap an earlier response left, before any byte of it is written. */
static void apply_rate(session *s, int fd, response *r) {
  TSMutex mutex = TSContMutexGet(s->timer_cont);
  TSMutexLock(mutex);
  /* The transaction's own descriptor: the session's, unless the drain timer found it gone. */
  s->fd = fd;
  /* The previous response's tail is still leaving: this request ends its wait (its line is written now). */
  bool paced = r->rate.outcome == SAMMY_PACING_PACED;
  finish_draining(s, true, !paced);
  if (paced) {
    int err = sammy_set_max_pacing_rate(s->fd, r->rate.rate_bytes_per_s);
    if (err == 0) {
      s->capped = true;
    } else {
      count(stats.setsockopt_errors);
      TSError("[%s] setsockopt(SO_MAX_PACING_RATE) failed: %s; served unpaced", PLUGIN_NAME, strerror(err));
      sammy_rate_unavailable(&r->rate);
      remove_cap(s);
    }
  }
  TSMutexUnlock(mutex);
}

/* ---------------------------------------------------------------- the remap plugin interface */

TSReturnCode TSRemapInit(TSRemapInterface *api_info, char *errbuf, int errbuf_size) {
  if (api_info == NULL || api_info->tsremap_version < TSREMAP_VERSION) {
    snprintf(errbuf, (size_t)errbuf_size, "[%s] needs remap API version %d or later", PLUGIN_NAME, TSREMAP_VMAJOR);
    return TS_ERROR;
  }
  if (TSUserArgIndexReserve(TS_USER_ARGS_SSN, PLUGIN_NAME, "pacing state of a client connection", &ssn_arg) != TS_SUCCESS ||
      TSUserArgIndexReserve(TS_USER_ARGS_TXN, PLUGIN_NAME, "one response's pacing and telemetry", &txn_arg) != TS_SUCCESS) {
    snprintf(errbuf, (size_t)errbuf_size, "[%s] cannot reserve user arguments", PLUGIN_NAME);
    return TS_ERROR;
  }
  txn_cont = TSContCreate(on_transaction, NULL);
  ssn_cont = TSContCreate(on_session_close, NULL);
  if (TSTextLogObjectCreate(TELEMETRY_LOG_NAME, 0, &telemetry_log) != TS_SUCCESS) {
    telemetry_log = NULL;
    TSError("[%s] cannot create the log %s: no telemetry lines", PLUGIN_NAME, TELEMETRY_LOG_NAME);
  }
  stats.paced = stat_id("plugin.sammy_edge.responses_paced");
  stats.unpaced = stat_id("plugin.sammy_edge.responses_unpaced");
  stats.disabled = stat_id("plugin.sammy_edge.responses_disabled");
  stats.unavailable = stat_id("plugin.sammy_edge.responses_unavailable");
  stats.cmcd_ignored = stat_id("plugin.sammy_edge.cmcd_ignored");
  stats.guard_raised = stat_id("plugin.sammy_edge.spiral_guard_raised");
  stats.setsockopt_errors = stat_id("plugin.sammy_edge.setsockopt_errors");
  stats.tcp_info_errors = stat_id("plugin.sammy_edge.tcp_info_errors");
  return TS_SUCCESS;
}

TSReturnCode TSRemapNewInstance(int argc, char *argv[], void **ih, char *errbuf, int errbuf_size) {
  /* argv[0] and argv[1] are the rule's from and to URLs. */
  sammy_options *o = TSmalloc(sizeof *o);
  if (!sammy_parse_options(argc - 2, (const char *const *)argv + 2, EDGE_OPTIONS, o, errbuf, (size_t)errbuf_size)) {
    TSfree(o);
    return TS_ERROR;
  }
  *ih = o;
  return TS_SUCCESS;
}

void TSRemapDeleteInstance(void *ih) { TSfree(ih); }

TSRemapStatus TSRemapDoRemap(void *ih, TSHttpTxn txnp, TSRemapRequestInfo *rri) {
  const sammy_options *o = ih;
  response *r = TSmalloc(sizeof *r);
  memset(r, 0, sizeof *r);

  int path_length = 0;
  const char *path = TSUrlPathGet(rri->requestBufp, rri->requestUrl, &path_length);
  /* Traffic Server keeps the path without its leading '/'. */
  r->path[0] = '/';
  r->path_length = 1;
  if (path != NULL && path_length > 0) {
    size_t take = (size_t)path_length < sizeof r->path - 1 ? (size_t)path_length : sizeof r->path - 1;
    memcpy(r->path + 1, path, take);
    r->path_length += take;
  }
  int query_length = 0;
  const char *query = TSUrlHttpQueryGet(rri->requestBufp, rri->requestUrl, &query_length);

  sammy_rate_request rate = read_rate(o, rri, query, query_length);
  snprintf(r->problem, sizeof r->problem, "%s", rate.problem);
  if (rate.rtp_kbps == 0 && rate.problem[0] != '\0') {
    count(stats.cmcd_ignored);
    TSDebug(PLUGIN_NAME, "ignoring malformed CMCD: %s", rate.problem);
  }
  strip_cmcd_from_url(rri, query, query_length);
  remote_of(txnp, r);

  int fd = own_socket(txnp);
  /* Whether the response has a body is not known before the cache lookup: every response counts as one. */
  r->rate = sammy_decide_rate(&rate, o, (sammy_response_facts){.has_body = true, .own_socket = fd >= 0});
  if (fd >= 0) {
    session *s = session_of(txnp, fd);
    r->ssn = s;
    r->have_start = sammy_read_tcp_info(fd, &r->start);
    if (!r->have_start) count(stats.tcp_info_errors);
    apply_rate(s, fd, r);
  }
  switch (r->rate.outcome) {
  case SAMMY_PACING_PACED:
    count(stats.paced);
    break;
  case SAMMY_PACING_DISABLED:
    count(stats.disabled);
    break;
  case SAMMY_PACING_UNAVAILABLE:
    count(stats.unavailable);
    break;
  case SAMMY_PACING_UNPACED:
    count(stats.unpaced);
    break;
  }
  if (r->rate.guard == SAMMY_GUARD_RAISED) count(stats.guard_raised);

  TSUserArgSet(txnp, txn_arg, r);
  TSHttpTxnHookAdd(txnp, TS_HTTP_SEND_RESPONSE_HDR_HOOK, txn_cont);
  TSHttpTxnHookAdd(txnp, TS_HTTP_TXN_CLOSE_HOOK, txn_cont);
  /* The rule's own mapping (from -> to URL) still applies. */
  return TSREMAP_NO_REMAP;
}
