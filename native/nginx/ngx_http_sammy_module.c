/*
 * ngx_http_sammy_module: Sammy's application-informed pacing (thesis 2.3.2) in
 * nginx. The thin adapter between nginx's filter and phase APIs and the C core it
 * shares with the Traffic Server plugin (../core: the CMCD reader, the rate
 * decision with the spiral guard, the socket calls, the telemetry line), so the
 * same request gets the same rate here as from the Node server and the edge.
 *
 * Per response in a location with `sammy on` (the main request only):
 *  1. header filter: read CMCD (header form wins over ?CMCD=), decide the rate
 *     (rate.h) and, for a body on a connection of its own (HTTP/1.x), set
 *     SO_MAX_PACING_RATE before any byte of the response is written; a response
 *     without a rate on a socket an earlier response left capped has the cap
 *     removed. Add `Server-Timing: pace;dur=<kbps>;desc="<outcome>"`.
 *  2. body filter (the tail, README "Keep-alive carry-over"): nginx finalises a
 *     request once the kernel has accepted its last byte, while up to the socket's
 *     send buffer is still queued. A cap lifted then un-paces that tail; a cap
 *     lifted after it has left leaves the socket's next departure time one skb at
 *     the old rate ahead, which the next response on the connection waits for.
 *     So the body's last byte is held back: everything before it goes out paced,
 *     then the module polls TCP_INFO (the write event's timer, spaced by the core's
 *     drain policy) until nothing is left unsent, lifts the cap and sends the byte.
 *     It leaves at its paced time, and the departure time it leaves behind is one
 *     byte at the old rate. The request stays open meanwhile (a c->buffered bit),
 *     so nginx's sendfile path is kept: the byte is a one-byte slice of the file.
 *  3. log phase: TCP_INFO once more, and one JSON line (the Node server's "media
 *     response" line) into `sammy_telemetry_log`; the shared counters.
 *
 * HTTP/2 (docs/server-contract.md "HTTP/2", the Node server's rule): a connection's
 * streams share its socket, so the socket's cap is the sum of the rates of the
 * streams with body left to send (each decided as over HTTP/1.1), none while a
 * stream without a rate sends a body (in any location) and none when none is left;
 * set again whenever a stream joins (its header) or leaves. A paced stream holds its
 * last byte until nginx has given the kernel the rest of the stream and the kernel
 * has sent every byte it had been given up to then; then its share goes and the byte
 * follows. A stream that ends otherwise (unpaced, reset, its tail not held) keeps its
 * share until the bytes it gave the kernel have left: nginx logs a stream only once
 * its queued frames are written (ngx_http_v2_close_stream), and the share waits in
 * the connection's memory (its pool, so it ends with the connection) for a timer.
 * While capped, TCP_NOTSENT_LOWAT keeps about 10 ms of the cap unsent in the socket:
 * without it nginx fills Linux's 4 MB send buffer stream after stream and the
 * kernel, not nginx's frame queue, decides how the cap splits. Each stream's line
 * has its own rate, the connection's TCP fields and cap.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <time.h>

#include "cmcd.h"
#include "options.h"
#include "rate.h"
#include "socket.h"
#include "telemetry.h"

/* A c->buffered bit nginx leaves free (NGX_HTTP_LOWLEVEL_BUFFERED is 0xf0; write 0x10, gzip 0x20): the tail is held. */
#define NGX_HTTP_SAMMY_TAIL_BUFFERED 0x80
#define SAMMY_PATH_LOGGED_MAX_BYTES 1024
#define SAMMY_LINE_MAX_BYTES 4096
/*
 * What a capped HTTP/2 socket may hold unsent: 10 ms at the cap, at least 64 KB (one
 * TLS-sized write of frames). Measured on loopback, two streams at rtp=20000 (a 5
 * MB/s cap): with 50 or 250 ms of the cap the one nginx wrote first got 3.4-3.5 MB/s
 * and the other 2.2-2.4 (docs/server-contract.md); with 10 ms each got 2.4-2.5.
 */
#define SAMMY_H2_NOTSENT_MS 10
#define SAMMY_H2_NOTSENT_MIN_BYTES 65536

typedef struct {
    ngx_flag_t        enable;
    sammy_options     options;
    /* The SAMMY_OPT_* flags set at this level; the others come from the enclosing one. */
    unsigned          options_set;
    /* Where the telemetry lines go; NULL: nowhere. */
    ngx_open_file_t  *telemetry;
    ngx_flag_t        telemetry_set;
} ngx_http_sammy_loc_conf_t;

/* One response's life, one phase at a time. */
typedef enum {
    /* The body passes through (every response that holds no tail stays here). */
    SAMMY_SENDING = 0,
    /* All of the body but its last byte has been handed on; waiting for it to leave the socket. */
    SAMMY_TAIL_HELD,
    /* The cap is lifted and the last byte handed on; waiting for it to leave (one kernel train at the old rate). */
    SAMMY_TAIL_SENT,
    /* The last byte has left (or can no longer leave): the request may end. */
    SAMMY_DONE,
} ngx_http_sammy_phase_e;

typedef struct ngx_http_sammy_ctx_s    ngx_http_sammy_ctx_t;
typedef struct ngx_http_sammy_share_s  ngx_http_sammy_share_t;
typedef struct ngx_http_sammy_h2c_s    ngx_http_sammy_h2c_t;

struct ngx_http_sammy_ctx_s {
    ngx_http_sammy_loc_conf_t  *conf;
    ngx_http_sammy_phase_e      phase;
    sammy_rate_request          request;
    sammy_rate_decision         rate;
    /* The held last byte and whatever special buffers followed it. */
    ngx_chain_t                *held;
    sammy_tcp_info              start;
    /* TCP_INFO just before the cap was lifted (its max_pacing_rate goes in the line). */
    sammy_tcp_info              capped_info;
    int64_t                     begin_ns;
    /* When the held tail last moved, and how much was unsent then. */
    int64_t                     progress_ns;
    uint32_t                    last_notsent_bytes;
    /* The next wait for the last byte to leave (doubled while it has not). */
    ngx_msec_t                  sent_wait_ms;
    const char                 *body_path;
    unsigned                    own_socket:1;
    unsigned                    have_start:1;
    unsigned                    have_capped_info:1;
    /* The socket carries this response's cap. */
    unsigned                    capped:1;
    /* The peer was gone before the last byte left. */
    unsigned                    peer_gone:1;
    /* An HTTP/2 stream: its rate is a share of its connection's cap (below). */
    unsigned                    h2:1;
    /* A response in a `sammy on` location (a line, counters); else it only counts for its connection's cap. */
    unsigned                    media:1;
    /* HTTP/2: the stream's identifier (0 over HTTP/1.x). */
    int64_t                     stream_id;
    /* HTTP/2: the connection's state and this stream's share of its cap; NULL once the share has ended. */
    ngx_http_sammy_h2c_t       *h2c;
    ngx_http_sammy_share_t     *share;
};

/*
 * HTTP/2 (docs/server-contract.md "HTTP/2"): every stream of a connection writes to
 * its one TCP socket, and SO_MAX_PACING_RATE caps the socket. A share is a stream's
 * part of that cap, from its response header until its bytes have left the kernel;
 * the cap is the sum of the shares' rates, none while any share has no rate (an
 * unpaced body) and none when no share is left. The shares live in the connection's
 * memory (its pool, found through the pool's cleanup list), so one whose request has
 * ended can wait there for its last bytes to leave; the pool's cleanup ends them all.
 */
struct ngx_http_sammy_share_s {
    /* In the connection's shares, or in its free list once over. */
    ngx_queue_t                 queue;
    /* 0: a body without a rate (the connection is then uncapped). */
    uint64_t                    rate_bytes_per_s;
    /* Leaving: the connection's count of bytes given to the kernel once this stream's last one was. */
    uint64_t                    left_at_bytes;
    /* The stream's context while its request lives (it polls for itself); NULL after. */
    ngx_http_sammy_ctx_t       *ctx;
    /* All of the stream's bytes (a paced one's: all but its held last byte) are in the kernel. */
    unsigned                    leaving:1;
};

