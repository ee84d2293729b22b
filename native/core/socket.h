/*
 * The one adapter to the kernel's socket options, as server/src/socket.ts is for
 * the Node server: SO_MAX_PACING_RATE on a connection, and the TCP_INFO fields
 * the telemetry line and the drain policy read.
 */
#ifndef SAMMY_SOCKET_H
#define SAMMY_SOCKET_H

#include <stdbool.h>
#include <stdint.h>

/* The kernel's "no cap" (~0UL): what a socket starts with and what a finished response restores. */
#define SAMMY_UNLIMITED_PACING_RATE UINT64_MAX

typedef struct {
  uint32_t rtt_us;
  uint32_t min_rtt_us;
  uint32_t total_retrans;
  uint32_t snd_cwnd_packets;
  uint32_t snd_mss_bytes;
  uint32_t notsent_bytes;
  uint64_t delivery_rate_bytes_per_s;
  uint64_t bytes_sent;
  uint64_t bytes_retrans;
  /* UINT64_MAX (or anything from 2^63) when the socket has no cap. */
  uint64_t max_pacing_rate_bytes_per_s;
  /* TCP_ESTABLISHED (1), TCP_CLOSE_WAIT (8), ...: whether the peer is still there to take the tail. */
  uint8_t state;
} sammy_tcp_info;

/* Whether a socket in `state` still sends data to its peer (ESTABLISHED or CLOSE_WAIT). */
bool sammy_tcp_state_sending(uint8_t state);

/* 0, or the errno of a failed setsockopt. */
int sammy_set_max_pacing_rate(int fd, uint64_t rate_bytes_per_s);

/*
 * TCP_NOTSENT_LOWAT (Linux 3.12): the socket takes more data only while fewer than
 * `bytes` of it wait unsent; 0 restores the system's default. 0, or the errno.
 */
int sammy_set_notsent_lowat(int fd, uint32_t bytes);

/* False when the kernel refuses, or returns fewer bytes than the last field read (kernels before 4.19). */
bool sammy_read_tcp_info(int fd, sammy_tcp_info *out);

struct sockaddr;

/*
 * Whether `fd` is still connected to `peer`: a descriptor read once may have been
 * closed and its number given to another connection since.
 */
bool sammy_same_peer(int fd, const struct sockaddr *peer);

#endif
