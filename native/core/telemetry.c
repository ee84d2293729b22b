#include "telemetry.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct {
  char *out;
  size_t cap;
  size_t length;
} writer;

static void put(writer *w, const char *fmt, ...) {
  if (w->length + 1 >= w->cap) return;
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(w->out + w->length, w->cap - w->length, fmt, args);
  va_end(args);
  if (n < 0) return;
  w->length += (size_t)n;
  if (w->length >= w->cap) w->length = w->cap - 1;
}

/* A JSON string; bytes above 0x7f are written as \u00XX (the path's bytes, read as latin1, as Node reads them). */
static void put_string(writer *w, const char *s, size_t n) {
  put(w, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\') {
      put(w, "\\%c", ch);
    } else if (ch < 0x20 || ch >= 0x7f) {
      put(w, "\\u%04x", ch);
    } else {
      put(w, "%c", ch);
    }
  }
  put(w, "\"");
}

static void put_c_string(writer *w, const char *s) {
  size_t n = 0;
  while (s[n] != '\0') n++;
  put_string(w, s, n);
}

static void put_positive_or_null(writer *w, const char *name, int64_t value) {
  if (value > 0) {
    put(w, ",\"%s\":%lld", name, (long long)value);
  } else {
    put(w, ",\"%s\":null", name);
  }
}

static void put_string_or_null(writer *w, const char *name, const char *value) {
  put(w, ",\"%s\":", name);
  if (value != NULL && value[0] != '\0') {
    put_c_string(w, value);
  } else {
    put(w, "null");
  }
}

size_t sammy_format_telemetry(const sammy_response_record *r, char *out, size_t cap) {
  writer w = {out, cap, 0};
  if (cap == 0) return 0;
  out[0] = '\0';
  const sammy_tcp_info *s = r->start;
  const sammy_tcp_info *e = r->end;
  const sammy_rate_decision *d = r->rate;
  bool paced = d->outcome == SAMMY_PACING_PACED;
  put(&w, "{\"level\":30,\"time\":%lld,\"path\":", (long long)r->time_ms);
  put_string(&w, r->path, r->path_length);
  put(&w, ",\"status\":%d,\"bytes\":%lld", r->status, (long long)r->bytes);
  put_string_or_null(&w, "bodyPath", r->body_path);
  put(&w, ",\"durationMs\":%.3f", r->duration_ms);
  put_positive_or_null(&w, "rtpKbps", d->rtp_kbps);
  put_positive_or_null(&w, "appliedRateKbps", paced ? d->applied_rate_kbps : 0);
  put(&w, ",\"pacing\":\"%s\"", sammy_pacing_name(d->outcome));
  /* bytes x 8 / 1000 per second, as the server's achievedRateKbps. */
  int64_t achieved = r->duration_ms > 0 && r->bytes > 0 ? (int64_t)((double)r->bytes * 8.0 / r->duration_ms + 0.5) : 0;
  put_positive_or_null(&w, "achievedRateKbps", achieved);
  /* The native servers have no burst knob: their trains are the kernel's (native/README.md "Burst size"). */
  put(&w, ",\"burstPackets\":null,\"burstMechanism\":%s,\"trainPackets\":null", paced ? "\"kernel\"" : "null");
  if (e != NULL) {
    put(&w, ",\"rttUs\":%u,\"minRttUs\":%u", e->rtt_us, e->min_rtt_us);
  } else {
    put(&w, ",\"rttUs\":null,\"minRttUs\":null");
  }
  if (e != NULL && s != NULL) {
    put(&w, ",\"retransmits\":%u", e->total_retrans - s->total_retrans);
  } else {
    put(&w, ",\"retransmits\":null");
  }
  if (e != NULL) {
    put(&w, ",\"totalRetrans\":%u,\"deliveryRateBytesPerS\":%llu", e->total_retrans,
        (unsigned long long)e->delivery_rate_bytes_per_s);
  } else {
    put(&w, ",\"totalRetrans\":null,\"deliveryRateBytesPerS\":null");
  }
  if (e != NULL && s != NULL) {
    put(&w, ",\"bytesRetrans\":%llu,\"bytesSent\":%llu", (unsigned long long)(e->bytes_retrans - s->bytes_retrans),
        (unsigned long long)(e->bytes_sent - s->bytes_sent));
  } else {
    put(&w, ",\"bytesRetrans\":null,\"bytesSent\":null");
  }
  if (e == NULL) {
    put(&w, ",\"maxPacingRateBytesPerS\":null,\"cwndPackets\":null");
  } else if (e->max_pacing_rate_bytes_per_s >= (UINT64_C(1) << 63)) {
    put(&w, ",\"maxPacingRateBytesPerS\":\"unlimited\",\"cwndPackets\":%u", e->snd_cwnd_packets);
  } else {
    put(&w, ",\"maxPacingRateBytesPerS\":%llu,\"cwndPackets\":%u", (unsigned long long)e->max_pacing_rate_bytes_per_s,
        e->snd_cwnd_packets);
  }
  put(&w, ",\"remoteAddress\":");
  if (r->remote_address != NULL && r->remote_address[0] != '\0') {
    put_c_string(&w, r->remote_address);
    put(&w, ",\"remotePort\":%d", r->remote_port);
  } else {
    put(&w, "null,\"remotePort\":null");
  }
  put(&w, ",\"aborted\":%s", r->aborted ? "true" : "false");
  put_string_or_null(&w, "cmcdProblem", r->cmcd_problem);
  bool floor = paced && d->guard_basis != NULL;
  put_positive_or_null(&w, "guardFloorKbps", floor ? d->guard_floor_kbps : 0);
  put_string_or_null(&w, "guardBasis", floor ? d->guard_basis : NULL);
  put(&w, ",\"guardRaised\":%s", paced && d->guard == SAMMY_GUARD_RAISED ? "true" : "false");
  if (r->cache_lookup != NULL) put_string_or_null(&w, "cacheLookup", r->cache_lookup);
  if (r->protocol != NULL) {
    put_string_or_null(&w, "protocol", r->protocol);
    put_positive_or_null(&w, "streamId", r->stream_id);
  }
  put(&w, ",\"server\":");
  put_c_string(&w, r->server != NULL ? r->server : "native");
  put(&w, ",\"msg\":\"media response\"}");
  return w.length;
}