struct ngx_http_sammy_h2c_s {
    /* The real connection (its socket; the streams' fake connections copy its descriptor). */
    ngx_connection_t           *connection;
    ngx_queue_t                 shares;
    ngx_queue_t                 free;
    /* The cap set on the socket; SAMMY_UNLIMITED_PACING_RATE when none. */
    uint64_t                    cap_bytes_per_s;
    /* TCP_NOTSENT_LOWAT set with it; 0: the system's. */
    uint64_t                    notsent_lowat_bytes;
    /* Looks again for the last bytes of shares whose requests have ended. */
    ngx_event_t                 leave_event;
};

/* Counters summed over the workers (a shared zone), for `sammy_metrics`. */
typedef enum {
    SAMMY_COUNT_PACED = 0,
    SAMMY_COUNT_UNPACED,
    SAMMY_COUNT_DISABLED,
    SAMMY_COUNT_UNAVAILABLE,
    SAMMY_COUNT_GUARD_TB,
    SAMMY_COUNT_GUARD_BR,
    SAMMY_COUNT_GUARD_DECLARED,
    SAMMY_COUNT_BYTES,
    SAMMY_COUNT_ABORTED,
    SAMMY_COUNT_TAIL_HELD,
    SAMMY_COUNT_TAIL_STALLED,
    SAMMY_COUNT_ERR_CMCD,
    SAMMY_COUNT_ERR_SETSOCKOPT,
    SAMMY_COUNT_ERR_TCP_INFO,
    /* A gauge: HTTP/2 streams holding a share of their connection's cap. */
    SAMMY_GAUGE_H2_STREAMS,
    SAMMY_COUNT_N
} ngx_http_sammy_counter_e;

static ngx_atomic_t *ngx_http_sammy_counters;

