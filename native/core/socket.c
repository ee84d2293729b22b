#include "socket.h"

#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#ifndef SO_MAX_PACING_RATE
#define SO_MAX_PACING_RATE 47
#endif

int sammy_set_max_pacing_rate(int fd, uint64_t rate_bytes_per_s) {
  /* The kernel takes a u64 since Linux 4.13 (a u32 before); pacing needs no fq qdisc (TCP's internal pacing). */
  if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate_bytes_per_s, sizeof rate_bytes_per_s) == 0) return 0;
  return errno;
}

int sammy_set_notsent_lowat(int fd, uint32_t bytes) {
  /* 0 restores the system's default (net.ipv4.tcp_notsent_lowat: no limit unless set). */
  int value = (int)(bytes > INT32_MAX ? INT32_MAX : bytes);
  if (setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &value, sizeof value) == 0) return 0;
  return errno;
}

bool sammy_read_tcp_info(int fd, sammy_tcp_info *out) {
  /* The kernel may fill more than this header describes (280 bytes against 232 here): it stops at our size. */
  struct tcp_info info;
  socklen_t length = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return false;
  if (length < offsetof(struct tcp_info, tcpi_bytes_retrans) + sizeof info.tcpi_bytes_retrans) return false;
  out->rtt_us = info.tcpi_rtt;
  out->min_rtt_us = info.tcpi_min_rtt;
  out->total_retrans = info.tcpi_total_retrans;
  out->snd_cwnd_packets = info.tcpi_snd_cwnd;
  out->snd_mss_bytes = info.tcpi_snd_mss;
  out->notsent_bytes = info.tcpi_notsent_bytes;
  out->delivery_rate_bytes_per_s = info.tcpi_delivery_rate;
  out->bytes_sent = info.tcpi_bytes_sent;
  out->bytes_retrans = info.tcpi_bytes_retrans;
  out->max_pacing_rate_bytes_per_s = info.tcpi_max_pacing_rate;
  out->state = info.tcpi_state;
  return true;
}

/* The kernel's TCP states (include/net/tcp_states.h): 1 ESTABLISHED, 8 CLOSE_WAIT. */
bool sammy_tcp_state_sending(uint8_t state) { return state == 1 || state == 8; }

bool sammy_same_peer(int fd, const struct sockaddr *peer) {
  struct sockaddr_storage now;
  socklen_t length = sizeof now;
  if (peer == NULL || getpeername(fd, (struct sockaddr *)&now, &length) != 0 || now.ss_family != peer->sa_family) return false;
  if (peer->sa_family == AF_INET) {
    const struct sockaddr_in *a = (const struct sockaddr_in *)&now, *b = (const struct sockaddr_in *)peer;
    return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
  }
  if (peer->sa_family == AF_INET6) {
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&now, *b = (const struct sockaddr_in6 *)peer;
    return a->sin6_port == b->sin6_port && memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
  }
  return false;
}