static ngx_int_t ngx_http_sammy_init(ngx_conf_t *cf);
static void *ngx_http_sammy_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_sammy_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static char *ngx_http_sammy_option(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_sammy_telemetry_log(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_sammy_metrics(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);

static ngx_http_output_header_filter_pt  ngx_http_next_header_filter;
static ngx_http_output_body_filter_pt    ngx_http_next_body_filter;

/* Every option of the core's table, as a directive `sammy_<name with '_'>`: the core checks its value. */
#define SAMMY_OPTION_DIRECTIVE(name)                                                   \
    { ngx_string("sammy_" name),                                                       \
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,           \
      ngx_http_sammy_option, NGX_HTTP_LOC_CONF_OFFSET, 0, NULL }

static ngx_command_t ngx_http_sammy_commands[] = {

    { ngx_string("sammy"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_sammy_loc_conf_t, enable),
      NULL },

    SAMMY_OPTION_DIRECTIVE("pacing"),
    SAMMY_OPTION_DIRECTIVE("min_rate_kbps"),
    SAMMY_OPTION_DIRECTIVE("max_rate_kbps"),
    SAMMY_OPTION_DIRECTIVE("spiral_guard"),
    SAMMY_OPTION_DIRECTIVE("spiral_guard_multiplier"),
    SAMMY_OPTION_DIRECTIVE("query_cmcd"),
    SAMMY_OPTION_DIRECTIVE("max_cmcd_bytes"),
    SAMMY_OPTION_DIRECTIVE("tail_hold"),

    { ngx_string("sammy_telemetry_log"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_sammy_telemetry_log,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("sammy_metrics"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_sammy_metrics,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};

static ngx_http_module_t ngx_http_sammy_module_ctx = {
    NULL,                              /* preconfiguration */
    ngx_http_sammy_init,               /* postconfiguration */
    NULL,                              /* create main configuration */
    NULL,                              /* init main configuration */
    NULL,                              /* create server configuration */
    NULL,                              /* merge server configuration */
    ngx_http_sammy_create_loc_conf,    /* create location configuration */
    ngx_http_sammy_merge_loc_conf      /* merge location configuration */
};

ngx_module_t ngx_http_sammy_module = {
    NGX_MODULE_V1,
    &ngx_http_sammy_module_ctx,        /* module context */
    ngx_http_sammy_commands,           /* module directives */
    NGX_HTTP_MODULE,                   /* module type */
    NULL,                              /* init master */
    NULL,                              /* init module */
    NULL,                              /* init process */
    NULL,                              /* init thread */
    NULL,                              /* exit thread */
    NULL,                              /* exit process */
    NULL,                              /* exit master */
    NGX_MODULE_V1_PADDING
};


static int64_t
ngx_http_sammy_now_ns(clockid_t clock)
{
    struct timespec  ts;

    clock_gettime(clock, &ts);
    return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}


static void
ngx_http_sammy_count(ngx_http_sammy_counter_e counter, ngx_atomic_int_t n)
{
    if (ngx_http_sammy_counters != NULL) {
        (void) ngx_atomic_fetch_add(&ngx_http_sammy_counters[counter], n);
    }
}


/* ------------------------------------------------------------ configuration */

static void *
ngx_http_sammy_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_sammy_loc_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_sammy_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    conf->enable = NGX_CONF_UNSET;
    conf->options = SAMMY_DEFAULT_OPTIONS;
    conf->telemetry_set = 0;

    return conf;
}


static char *
ngx_http_sammy_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_sammy_loc_conf_t  *prev = parent;
    ngx_http_sammy_loc_conf_t  *conf = child;

    char  error[512];

    ngx_conf_merge_value(conf->enable, prev->enable, 0);

    sammy_options_merge(&conf->options, conf->options_set, &prev->options);
    conf->options_set |= prev->options_set;

    if (!sammy_options_check(&conf->options, error, sizeof(error))) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", error);
        return NGX_CONF_ERROR;
    }

    if (!conf->telemetry_set) {
        conf->telemetry = prev->telemetry;
        conf->telemetry_set = prev->telemetry_set;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_sammy_option(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_sammy_loc_conf_t  *lcf = conf;

    char        error[512];
    ngx_str_t  *value;
    size_t      prefix = sizeof("sammy_") - 1;

    value = cf->args->elts;

    if (!sammy_option_set(&lcf->options, SAMMY_OPT_ALL, (const char *) cmd->name.data + prefix,
                          cmd->name.len - prefix, (const char *) value[1].data, value[1].len,
                          &lcf->options_set, error, sizeof(error)))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\": %s", &cmd->name, error);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_sammy_telemetry_log(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_sammy_loc_conf_t  *lcf = conf;

    ngx_str_t  *value;

    if (lcf->telemetry_set) {
        return "is duplicate";
    }

    value = cf->args->elts;
    lcf->telemetry_set = 1;

    if (ngx_strcmp(value[1].data, "off") == 0) {
        lcf->telemetry = NULL;
        return NGX_CONF_OK;
    }

    /* nginx opens it in append mode and reopens it with its logs (SIGUSR1). */
    lcf->telemetry = ngx_conf_open_file(cf->cycle, &value[1]);
    if (lcf->telemetry == NULL) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_sammy_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_slab_pool_t  *shpool;
    ngx_atomic_t     *counters;

    if (data != NULL) {
        /* A reload: keep the counters. */
        shm_zone->data = data;
        ngx_http_sammy_counters = data;
        return NGX_OK;
    }

    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (shm_zone->shm.exists) {
        shm_zone->data = shpool->data;
        ngx_http_sammy_counters = shpool->data;
        return NGX_OK;
    }

    counters = ngx_slab_calloc(shpool, sizeof(ngx_atomic_t) * SAMMY_COUNT_N);
    if (counters == NULL) {
        return NGX_ERROR;
    }

    shpool->data = (void *) counters;
    shm_zone->data = (void *) counters;
    ngx_http_sammy_counters = counters;

    return NGX_OK;
}


/* ------------------------------------------------------------ reading the request */

/* One CMCD header field's value, repeated fields joined with ", " (as Node joins them), at most `cap` bytes. */
static u_char *
ngx_http_sammy_header_value(ngx_http_request_t *r, const char *name, size_t cap, size_t *length)
{
    size_t            n, take, name_length;
    u_char           *buf;
    ngx_uint_t        i;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    buf = NULL;
    n = 0;
    name_length = ngx_strlen(name);
    part = &r->headers_in.headers.part;
    h = part->elts;

    for (i = 0; /* void */; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (h[i].key.len != name_length || ngx_strncasecmp(h[i].key.data, (u_char *) name, name_length) != 0) {
            continue;
        }

        if (buf == NULL) {
            buf = ngx_pnalloc(r->pool, cap);
            if (buf == NULL) {
                return NULL;
            }

        } else if (n + 2 <= cap) {
            ngx_memcpy(buf + n, ", ", 2);
            n += 2;
        }

        take = ngx_min(h[i].value.len, cap - n);
        ngx_memcpy(buf + n, h[i].value.data, take);
        n += take;
    }

    *length = n;
    return buf;
}


static sammy_rate_request
ngx_http_sammy_read_rate(ngx_http_request_t *r, const sammy_options *o)
{
    size_t             cap, length;
    ngx_uint_t         i;
    sammy_cmcd_input   in;

    ngx_memzero(&in, sizeof(in));

    /* Anything over max_cmcd_bytes is ignored whole: one byte more than that is enough to know. */
    cap = (size_t) o->max_cmcd_bytes + 1;

    for (i = 0; i < SAMMY_CMCD_HEADER_COUNT; i++) {
        length = 0;
        in.header[i] = (const char *) ngx_http_sammy_header_value(r, SAMMY_CMCD_HEADER_FIELDS[i], cap, &length);
        in.header_length[i] = length;
    }

    in.query = r->args.len > 0 ? (const char *) r->args.data : NULL;
    in.query_length = r->args.len;
    in.honour_query = o->honour_query;
    in.max_bytes = (size_t) o->max_cmcd_bytes;

    return sammy_read_rate_request(&in);
}


static void
ngx_http_sammy_add_header(ngx_http_request_t *r, const char *key, u_char *value, size_t length)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return;
    }

    h->hash = 1;
    h->key.data = (u_char *) key;
    h->key.len = ngx_strlen(key);
    h->value.data = value;
    h->value.len = length;
}


/*
 * Server-Timing: pace;dur=<applied kbps>;desc="<outcome>", replacing a pace metric
 * an upstream sent, and Timing-Allow-Origin: * unless there is one.
 */
static void
ngx_http_sammy_server_timing(ngx_http_request_t *r, const sammy_rate_decision *rate)
{
    u_char           *value, *last;
    ngx_uint_t        i, allow_origin;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    allow_origin = 0;
    part = &r->headers_out.headers.part;
    h = part->elts;

    for (i = 0; /* void */; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (h[i].hash == 0) {
            continue;
        }

        if (h[i].key.len == sizeof("Server-Timing") - 1
            && ngx_strncasecmp(h[i].key.data, (u_char *) "Server-Timing", h[i].key.len) == 0
            && h[i].value.len >= 4 && ngx_strncasecmp(h[i].value.data, (u_char *) "pace", 4) == 0)
        {
            h[i].hash = 0;
        }

        if (h[i].key.len == sizeof("Timing-Allow-Origin") - 1
            && ngx_strncasecmp(h[i].key.data, (u_char *) "Timing-Allow-Origin", h[i].key.len) == 0)
        {
            allow_origin = 1;
        }
    }

    value = ngx_pnalloc(r->pool, 80);
    if (value == NULL) {
        return;
    }

    last = ngx_snprintf(value, 80, "pace;dur=%L;desc=\"%s\"", (int64_t) rate->applied_rate_kbps,
                        sammy_pacing_name(rate->outcome));
    ngx_http_sammy_add_header(r, "Server-Timing", value, last - value);

    if (!allow_origin) {
        ngx_http_sammy_add_header(r, "Timing-Allow-Origin", (u_char *) "*", 1);
    }
}


/* ------------------------------------------------------------ HTTP/2: a connection's cap, shared by its streams */

#if (NGX_HTTP_V2)

static ngx_int_t ngx_http_sammy_wait(ngx_connection_t *c, ngx_msec_t wait_ms);
static ngx_int_t ngx_http_sammy_tail_done(ngx_http_request_t *r, ngx_http_sammy_ctx_t *ctx);

/* Bytes the kernel has been given on the connection: sent once (retransmissions aside) plus not yet sent. */
static uint64_t
ngx_http_sammy_bytes_given(const sammy_tcp_info *info)
{
    return info->bytes_sent - info->bytes_retrans + info->notsent_bytes;
}


static uint64_t
ngx_http_sammy_bytes_left(const sammy_tcp_info *info)
{
    return info->bytes_sent - info->bytes_retrans;
}


/* The looks for a share's last bytes: the drain policy, never longer than its unpaced ceiling (the cap changes as streams come and go). */
static ngx_msec_t
ngx_http_sammy_leave_poll_ms(ngx_http_sammy_h2c_t *h2c, uint64_t unsent_bytes, const sammy_tcp_info *info)
{
    uint64_t  rate, ms;

    rate = h2c->cap_bytes_per_s == SAMMY_UNLIMITED_PACING_RATE ? 0 : h2c->cap_bytes_per_s;
    ms = sammy_drain_poll_ms(unsent_bytes, rate, info->delivery_rate_bytes_per_s);

    return (ngx_msec_t) ngx_min(ms, SAMMY_DRAIN_POLL_MAX_MS);
}


/* Sets the connection's cap from its shares (the rule above), when it changed. */
static void
ngx_http_sammy_h2_update_cap(ngx_http_sammy_h2c_t *h2c)
{
    int                      err;
    uint64_t                 cap, sum_bytes_per_s, lowat_bytes;
    ngx_queue_t             *q;
    ngx_http_sammy_share_t  *share;

    cap = SAMMY_UNLIMITED_PACING_RATE;
    sum_bytes_per_s = 0;

    for (q = ngx_queue_head(&h2c->shares); q != ngx_queue_sentinel(&h2c->shares); q = ngx_queue_next(q)) {
        share = ngx_queue_data(q, ngx_http_sammy_share_t, queue);

        if (share->rate_bytes_per_s == 0) {
            sum_bytes_per_s = 0;
            break;
        }

        sum_bytes_per_s += share->rate_bytes_per_s;
    }

    if (sum_bytes_per_s > 0) {
        cap = sum_bytes_per_s;
    }

    if (cap == h2c->cap_bytes_per_s) {
        return;
    }

    err = sammy_set_max_pacing_rate(h2c->connection->fd, cap);
    if (err != 0) {
        ngx_http_sammy_count(SAMMY_COUNT_ERR_SETSOCKOPT, 1);
        ngx_log_error(NGX_LOG_ERR, h2c->connection->log, err, "sammy: setsockopt(SO_MAX_PACING_RATE) on an HTTP/2 connection failed");
        return;
    }

    h2c->cap_bytes_per_s = cap;

    lowat_bytes = 0;
    if (cap != SAMMY_UNLIMITED_PACING_RATE) {
        lowat_bytes = ngx_max(cap * SAMMY_H2_NOTSENT_MS / 1000, SAMMY_H2_NOTSENT_MIN_BYTES);
        lowat_bytes = ngx_min(lowat_bytes, UINT32_MAX);
    }

    if (lowat_bytes != h2c->notsent_lowat_bytes) {
        err = sammy_set_notsent_lowat(h2c->connection->fd, (uint32_t) lowat_bytes);
        if (err != 0) {
            ngx_http_sammy_count(SAMMY_COUNT_ERR_SETSOCKOPT, 1);
            ngx_log_error(NGX_LOG_ERR, h2c->connection->log, err, "sammy: setsockopt(TCP_NOTSENT_LOWAT) on an HTTP/2 connection failed");
        } else {
            h2c->notsent_lowat_bytes = lowat_bytes;
        }
    }
}


/* The share is over: out of the connection's cap, its entry kept for the next stream. */
static void
ngx_http_sammy_h2_drop(ngx_http_sammy_h2c_t *h2c, ngx_http_sammy_share_t *share, ngx_flag_t update)
{
    ngx_queue_remove(&share->queue);
    ngx_queue_insert_head(&h2c->free, &share->queue);

    if (share->ctx != NULL) {
        share->ctx->share = NULL;
        share->ctx = NULL;
    }

    ngx_http_sammy_count(SAMMY_GAUGE_H2_STREAMS, -1);

    if (update) {
        ngx_http_sammy_h2_update_cap(h2c);
    }
}


/*
 * The connection's look at the shares whose requests have ended: each leaves once the
 * kernel has sent the bytes it had been given up to that stream's last one.
 */
static void
ngx_http_sammy_h2_poll_leaving(ngx_http_sammy_h2c_t *h2c)
{
    uint64_t                 left_bytes, wait_bytes;
    ngx_uint_t               dropped, gone;
    ngx_queue_t             *q, *next;
    sammy_tcp_info           info;
    ngx_http_sammy_share_t  *share;

    if (h2c->leave_event.timer_set) {
        ngx_del_timer(&h2c->leave_event);
    }

    gone = h2c->connection->error || !sammy_read_tcp_info(h2c->connection->fd, &info)
           || !sammy_tcp_state_sending(info.state);
    left_bytes = gone ? 0 : ngx_http_sammy_bytes_left(&info);
    wait_bytes = 0;
    dropped = 0;

    for (q = ngx_queue_head(&h2c->shares); q != ngx_queue_sentinel(&h2c->shares); q = next) {
        next = ngx_queue_next(q);
        share = ngx_queue_data(q, ngx_http_sammy_share_t, queue);

        if (share->ctx != NULL || !share->leaving) {
            continue;
        }

        if (gone || left_bytes >= share->left_at_bytes) {
            ngx_http_sammy_h2_drop(h2c, share, 0);
            dropped = 1;
            continue;
        }

        if (wait_bytes == 0 || share->left_at_bytes - left_bytes < wait_bytes) {
            wait_bytes = share->left_at_bytes - left_bytes;
        }
    }

    if (dropped) {
        ngx_http_sammy_h2_update_cap(h2c);
    }

    if (wait_bytes > 0) {
        ngx_add_timer(&h2c->leave_event, ngx_http_sammy_leave_poll_ms(h2c, wait_bytes, &info));
    }
}


static void
ngx_http_sammy_h2_leave_handler(ngx_event_t *ev)
{
    ngx_http_sammy_h2_poll_leaving(ev->data);
}


/* The connection's memory is going (it closed): every share ends with it, and no timer is left behind. */
static void
ngx_http_sammy_h2c_cleanup(void *data)
{
    ngx_http_sammy_h2c_t  *h2c = data;

    ngx_queue_t             *q;
    ngx_http_sammy_share_t  *share;

    if (h2c->leave_event.timer_set) {
        ngx_del_timer(&h2c->leave_event);
    }

    if (h2c->leave_event.posted) {
        ngx_delete_posted_event(&h2c->leave_event);
    }

    /* nginx closes every stream before its connection; a request still here loses its share, not its memory. */
    while (!ngx_queue_empty(&h2c->shares)) {
        q = ngx_queue_head(&h2c->shares);
        share = ngx_queue_data(q, ngx_http_sammy_share_t, queue);

        if (share->ctx != NULL) {
            share->ctx->h2c = NULL;
        }

        ngx_http_sammy_h2_drop(h2c, share, 0);
    }
}


/* The state of the HTTP/2 connection `c` (the real one), made on its first stream with a body. */
static ngx_http_sammy_h2c_t *
ngx_http_sammy_h2c_of(ngx_connection_t *c)
{
    ngx_pool_cleanup_t    *cln;
    ngx_http_sammy_h2c_t  *h2c;

    for (cln = c->pool->cleanup; cln != NULL; cln = cln->next) {
        if (cln->handler == ngx_http_sammy_h2c_cleanup) {
            return cln->data;
        }
    }

    cln = ngx_pool_cleanup_add(c->pool, sizeof(ngx_http_sammy_h2c_t));
    if (cln == NULL) {
        return NULL;
    }

    h2c = cln->data;
    ngx_memzero(h2c, sizeof(ngx_http_sammy_h2c_t));
    h2c->connection = c;
    ngx_queue_init(&h2c->shares);
    ngx_queue_init(&h2c->free);
    /* Nothing but this module caps an HTTP/2 connection, and it caps none before a share. */
    h2c->cap_bytes_per_s = SAMMY_UNLIMITED_PACING_RATE;
    h2c->leave_event.handler = ngx_http_sammy_h2_leave_handler;
    h2c->leave_event.data = h2c;
    h2c->leave_event.log = c->log;
    /* A graceful stop does not wait for it. */
    h2c->leave_event.cancelable = 1;

    cln->handler = ngx_http_sammy_h2c_cleanup;

    return h2c;
}


/*
 * The stream's request has ended (nginx has given the kernel its last frame, or it was
 * reset): its share stays until those bytes have left, as they leave whatever happens
 * next; on a connection that is gone it ends now.
 */
static void
ngx_http_sammy_h2_detach(ngx_http_sammy_ctx_t *ctx, const sammy_tcp_info *known)
{
    sammy_tcp_info           info;
    ngx_http_sammy_h2c_t    *h2c;
    ngx_http_sammy_share_t  *share;

    h2c = ctx->h2c;
    share = ctx->share;
    if (h2c == NULL || share == NULL) {
        return;
    }

    share->ctx = NULL;
    ctx->share = NULL;

    if (known != NULL) {
        info = *known;

    } else if (h2c->connection->error || !sammy_read_tcp_info(h2c->connection->fd, &info)) {
        ngx_http_sammy_h2_drop(h2c, share, 1);
        return;
    }

    if (!share->leaving) {
        share->leaving = 1;
        share->left_at_bytes = ngx_http_sammy_bytes_given(&info);
    }

    ngx_http_sammy_h2_poll_leaving(h2c);
}


static void
ngx_http_sammy_h2_request_cleanup(void *data)
{
    /* The log phase has detached it already; this is for a request nginx frees without one. */
    ngx_http_sammy_h2_detach(data, NULL);
}


/* The stream joins its connection's set with its rate (0: none): the cap is set again before its first byte. */
static ngx_int_t
ngx_http_sammy_h2_join(ngx_http_request_t *r, ngx_http_sammy_ctx_t *ctx, uint64_t rate_bytes_per_s)
{
    ngx_queue_t             *q;
    ngx_pool_cleanup_t      *cln;
    ngx_http_sammy_h2c_t    *h2c;
    ngx_http_sammy_share_t  *share;

    h2c = ngx_http_sammy_h2c_of(r->stream->connection->connection);
    if (h2c == NULL) {
        return NGX_ERROR;
    }

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    if (!ngx_queue_empty(&h2c->free)) {
        q = ngx_queue_head(&h2c->free);
        ngx_queue_remove(q);
        share = ngx_queue_data(q, ngx_http_sammy_share_t, queue);

    } else {
        share = ngx_palloc(h2c->connection->pool, sizeof(ngx_http_sammy_share_t));
        if (share == NULL) {
            return NGX_ERROR;
        }
    }

    ngx_memzero(share, sizeof(ngx_http_sammy_share_t));
    share->rate_bytes_per_s = rate_bytes_per_s;
    share->ctx = ctx;
    ngx_queue_insert_tail(&h2c->shares, &share->queue);
    ngx_http_sammy_count(SAMMY_GAUGE_H2_STREAMS, 1);

    ctx->h2c = h2c;
    ctx->share = share;
    cln->handler = ngx_http_sammy_h2_request_cleanup;
    cln->data = ctx;

    ngx_http_sammy_h2_update_cap(h2c);

    return NGX_OK;
}


/*
 * A paced stream's held last byte goes (its share over, or it can no longer be
 * followed). Unlike HTTP/1.1's the request does not wait for the byte to leave: it
 * ends when nginx has given the kernel that frame.
 */
static ngx_int_t
ngx_http_sammy_h2_release_tail(ngx_http_request_t *r, ngx_http_sammy_ctx_t *ctx)
{
    ngx_event_t  *wev;
    ngx_chain_t  *held;

    if (ctx->share != NULL) {
        ngx_http_sammy_h2_drop(ctx->h2c, ctx->share, 1);
    }

    wev = r->connection->write;
    if (wev->timer_set) {
        ngx_del_timer(wev);
    }

    wev->delayed = 0;

    held = ctx->held;
    ctx->held = NULL;
    (void) ngx_http_sammy_tail_done(r, ctx);

    return held == NULL ? NGX_OK : ngx_http_next_body_filter(r, held);
}


/*
 * A paced stream holding its last byte: first nginx gives the kernel the rest of the
 * stream (its queued DATA frames), then the connection's count of bytes given to the
 * kernel is noted and the stream keeps its share until the kernel has sent that many;
 * then the share goes and the byte follows (the Node server's rule).
 */
static ngx_int_t
ngx_http_sammy_h2_poll_tail(ngx_http_request_t *r, ngx_http_sammy_ctx_t *ctx)
{
    int64_t                    now;
    uint64_t                   left_bytes;
    sammy_tcp_info             info;
    ngx_connection_t          *c;
    ngx_http_sammy_h2c_t      *h2c;
    ngx_http_sammy_share_t    *share;
    ngx_http_core_loc_conf_t  *clcf;

    c = r->connection;
    h2c = ctx->h2c;
    share = ctx->share;

    if (h2c == NULL || share == NULL || c->error || h2c->connection->error) {
        return ngx_http_sammy_h2_release_tail(r, ctx);
    }

    if (c->buffered & (NGX_HTTP_WRITE_BUFFERED|NGX_LOWLEVEL_BUFFERED)) {
        /* nginx still holds part of the body (frames in its queue): HTTP/2 calls the writer as they go. */
        return NGX_AGAIN;
    }

    if (!sammy_read_tcp_info(h2c->connection->fd, &info)) {
        ngx_http_sammy_count(SAMMY_COUNT_ERR_TCP_INFO, 1);
        return ngx_http_sammy_h2_release_tail(r, ctx);
    }

    now = ngx_http_sammy_now_ns(CLOCK_MONOTONIC);
    left_bytes = ngx_http_sammy_bytes_left(&info);

    if (!share->leaving) {
        share->leaving = 1;
        share->left_at_bytes = ngx_http_sammy_bytes_given(&info);
        ctx->progress_ns = now;
        ctx->last_notsent_bytes = UINT32_MAX;
    }

    if (left_bytes >= share->left_at_bytes || !sammy_tcp_state_sending(info.state)) {
        ctx->peer_gone = !sammy_tcp_state_sending(info.state);
        ctx->capped_info = info;
        ctx->have_capped_info = 1;
        return ngx_http_sammy_h2_release_tail(r, ctx);
    }

    /* last_notsent_bytes here: what was still to leave at the last look. */
    if (share->left_at_bytes - left_bytes < ctx->last_notsent_bytes) {
        ctx->progress_ns = now;
    }

    ctx->last_notsent_bytes = (uint32_t) ngx_min(share->left_at_bytes - left_bytes, UINT32_MAX - 1);

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);
    if (now - ctx->progress_ns > (int64_t) clcf->send_timeout * 1000000) {
        ngx_http_sammy_count(SAMMY_COUNT_TAIL_STALLED, 1);
        ngx_log_error(NGX_LOG_INFO, c->log, 0, "sammy: the HTTP/2 tail did not move for %M ms; released", clcf->send_timeout);
        ctx->capped_info = info;
        ctx->have_capped_info = 1;
        return ngx_http_sammy_h2_release_tail(r, ctx);
    }

    return ngx_http_sammy_wait(c, ngx_http_sammy_leave_poll_ms(h2c, share->left_at_bytes - left_bytes, &info));
}

#endif


/* ------------------------------------------------------------ the header filter */

static ngx_int_t
ngx_http_sammy_header_filter(ngx_http_request_t *r)
{
    int                         err;
    ngx_uint_t                  status;
    ngx_connection_t           *c;
    ngx_http_sammy_ctx_t       *ctx;
    sammy_response_facts        facts;
    ngx_http_sammy_loc_conf_t  *lcf;

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_sammy_module);

    if (r != r->main || ngx_http_get_module_ctx(r, ngx_http_sammy_module) != NULL) {
        return ngx_http_next_header_filter(r);
    }

    /* The range filter has not run yet: a range request still says 200 here. */
    status = r->headers_out.status;
    facts.has_body = !r->header_only && r->method != NGX_HTTP_HEAD
                     && (status == NGX_HTTP_OK || status == NGX_HTTP_PARTIAL_CONTENT);

    if (!lcf->enable) {
#if (NGX_HTTP_V2)
        /*
         * Outside `sammy on` (the page, /metrics): over HTTP/2 a body without a rate
         * still lifts its connection's cap while it is sent, so a paced neighbour
         * does not slow it (rule 2).
         */
        if (r->stream != NULL && facts.has_body) {
            ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_sammy_ctx_t));
            if (ctx == NULL) {
                return NGX_ERROR;
            }

            ctx->conf = lcf;
            ctx->h2 = 1;
            ngx_http_set_ctx(r, ctx, ngx_http_sammy_module);

            if (ngx_http_sammy_h2_join(r, ctx, 0) != NGX_OK) {
                return NGX_ERROR;
            }
        }
#endif

        return ngx_http_next_header_filter(r);
    }

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_sammy_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ngx_http_set_ctx(r, ctx, ngx_http_sammy_module);

    c = r->connection;
    ctx->conf = lcf;
    ctx->media = 1;
    ctx->begin_ns = ngx_http_sammy_now_ns(CLOCK_MONOTONIC);
    ctx->request = ngx_http_sammy_read_rate(r, &lcf->options);

    if (ctx->request.rtp_kbps == 0 && ctx->request.problem[0] != '\0') {
        ngx_http_sammy_count(SAMMY_COUNT_ERR_CMCD, 1);
        ngx_log_debug1(NGX_LOG_DEBUG_HTTP, c->log, 0, "sammy: %s", ctx->request.problem);
    }

    facts.own_socket = c->fd != (ngx_socket_t) -1;
    ctx->own_socket = facts.own_socket;

    /*
     * An HTTP/2 stream's rate is decided as a response's over HTTP/1.1 (its fake
     * connection carries the real socket's descriptor); it becomes the stream's
     * share of its connection's cap, not a cap of its own.
     */
#if (NGX_HTTP_V2)
    ctx->h2 = r->stream != NULL;
    ctx->stream_id = ctx->h2 ? (int64_t) r->stream->node->id : 0;
#endif

    ctx->rate = sammy_decide_rate(&ctx->request, &lcf->options, facts);

    if (c->fd != (ngx_socket_t) -1) {
        ctx->have_start = sammy_read_tcp_info(c->fd, &ctx->start);
        if (!ctx->have_start) {
            ngx_http_sammy_count(SAMMY_COUNT_ERR_TCP_INFO, 1);
        }
    }

#if (NGX_HTTP_V2)
    if (ctx->h2) {
        if (facts.has_body && facts.own_socket
            && ngx_http_sammy_h2_join(r, ctx, ctx->rate.outcome == SAMMY_PACING_PACED ? ctx->rate.rate_bytes_per_s : 0)
               != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_http_sammy_server_timing(r, &ctx->rate);

        return ngx_http_next_header_filter(r);
    }
#endif

    if (ctx->rate.outcome == SAMMY_PACING_PACED) {
        err = sammy_set_max_pacing_rate(c->fd, ctx->rate.rate_bytes_per_s);

        if (err == 0) {
            ctx->capped = 1;

        } else {
            ngx_http_sammy_count(SAMMY_COUNT_ERR_SETSOCKOPT, 1);
            ngx_log_error(NGX_LOG_ERR, c->log, err, "sammy: setsockopt(SO_MAX_PACING_RATE) failed; served unpaced");
            sammy_rate_unavailable(&ctx->rate);
        }
    }

    if (!ctx->capped && ctx->own_socket && ctx->have_start
        && ctx->start.max_pacing_rate_bytes_per_s < SAMMY_UNLIMITED_PACING_RATE)
    {
        /* An earlier response's cap is still on the socket (it ended early, or held no tail). */
        (void) sammy_set_max_pacing_rate(c->fd, SAMMY_UNLIMITED_PACING_RATE);
    }

    ngx_http_sammy_server_timing(r, &ctx->rate);

    return ngx_http_next_header_filter(r);
}


/* ------------------------------------------------------------ the body filter: the held tail */

/* A one-byte buffer holding the last byte of `b` (which loses it): from memory when it is there, else from the file. */
static ngx_buf_t *
ngx_http_sammy_take_last_byte(ngx_http_request_t *r, ngx_buf_t *b)
{
    ngx_buf_t  *last;

    if (ngx_buf_in_memory(b)) {
        last = ngx_create_temp_buf(r->pool, 1);
        if (last == NULL) {
            return NULL;
        }

        *last->last++ = *(b->last - 1);
        b->last--;

        if (b->in_file) {
            b->file_last--;
        }

    } else {
        last = ngx_calloc_buf(r->pool);
        if (last == NULL) {
            return NULL;
        }

        last->in_file = 1;
        last->file = b->file;
        last->file_pos = b->file_last - 1;
        last->file_last = b->file_last;
        b->file_last--;
    }

    last->tag = (ngx_buf_tag_t) &ngx_http_sammy_module;
    return last;
}


/*
 * Splits `in`, which ends the body (it holds the last buffer), into what goes on now
 * (*out, possibly NULL) and ctx->held: the body's last byte and the special buffers
 * after it. When this call carries no byte of the body (they all went in earlier
 * calls), everything in it is held: the special buffers wait for the tail to leave.
 */
static ngx_int_t
ngx_http_sammy_split_tail(ngx_http_request_t *r, ngx_http_sammy_ctx_t *ctx, ngx_chain_t *in, ngx_chain_t **out)
{
    ngx_buf_t    *byte;
    ngx_chain_t  *cl, *data, **ll, *held;

    *out = NULL;
    data = NULL;
    for (cl = in; cl != NULL; cl = cl->next) {
        if (ngx_buf_size(cl->buf) > 0) {
            data = cl;
        }
    }

    if (data == NULL) {
        ctx->held = in;
        return NGX_OK;
    }

    byte = ngx_http_sammy_take_last_byte(r, data->buf);
    if (byte == NULL) {
        return NGX_ERROR;
    }

    /* The flags that end the body move to the held byte. */
    byte->last_buf = data->buf->last_buf;
    byte->last_in_chain = data->buf->last_in_chain;
    byte->flush = data->buf->flush;
    data->buf->last_buf = 0;
    data->buf->last_in_chain = 0;

    held = ngx_alloc_chain_link(r->pool);
    if (held == NULL) {
        return NGX_ERROR;
    }

    held->buf = byte;
    held->next = data->next;
    ctx->held = held;

    /* New links up to the shortened buffer; a buffer that was only that byte is left out (nginx refuses empty ones). */
    ll = out;

    for (cl = in; cl != data->next; cl = cl->next) {
        if (cl == data && ngx_buf_size(cl->buf) == 0) {
            break;
        }

        *ll = ngx_alloc_chain_link(r->pool);
        if (*ll == NULL) {
            return NGX_ERROR;
        }

        (*ll)->buf = cl->buf;
        ll = &(*ll)->next;
    }

    *ll = NULL;
    return NGX_OK;
}


/* Arms the write event's timer: nginx's writer calls the body filter again when it fires (with `delayed` set, it waits for it). */
static ngx_int_t
ngx_http_sammy_wait(ngx_connection_t *c, ngx_msec_t wait_ms)
{
    ngx_event_t  *wev;

    wev = c->write;
    if (wev->timer_set) {
        ngx_del_timer(wev);
    }

    wev->delayed = 1;
    ngx_add_timer(wev, wait_ms);

    return NGX_AGAIN;
}


/* The tail is over (its last byte left, or cannot): the request may end and be logged. */
static ngx_int_t
ngx_http_sammy_tail_done(ngx_http_request_t *r, ngx_http_sammy_ctx_t *ctx)
{
    ctx->phase = SAMMY_DONE;
    r->connection->buffered &= ~NGX_HTTP_SAMMY_TAIL_BUFFERED;
    return NGX_OK;
}


/*
 * The read handler while the last byte is on its way: data from the client means it
 * has the whole response and sent its next request (or closed: it is gone), so the
 * wait ends now and nginx finalises the request and reads the next one. Without
 * this, a departure time predicted long (64 KB skbs at microsecond round trips) would
 * hold the next request on the connection.
 */
static void
ngx_http_sammy_tail_read_handler(ngx_http_request_t *r)
{
    u_char                 byte;
    ssize_t                n;
    ngx_event_t           *wev;
    sammy_tcp_info         info;
    ngx_connection_t      *c;
    ngx_http_sammy_ctx_t  *ctx;

    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_sammy_module);
    if (ctx == NULL || ctx->phase != SAMMY_TAIL_SENT) {
        return;
    }

    n = recv(c->fd, &byte, 1, MSG_PEEK);
    if (n == -1 && ngx_socket_errno == NGX_EAGAIN) {
        return;
    }

    if (n <= 0) {
        /* The client closed: an abort only if the last byte had not left by then (it may have read it and gone). */
        ctx->peer_gone = !sammy_read_tcp_info(c->fd, &info) || info.notsent_bytes > 0;
    }

    (void) ngx_http_sammy_tail_done(r, ctx);

    wev = c->write;
    if (wev->timer_set) {
        ngx_del_timer(wev);
    }

    wev->delayed = 0;
    r->write_event_handler(r);
}


/*
 * Lifts the cap and hands on the held byte: everything before it has left, or can no
 * longer leave. The byte still leaves at its paced time, one kernel train at the old
 * rate after the last one; the request waits for that (SAMMY_TAIL_SENT), so that its
 * line says when the response really ended, and whether the peer was there for it.
 */
static ngx_int_t
ngx_http_sammy_release_tail(ngx_http_request_t *r, ngx_http_sammy_ctx_t *ctx, const sammy_tcp_info *info)
{
    ngx_int_t                  rc;
    uint64_t                   train_bytes;
    ngx_chain_t               *held;
    ngx_connection_t          *c;
    ngx_http_core_loc_conf_t  *clcf;

    c = r->connection;
    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    if (sammy_set_max_pacing_rate(c->fd, SAMMY_UNLIMITED_PACING_RATE) != 0) {
        ngx_http_sammy_count(SAMMY_COUNT_ERR_SETSOCKOPT, 1);
    }

    /*
     * The byte goes out alone while the rest may still wait for its ACK: without
     * TCP_NODELAY, Nagle's algorithm would hold it for a round trip (nginx turns
     * it on itself only once a connection goes idle between requests).
     */
    if (clcf->tcp_nodelay && ngx_tcp_nodelay(c) != NGX_OK) {
        ngx_log_error(NGX_LOG_INFO, c->log, 0, "sammy: TCP_NODELAY could not be set for the held byte");
    }

    ctx->capped = 0;
    ctx->phase = SAMMY_TAIL_SENT;

    held = ctx->held;
    ctx->held = NULL;

    rc = held == NULL ? NGX_OK : ngx_http_next_body_filter(r, held);
    if (rc == NGX_ERROR) {
        c->buffered &= ~NGX_HTTP_SAMMY_TAIL_BUFFERED;
        return rc;
    }

    if (info == NULL || ctx->peer_gone) {
        return ngx_http_sammy_tail_done(r, ctx);
    }

    r->read_event_handler = ngx_http_sammy_tail_read_handler;

    /* The byte's departure time: one train (an skb, within the congestion window) at the old rate after the last. */
    train_bytes = sammy_kernel_train_bytes(ctx->rate.rate_bytes_per_s, info->min_rtt_us, info->snd_mss_bytes);
    train_bytes = ngx_min(train_bytes, (uint64_t) ngx_max(info->snd_cwnd_packets, 1) * ngx_max(info->snd_mss_bytes, 1));
    ctx->sent_wait_ms = sammy_drain_poll_ms(train_bytes, ctx->rate.rate_bytes_per_s, 0) + 1;
    ctx->progress_ns = ngx_http_sammy_now_ns(CLOCK_MONOTONIC);

    return rc == NGX_AGAIN ? rc : ngx_http_sammy_wait(c, ctx->sent_wait_ms);
}


/*
 * Looks at the socket once. Holding the tail: releases it when nothing is left
 * unsent (or the peer is gone, or the tail stopped moving for send_timeout), else
 * waits by the drain policy. After the release: ends the tail once the last byte has
 * left, else waits again, twice as long each time.
 */
static ngx_int_t
ngx_http_sammy_poll_tail(ngx_http_request_t *r, ngx_http_sammy_ctx_t *ctx)
{
    int64_t                    now;
    ngx_msec_t                 wait_ms;
    sammy_tcp_info             info;
    ngx_connection_t          *c;
    ngx_http_core_loc_conf_t  *clcf;

    c = r->connection;

    if (c->buffered & NGX_HTTP_WRITE_BUFFERED) {
        /* nginx still holds part of the body: its writer sends it as the socket takes it, and calls back. */
        return NGX_AGAIN;
    }

    if (c->tcp_nopush == NGX_TCP_NOPUSH_SET) {
        /*
         * With tcp_nopush nginx corks a header sent with a file until the request
         * ends: the body's last partial segment would wait for the cork's 200 ms timer
         * (and the tail would never look drained before it).
         */
        if (ngx_tcp_push(c->fd) == -1) {
            ngx_log_error(NGX_LOG_CRIT, c->log, ngx_socket_errno, ngx_tcp_push_n " failed");
        } else {
            c->tcp_nopush = NGX_TCP_NOPUSH_UNSET;
        }
    }

    now = ngx_http_sammy_now_ns(CLOCK_MONOTONIC);
    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    if (!sammy_read_tcp_info(c->fd, &info)) {
        ngx_http_sammy_count(SAMMY_COUNT_ERR_TCP_INFO, 1);
        return ctx->phase == SAMMY_TAIL_HELD ? ngx_http_sammy_release_tail(r, ctx, NULL) : ngx_http_sammy_tail_done(r, ctx);
    }

    if (!sammy_tcp_state_sending(info.state)) {
        ctx->peer_gone = 1;
    }

    if (ctx->phase == SAMMY_TAIL_SENT) {
        if (info.notsent_bytes == 0 || ctx->peer_gone
            || now - ctx->progress_ns > (int64_t) clcf->send_timeout * 1000000)
        {
            return ngx_http_sammy_tail_done(r, ctx);
        }

        ctx->sent_wait_ms *= 2;
        return ngx_http_sammy_wait(c, ctx->sent_wait_ms);
    }

    ctx->capped_info = info;
    ctx->have_capped_info = 1;

    if (info.notsent_bytes == 0 || ctx->peer_gone) {
        return ngx_http_sammy_release_tail(r, ctx, &info);
    }

    if (info.notsent_bytes < ctx->last_notsent_bytes) {
        ctx->progress_ns = now;
    }

    ctx->last_notsent_bytes = info.notsent_bytes;

    if (now - ctx->progress_ns > (int64_t) clcf->send_timeout * 1000000) {
        ngx_http_sammy_count(SAMMY_COUNT_TAIL_STALLED, 1);
        ngx_log_error(NGX_LOG_INFO, c->log, 0, "sammy: the tail did not move for %M ms; released", clcf->send_timeout);
        return ngx_http_sammy_release_tail(r, ctx, &info);
    }

    wait_ms = (ngx_msec_t) sammy_drain_poll_ms(info.notsent_bytes, ctx->rate.rate_bytes_per_s, info.delivery_rate_bytes_per_s);
    return ngx_http_sammy_wait(c, wait_ms);
}


static ngx_int_t
ngx_http_sammy_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
    ngx_int_t              rc;
    ngx_uint_t             pending, paced;
    ngx_chain_t           *cl, *out;
    ngx_http_sammy_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_sammy_module);

    if (ctx == NULL) {
        return ngx_http_next_body_filter(r, in);
    }

    if (ctx->body_path == NULL) {
        for (cl = in; cl != NULL; cl = cl->next) {
            if (ngx_buf_size(cl->buf) > 0) {
                ctx->body_path = (r->connection->sendfile && cl->buf->in_file && !ngx_buf_in_memory(cl->buf))
                                 ? "sendfile" : "stream";
                break;
            }
        }
    }

    /*
     * What nginx still holds below this filter: the write filter's buffers, and over
     * HTTP/2 the stream's frames in its connection's queue (a low-level bit).
     */
    pending = NGX_HTTP_WRITE_BUFFERED;
    if (ctx->h2) {
        pending |= NGX_LOWLEVEL_BUFFERED;
    }

    switch (ctx->phase) {

    case SAMMY_TAIL_HELD:
    case SAMMY_TAIL_SENT:
        /*
         * The writer's call (in is NULL): first what nginx still holds, then the
         * socket. (The write filter refuses an empty call when it holds nothing.)
         */
        if (in != NULL || (r->connection->buffered & pending)) {
            rc = ngx_http_next_body_filter(r, in);
            if (rc == NGX_ERROR) {
                r->connection->buffered &= ~NGX_HTTP_SAMMY_TAIL_BUFFERED;
                return rc;
            }
        }

#if (NGX_HTTP_V2)
        if (ctx->h2) {
            return ngx_http_sammy_h2_poll_tail(r, ctx);
        }
#endif

        return ngx_http_sammy_poll_tail(r, ctx);

    case SAMMY_DONE:
        /* Ended by the read handler, the writer's call finds nothing to send: nothing to pass (see above). */
        if (in == NULL && !(r->connection->buffered & pending)) {
            return NGX_OK;
        }

        return ngx_http_next_body_filter(r, in);

    case SAMMY_SENDING:
        break;
    }

    /* A paced body holds its last byte (over HTTP/2: a stream with a rate in its connection's cap). */
    paced = ctx->h2 ? ctx->share != NULL && ctx->share->rate_bytes_per_s > 0 : ctx->capped;

    if (!paced || !ctx->conf->options.tail_hold) {
        return ngx_http_next_body_filter(r, in);
    }

    for (cl = in; cl != NULL; cl = cl->next) {
        if (cl->buf->last_buf) {
            break;
        }
    }

    if (cl == NULL) {
        return ngx_http_next_body_filter(r, in);
    }

    if (ngx_http_sammy_split_tail(r, ctx, in, &out) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->phase = SAMMY_TAIL_HELD;
    ctx->progress_ns = ngx_http_sammy_now_ns(CLOCK_MONOTONIC);
    ctx->last_notsent_bytes = UINT32_MAX;
    r->connection->buffered |= NGX_HTTP_SAMMY_TAIL_BUFFERED;
    ngx_http_sammy_count(SAMMY_COUNT_TAIL_HELD, 1);

    rc = out == NULL ? NGX_OK : ngx_http_next_body_filter(r, out);
    if (rc == NGX_ERROR) {
        r->connection->buffered &= ~NGX_HTTP_SAMMY_TAIL_BUFFERED;
        return rc;
    }

#if (NGX_HTTP_V2)
    if (ctx->h2) {
        return ngx_http_sammy_h2_poll_tail(r, ctx);
    }
#endif

    return ngx_http_sammy_poll_tail(r, ctx);
}


/* ------------------------------------------------------------ the log phase: telemetry */

static const char *
ngx_http_sammy_protocol(ngx_http_request_t *r)
{
    switch (r->http_version) {
    case NGX_HTTP_VERSION_20:
        return "h2";
    case NGX_HTTP_VERSION_11:
        return "http/1.1";
    case NGX_HTTP_VERSION_10:
        return "http/1.0";
    default:
        return "http/0.9";
    }
}


static void
ngx_http_sammy_count_outcome(const ngx_http_sammy_ctx_t *ctx)
{
    switch (ctx->rate.outcome) {
    case SAMMY_PACING_PACED:
        ngx_http_sammy_count(SAMMY_COUNT_PACED, 1);
        break;
    case SAMMY_PACING_DISABLED:
        ngx_http_sammy_count(SAMMY_COUNT_DISABLED, 1);
        break;
    case SAMMY_PACING_UNAVAILABLE:
        ngx_http_sammy_count(SAMMY_COUNT_UNAVAILABLE, 1);
        break;
    case SAMMY_PACING_UNPACED:
        ngx_http_sammy_count(SAMMY_COUNT_UNPACED, 1);
        break;
    }

    if (ctx->rate.guard == SAMMY_GUARD_RAISED) {
        const char *basis = ctx->rate.guard_basis;
        ngx_http_sammy_count(strcmp(basis, "tb") == 0 ? SAMMY_COUNT_GUARD_TB
                             : strcmp(basis, "br") == 0 ? SAMMY_COUNT_GUARD_BR
                             : SAMMY_COUNT_GUARD_DECLARED, 1);
    }
}


static ngx_int_t
ngx_http_sammy_log_handler(ngx_http_request_t *r)
{
    off_t                   bytes;
    size_t                  path_length, length;
    u_char                 *query;
    ngx_connection_t       *c;
    sammy_tcp_info          end;
    ngx_http_sammy_ctx_t   *ctx;
    sammy_response_record   record;
    char                    address[NGX_SOCKADDR_STRLEN + 1];
    char                    line[SAMMY_LINE_MAX_BYTES];

    ctx = ngx_http_get_module_ctx(r, ngx_http_sammy_module);
    if (ctx == NULL) {
        return NGX_OK;
    }

    c = r->connection;
    ngx_memzero(&record, sizeof(record));

    record.end = NULL;
    if (c->fd != (ngx_socket_t) -1 && sammy_read_tcp_info(c->fd, &end)) {
        record.end = &end;
    }

#if (NGX_HTTP_V2)
    if (ctx->h2) {
        /*
         * nginx logs a stream once it has given the kernel the stream's last frame
         * (ngx_http_v2_close_stream waits for the stream's queued frames): a share
         * still held (an unpaced body, a reset stream, a paced one without its tail
         * held) leaves once those bytes have left. The line reports the cap with it.
         */
        ngx_http_sammy_h2_detach(ctx, record.end);

        if (!ctx->media) {
            return NGX_OK;
        }
    }
#endif

    if (ctx->capped) {
        /* The tail was not held (sammy_tail_hold off), or the response ended early: lift the cap now. */
        if (record.end != NULL) {
            ctx->capped_info = end;
            ctx->have_capped_info = 1;
        }

        (void) sammy_set_max_pacing_rate(c->fd, SAMMY_UNLIMITED_PACING_RATE);
        ctx->capped = 0;
    }

    if (record.end != NULL && ctx->have_capped_info) {
        /* The line reports the cap the body was sent under, not the lifted one. */
        end.max_pacing_rate_bytes_per_s = ctx->capped_info.max_pacing_rate_bytes_per_s;
    }

    bytes = c->sent - (off_t) r->header_size;
    if (bytes < 0) {
        bytes = 0;
    }

    ngx_http_sammy_count_outcome(ctx);
    ngx_http_sammy_count(SAMMY_COUNT_BYTES, (ngx_atomic_int_t) bytes);

    record.aborted = c->error || !r->request_complete || ctx->peer_gone;
    if (record.aborted) {
        ngx_http_sammy_count(SAMMY_COUNT_ABORTED, 1);
    }

    if (ctx->conf->telemetry == NULL || ctx->conf->telemetry->fd == NGX_INVALID_FILE) {
        return NGX_OK;
    }

    /* The path as the client sent it, without the query. */
    path_length = r->unparsed_uri.len;
    query = ngx_strlchr(r->unparsed_uri.data, r->unparsed_uri.data + r->unparsed_uri.len, '?');
    if (query != NULL) {
        path_length = query - r->unparsed_uri.data;
    }

    length = ngx_min(c->addr_text.len, NGX_SOCKADDR_STRLEN);
    ngx_memcpy(address, c->addr_text.data, length);
    address[length] = '\0';

    record.time_ms = ngx_http_sammy_now_ns(CLOCK_REALTIME) / 1000000;
    record.path = (const char *) r->unparsed_uri.data;
    record.path_length = ngx_min(path_length, SAMMY_PATH_LOGGED_MAX_BYTES);
    record.status = (int) r->headers_out.status;
    record.bytes = bytes;
    record.body_path = bytes > 0 ? ctx->body_path : NULL;
    record.duration_ms = (double) (ngx_http_sammy_now_ns(CLOCK_MONOTONIC) - ctx->begin_ns) / 1e6;
    record.rate = &ctx->rate;
    record.start = ctx->have_start ? &ctx->start : NULL;
    record.remote_address = address;
    record.remote_port = (int) ngx_inet_get_port(c->sockaddr);
    record.cmcd_problem = ctx->request.problem;
    record.protocol = ngx_http_sammy_protocol(r);
    record.stream_id = ctx->stream_id;
    record.server = "nginx";

    length = sammy_format_telemetry(&record, line, sizeof(line) - 1);
    line[length++] = '\n';

    /* One write per line to a file opened for appending: lines from several workers do not interleave. */
    if (ngx_write_fd(ctx->conf->telemetry->fd, line, length) != (ssize_t) length) {
        ngx_log_error(NGX_LOG_ALERT, c->log, ngx_errno, "sammy: writing the telemetry line to \"%s\" failed",
                      ctx->conf->telemetry->name.data);
    }

    return NGX_OK;
}


/* ------------------------------------------------------------ sammy_metrics: the counters */

static ngx_int_t
ngx_http_sammy_metrics_handler(ngx_http_request_t *r)
{
    size_t        size;
    ngx_int_t     rc;
    ngx_buf_t    *b;
    ngx_chain_t   out;

    static const struct {
        const char                *name;
        ngx_http_sammy_counter_e   counter;
    } series[] = {
        { "sammy_media_responses_total{pacing=\"paced\"}", SAMMY_COUNT_PACED },
        { "sammy_media_responses_total{pacing=\"unpaced\"}", SAMMY_COUNT_UNPACED },
        { "sammy_media_responses_total{pacing=\"disabled\"}", SAMMY_COUNT_DISABLED },
        { "sammy_media_responses_total{pacing=\"unavailable\"}", SAMMY_COUNT_UNAVAILABLE },
        { "sammy_paced_responses_total{mechanism=\"kernel\"}", SAMMY_COUNT_PACED },
        { "sammy_spiral_guard_raised_total{basis=\"tb\"}", SAMMY_COUNT_GUARD_TB },
        { "sammy_spiral_guard_raised_total{basis=\"br\"}", SAMMY_COUNT_GUARD_BR },
        { "sammy_spiral_guard_raised_total{basis=\"" SAMMY_CMCD_DECLARED_FLOOR_KEY "\"}", SAMMY_COUNT_GUARD_DECLARED },
        { "sammy_media_bytes_total", SAMMY_COUNT_BYTES },
        { "sammy_media_responses_aborted_total", SAMMY_COUNT_ABORTED },
        { "sammy_tails_held_total", SAMMY_COUNT_TAIL_HELD },
        { "sammy_tails_stalled_total", SAMMY_COUNT_TAIL_STALLED },
        { "sammy_errors_total{kind=\"cmcd\"}", SAMMY_COUNT_ERR_CMCD },
        { "sammy_errors_total{kind=\"setsockopt\"}", SAMMY_COUNT_ERR_SETSOCKOPT },
        { "sammy_errors_total{kind=\"tcp_info\"}", SAMMY_COUNT_ERR_TCP_INFO },
        { "sammy_h2_streams_active", SAMMY_GAUGE_H2_STREAMS },
    };
    ngx_uint_t  i;

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        return NGX_HTTP_NOT_ALLOWED;
    }

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    size = 0;
    for (i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
        size += ngx_strlen(series[i].name) + 1 + NGX_ATOMIC_T_LEN + 1;
    }

    b = ngx_create_temp_buf(r->pool, size);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    for (i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
        b->last = ngx_sprintf(b->last, "%s %uA\n", series[i].name,
                              ngx_http_sammy_counters == NULL ? 0 : ngx_http_sammy_counters[series[i].counter]);
    }

    ngx_str_set(&r->headers_out.content_type, "text/plain; version=0.0.4; charset=utf-8");
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;
    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = b->last - b->pos;

    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    rc = ngx_http_send_header(r);
    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


static char *
ngx_http_sammy_metrics(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_sammy_metrics_handler;

    return NGX_CONF_OK;
}


/* ------------------------------------------------------------ installing the filters */

static ngx_int_t
ngx_http_sammy_init(ngx_conf_t *cf)
{
    ngx_str_t                   name = ngx_string("sammy_metrics");
    ngx_shm_zone_t             *zone;
    ngx_http_handler_pt        *h;
    ngx_http_core_main_conf_t  *cmcf;

    zone = ngx_shared_memory_add(cf, &name, 8 * ngx_pagesize, &ngx_http_sammy_module);
    if (zone == NULL) {
        return NGX_ERROR;
    }

    zone->init = ngx_http_sammy_init_zone;

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);
    h = ngx_array_push(&cmcf->phases[NGX_HTTP_LOG_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_sammy_log_handler;

    ngx_http_next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = ngx_http_sammy_header_filter;

    ngx_http_next_body_filter = ngx_http_top_body_filter;
    ngx_http_top_body_filter = ngx_http_sammy_body_filter;

    return NGX_OK;
}
