/*
 * labtools: the lab's packet-level tools, in C because they time single packets.
 *
 *   labtools delay --down DEV --up DEV --down-ms MS --up-ms MS [--rt]
 *       A propagation-delay line (the kernel here has no netem). Creates one TUN
 *       device per direction; the router namespace routes each direction's packets
 *       into its TUN (policy routing by input interface). Every packet read from a
 *       TUN is stamped with CLOCK_MONOTONIC and written back into the same TUN once
 *       its delay has passed, so the kernel forwards it on. Prints "ready" once the
 *       devices exist, and one JSON line of statistics when it is told to stop.
 *   labtools delay ... --down-trace FILE --down-queue-bytes B
 *       Trace mode for the downlink: a packet read from dl-down first waits in a
 *       byte-limited droptail queue of B bytes, which drains only at the delivery
 *       opportunities in FILE (written by the lab from a trace, see the schedule
 *       format at load_schedule). Each opportunity serves up to 1500 bytes of queued
 *       packets, in order; a packet larger than what is left of an opportunity
 *       keeps its served part for the next one; an opportunity that finds the queue
 *       empty is lost. A served packet then takes the propagation delay. The trace
 *       starts when the line starts and again at every SIGUSR1 (the lab restarts it
 *       at every session's play request, printing "restart <realtime ms> <trace
 *       us>"). A restart starts at the trace's time 0, or, with --down-trace-start
 *       FILE, at the trace time (us, a decimal integer) the file holds when the
 *       signal comes (the lab writes it just before; a missing file means 0, a file
 *       it cannot read refuses the restart with "restart-refused <reason>"). Every
 *       100 ms of trace time it prints "q <realtime ms> <trace us> <queued bytes>
 *       <queue drops> <served bytes> <us the oldest queued packet has waited>", the
 *       trace time counted from the trace's own start (a restart at T goes on from T).
 *   labtools trace-sim --trace FILE --queue-bytes B [--start-us T]
 *       The trace-mode queue on a simulated clock, for tests (see cmd_trace_sim).
 *   labtools udp-send --dst IP --port N --rate-kbps K --bytes B --duration-s S [--rt]
 *       Paced UDP: one datagram every B*8/K ms (absolute clock_nanosleep), each
 *       carrying its sequence number and CLOCK_REALTIME send time.
 *   labtools udp-recv --port N
 *       Prints "seq sendNs recvNs" per datagram; recvNs is the kernel's receive
 *       timestamp (SO_TIMESTAMPNS), so the one-way delay does not include this
 *       process's scheduling. Both ends share this machine's clock.
 *   labtools tcp-send --dst IP --port N --cc NAME --duration-s S
 *       A bulk TCP sender with the given congestion control (TCP_CONGESTION).
 *   labtools tcp-recv --port N
 *       Accepts one connection, reads it to the end, prints "realtimeMs bytesTotal"
 *       every 50 ms of receiving and once at the end.
 *
 * Every tool exits on SIGTERM or SIGINT (printing what it has) and, through
 * PR_SET_PDEATHSIG, when the process that started it dies.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested = 0;
static volatile sig_atomic_t restart_requested = 0;

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static void on_restart(int sig) {
  (void)sig;
  restart_requested = 1;
}

static void die(const char *what) {
  fprintf(stderr, "labtools: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void usage(void) {
  fprintf(stderr,
          "usage: labtools delay --down DEV --up DEV --down-ms MS --up-ms MS [--down-trace FILE --down-queue-bytes B [--down-trace-start FILE]] [--rt]\n"
          "       labtools trace-sim --trace FILE --queue-bytes B [--start-us T]\n"
          "       labtools udp-send --dst IP --port N --rate-kbps K --bytes B --duration-s S [--rt]\n"
          "       labtools udp-recv --port N\n"
          "       labtools tcp-send --dst IP --port N --cc NAME --duration-s S\n"
          "       labtools tcp-recv --port N\n");
  exit(2);
}

/* Signals interrupt blocking calls (no SA_RESTART), so loops see stop_requested. */
static void install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() == 1) exit(0); /* the parent died before prctl took effect */
}

/* Real-time priority: timing of single packets must not wait for Chromium's threads. */
static void go_realtime(void) {
  struct sched_param sp = {.sched_priority = 50};
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) fprintf(stderr, "labtools: SCHED_FIFO unavailable: %s\n", strerror(errno));
  prctl(PR_SET_TIMERSLACK, 1UL);
}

static int64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *arg(int argc, char **argv, const char *name, const char *fallback) {
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], name) == 0) {
      if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) return argv[i + 1];
      return "";
    }
  }
  if (fallback == NULL) {
    fprintf(stderr, "labtools %s: missing %s\n", argv[1], name);
    usage();
  }
  return fallback;
}

static int flag(int argc, char **argv, const char *name) { return strcmp(arg(argc, argv, name, "\x01"), "\x01") != 0; }

static double number(int argc, char **argv, const char *name) {
  const char *text = arg(argc, argv, name, NULL);
  char *end;
  double v = strtod(text, &end);
  if (*text == '\0' || *end != '\0') {
    fprintf(stderr, "labtools %s: %s must be a number, got \"%s\"\n", argv[1], name, text);
    usage();
  }
  return v;
}

/* ------------------------------------------------------------------ delay line */

#define SLOT_BYTES 2048
#define SLOTS 16384          /* ~0.4 s of 40 Mbit/s full-size packets per direction */
#define LATE_BINS 20001      /* lateness histogram: 1 us bins up to 20 ms, then overflow */
#define OPPORTUNITY_BYTES 1500
#define SAMPLE_NS 100000000LL /* trace mode: one "q" line per 100 ms of trace time */

/*
 * A trace's delivery opportunities: offsets (us) from the trace's start, sorted; the
 * part from loop_from_us up to period_us repeats for ever after the first pass.
 */
struct schedule {
  int64_t *offset_us;
  size_t n;
  int64_t period_us, loop_from_us;
  size_t loop_index; /* first opportunity at or after loop_from_us */
};

/*
 * One direction. Its ring holds, from head, first the packets that have crossed the
 * bottleneck and wait out the propagation delay (`served` of them, due at due_ns),
 * then, in trace mode, the packets still queued at the bottleneck (due_ns holds
 * their arrival time until they are served).
 */
struct direction {
  const char *name;
  int fd;
  int64_t delay_ns;
  unsigned char *buf; /* SLOTS x SLOT_BYTES */
  int64_t *due_ns;
  uint16_t *len;
  unsigned head, count;
  uint64_t packets, bytes, drops_full, write_errors;
  uint64_t *late_hist;
  int64_t late_max_ns;
  unsigned max_queued;
  /* trace mode */
  struct schedule *trace;
  unsigned served;          /* packets past the bottleneck, at the front of the ring */
  unsigned partial_bytes;   /* bytes of the first queued packet served so far */
  uint64_t queue_limit, queued_bytes, max_queued_bytes;
  uint64_t drops_queue, served_bytes, opportunities, unused_opportunities, restarts;
  int64_t start_ns;         /* the trace's time 0 */
  size_t next_index;        /* the next opportunity */
  int64_t shift_us;         /* added to offsets after each repetition */
  int64_t next_sample_ns;
};

static int open_tun(const char *name) {
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) die("open /dev/net/tun");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) die("TUNSETIFF");
  return fd;
}

/*
 * The schedule file, as the lab writes it:
 *   period_us P
 *   loop_from_us L
 *   then one opportunity offset in microseconds per line, non-decreasing, below P.
 * Lines starting with '#' are comments. The part [L, P) must hold an opportunity.
 */
static struct schedule *load_schedule(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) die(path);
  struct schedule *s = calloc(1, sizeof *s);
  size_t cap = 65536;
  s->offset_us = malloc(cap * sizeof *s->offset_us);
  if (!s || !s->offset_us) die("malloc");
  s->period_us = -1;
  s->loop_from_us = -1;
  char line[128];
  while (fgets(line, sizeof line, f)) {
    long long v;
    if (line[0] == '#' || line[0] == '\n') continue;
    if (sscanf(line, "period_us %lld", &v) == 1) {
      s->period_us = v;
    } else if (sscanf(line, "loop_from_us %lld", &v) == 1) {
      s->loop_from_us = v;
    } else if (sscanf(line, "%lld", &v) == 1) {
      if (v < 0 || (s->n > 0 && v < s->offset_us[s->n - 1])) {
        fprintf(stderr, "labtools delay: %s: offsets must be non-negative and non-decreasing (%lld)\n", path, v);
        exit(2);
      }
      if (s->n == cap) {
        cap *= 2;
        s->offset_us = realloc(s->offset_us, cap * sizeof *s->offset_us);
        if (!s->offset_us) die("realloc");
      }
      s->offset_us[s->n++] = v;
    } else {
      fprintf(stderr, "labtools delay: %s: cannot read line \"%s\"\n", path, line);
      exit(2);
    }
  }
  fclose(f);
  if (s->period_us <= 0 || s->loop_from_us < 0 || s->loop_from_us >= s->period_us || s->n == 0 || s->offset_us[s->n - 1] >= s->period_us) {
    fprintf(stderr, "labtools delay: %s: needs period_us > loop_from_us >= 0 and offsets below the period\n", path);
    exit(2);
  }
  while (s->loop_index < s->n && s->offset_us[s->loop_index] < s->loop_from_us) s->loop_index++;
  if (s->loop_index == s->n) {
    fprintf(stderr, "labtools delay: %s: the repeating part [loop_from_us, period_us) has no opportunity\n", path);
    exit(2);
  }
  return s;
}

static void direction_init(struct direction *d, const char *name, const char *dev, double delay_ms) {
  memset(d, 0, sizeof *d);
  d->name = name;
  d->fd = open_tun(dev);
  d->delay_ns = (int64_t)(delay_ms * 1e6);
  d->buf = malloc((size_t)SLOTS * SLOT_BYTES);
  d->due_ns = calloc(SLOTS, sizeof *d->due_ns);
  d->len = calloc(SLOTS, sizeof *d->len);
  d->late_hist = calloc(LATE_BINS + 1, sizeof *d->late_hist);
  if (!d->buf || !d->due_ns || !d->len || !d->late_hist) die("malloc");
}

/*
 * Starts the trace again at its time `at_us` (0: its start), `now` being that moment;
 * the queue keeps what it holds. Past the first pass, a time falls in the repeating
 * part [loop_from_us, period_us), shifted by whole repetitions, as the opportunities do.
 */
static void trace_restart(struct direction *d, int64_t now, int64_t at_us) {
  const struct schedule *s = d->trace;
  int64_t shift_us = 0, t = at_us;
  if (t >= s->period_us) {
    int64_t loop_us = s->period_us - s->loop_from_us;
    int64_t reps = (t - s->loop_from_us) / loop_us;
    shift_us = reps * loop_us;
    t -= shift_us;
  }
  /* The first opportunity at or after t in this pass (binary search), else the next pass's first. */
  size_t lo = shift_us > 0 ? s->loop_index : 0, hi = s->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->offset_us[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == s->n) {
    lo = s->loop_index;
    shift_us += s->period_us - s->loop_from_us;
  }
  d->start_ns = now - at_us * 1000LL;
  d->next_index = lo;
  d->shift_us = shift_us;
  d->next_sample_ns = now;
}

/*
 * The trace time (us) the next restart starts at, from --down-trace-start's file: 0 when
 * there is no file or no such file; -1 (with `why` set) when the file holds anything but
 * a non-negative decimal integer.
 */
static int64_t restart_at_us(const char *path, const char **why) {
  if (!path || !*path) return 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT) return 0;
    *why = strerror(errno);
    return -1;
  }
  char text[32] = {0};
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  while (*end == '\n' || *end == ' ') end++;
  if (end == text || *end != 0 || errno != 0 || v < 0 || v > 1000000000000LL) {
    *why = "the start file must hold a whole number of microseconds, 0 to 10^12";
    return -1;
  }
  return v;
}

static int64_t next_opportunity_ns(const struct direction *d) {
  return d->start_ns + (d->trace->offset_us[d->next_index] + d->shift_us) * 1000LL;
}

static void advance_opportunity(struct direction *d) {
  const struct schedule *s = d->trace;
  if (++d->next_index == s->n) {
    d->next_index = s->loop_index;
    d->shift_us += s->period_us - s->loop_from_us;
  }
}

/* Takes the packet just put in the ring's next slot; in trace mode it may be dropped (droptail). Returns 0 on a drop. */
static int direction_enqueue(struct direction *d, unsigned n, int64_t now) {
  unsigned slot = (d->head + d->count) % SLOTS;
  if (d->trace) {
    if (d->queued_bytes + n > d->queue_limit) {
      d->drops_queue++; /* the slot is simply not taken */
      return 0;
    }
    d->queued_bytes += n;
    if (d->queued_bytes > d->max_queued_bytes) d->max_queued_bytes = d->queued_bytes;
    d->due_ns[slot] = now; /* arrival, until served */
  } else {
    d->due_ns[slot] = now + d->delay_ns;
  }
  d->len[slot] = (uint16_t)n;
  d->count++;
  if (d->count > d->max_queued) d->max_queued = d->count;
  return 1;
}

/* Reads every waiting packet; each gets its due time (or, queued, its arrival) from its own read time. */
static void direction_read(struct direction *d) {
  for (;;) {
    if (d->count == SLOTS) {
      /* The line is full: read and drop, so the TUN queue does not stall. */
      unsigned char scratch[SLOT_BYTES];
      ssize_t n = read(d->fd, scratch, sizeof scratch);
      if (n <= 0) return;
      d->drops_full++;
      continue;
    }
    unsigned slot = (d->head + d->count) % SLOTS;
    ssize_t n = read(d->fd, d->buf + (size_t)slot * SLOT_BYTES, SLOT_BYTES);
    if (n <= 0) return; /* EAGAIN: drained */
    direction_enqueue(d, (unsigned)n, now_ns(CLOCK_MONOTONIC));
  }
}

/*
 * Trace mode: spends every opportunity up to `now` on the queue. A packet is served
 * by an opportunity only if it had arrived by then. Returns the next opportunity
 * time while packets wait, else -1 (lost opportunities need no wake-up).
 */
static int64_t direction_serve(struct direction *d, int64_t now) {
  for (;;) {
    int64_t at = next_opportunity_ns(d);
    if (at > now) return d->count > d->served ? at : -1;
    uint64_t budget = OPPORTUNITY_BYTES;
    int used = 0;
    while (budget > 0 && d->count > d->served) {
      unsigned slot = (d->head + d->served) % SLOTS;
      if (d->due_ns[slot] > at) break; /* arrived after this opportunity */
      unsigned left = d->len[slot] - d->partial_bytes;
      used = 1;
      if (left > budget) {
        d->partial_bytes += (unsigned)budget;
        d->served_bytes += budget;
        budget = 0;
        break;
      }
      budget -= left;
      d->served_bytes += left;
      d->partial_bytes = 0;
      d->queued_bytes -= d->len[slot];
      d->due_ns[slot] = at + d->delay_ns;
      d->served++;
    }
    d->opportunities++;
    if (!used) d->unused_opportunities++;
    advance_opportunity(d);
  }
}

/* Trace mode: one "q" line per 100 ms of trace time; returns the next sample time. */
static int64_t direction_sample(struct direction *d, int64_t now) {
  if (d->next_sample_ns > now) return d->next_sample_ns;
  while (d->next_sample_ns <= now) {
    /* How long the oldest queued packet has waited: the queueing delay right now. */
    int64_t head_age_us = 0;
    if (d->count > d->served) head_age_us = (now - d->due_ns[(d->head + d->served) % SLOTS]) / 1000;
    printf("q %lld %lld %llu %llu %llu %lld\n", (long long)(now_ns(CLOCK_REALTIME) / 1000000), (long long)((now - d->start_ns) / 1000),
           (unsigned long long)d->queued_bytes, (unsigned long long)d->drops_queue, (unsigned long long)d->served_bytes, (long long)head_age_us);
    d->next_sample_ns += SAMPLE_NS;
  }
  fflush(stdout);
  return d->next_sample_ns;
}

/* Writes every packet whose time has come; returns the next due time, or -1. */
static int64_t direction_release(struct direction *d) {
  while ((d->trace ? d->served : d->count) > 0) {
    unsigned slot = d->head;
    int64_t now = now_ns(CLOCK_MONOTONIC);
    if (d->due_ns[slot] > now) return d->due_ns[slot];
    if (write(d->fd, d->buf + (size_t)slot * SLOT_BYTES, d->len[slot]) < 0) d->write_errors++;
    int64_t late = now - d->due_ns[slot];
    if (late > d->late_max_ns) d->late_max_ns = late;
    int64_t bin = late / 1000;
    d->late_hist[bin < LATE_BINS ? bin : LATE_BINS]++;
    d->packets++;
    d->bytes += d->len[slot];
    d->head = (d->head + 1) % SLOTS;
    d->count--;
    if (d->trace) d->served--;
  }
  return -1;
}

static double late_percentile_us(const struct direction *d, double p) {
  uint64_t total = 0;
  for (int i = 0; i <= LATE_BINS; i++) total += d->late_hist[i];
  if (total == 0) return 0;
  uint64_t rank = (uint64_t)(p * (double)(total - 1)), seen = 0;
  for (int i = 0; i <= LATE_BINS; i++) {
    seen += d->late_hist[i];
    if (seen > rank) return i;
  }
  return LATE_BINS;
}

static void direction_report(const struct direction *d, FILE *out) {
  fprintf(out,
          "\"%s\":{\"delayMs\":%.3f,\"packets\":%llu,\"bytes\":%llu,\"dropsFull\":%llu,\"writeErrors\":%llu,"
          "\"maxQueued\":%u,\"latenessUs\":{\"p50\":%.0f,\"p99\":%.0f,\"p999\":%.0f,\"max\":%.0f}",
          d->name, d->delay_ns / 1e6, (unsigned long long)d->packets, (unsigned long long)d->bytes,
          (unsigned long long)d->drops_full, (unsigned long long)d->write_errors, d->max_queued,
          late_percentile_us(d, 0.5), late_percentile_us(d, 0.99), late_percentile_us(d, 0.999), d->late_max_ns / 1e3);
  if (d->trace)
    fprintf(out,
            ",\"trace\":{\"queueLimitBytes\":%llu,\"maxQueuedBytes\":%llu,\"dropsQueue\":%llu,\"servedBytes\":%llu,"
            "\"opportunities\":%llu,\"unusedOpportunities\":%llu,\"restarts\":%llu}",
            (unsigned long long)d->queue_limit, (unsigned long long)d->max_queued_bytes, (unsigned long long)d->drops_queue,
            (unsigned long long)d->served_bytes, (unsigned long long)d->opportunities, (unsigned long long)d->unused_opportunities,
            (unsigned long long)d->restarts);
  fprintf(out, "}");
}

static int cmd_delay(int argc, char **argv) {
  struct direction dirs[2];
  direction_init(&dirs[0], "down", arg(argc, argv, "--down", NULL), number(argc, argv, "--down-ms"));
  direction_init(&dirs[1], "up", arg(argc, argv, "--up", NULL), number(argc, argv, "--up-ms"));
  struct direction *down = &dirs[0];
  const char *trace_file = arg(argc, argv, "--down-trace", "");
  if (*trace_file) {
    down->trace = load_schedule(trace_file);
    double limit = number(argc, argv, "--down-queue-bytes");
    if (limit < OPPORTUNITY_BYTES) {
      fprintf(stderr, "labtools delay: --down-queue-bytes must be at least %d\n", OPPORTUNITY_BYTES);
      usage();
    }
    down->queue_limit = (uint64_t)limit;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_restart;
    sigaction(SIGUSR1, &sa, NULL);
  }
  if (flag(argc, argv, "--rt")) go_realtime();
  const char *start_file = down->trace ? arg(argc, argv, "--down-trace-start", "") : "";
  if (down->trace) trace_restart(down, now_ns(CLOCK_MONOTONIC), 0);
  printf("ready\n");
  fflush(stdout);

  struct pollfd pfd[2] = {{.fd = dirs[0].fd, .events = POLLIN}, {.fd = dirs[1].fd, .events = POLLIN}};
  while (!stop_requested) {
    int64_t next = -1;
    if (down->trace) {
      int64_t now = now_ns(CLOCK_MONOTONIC);
      if (restart_requested) {
        restart_requested = 0;
        const char *why = NULL;
        int64_t at_us = restart_at_us(start_file, &why);
        if (at_us < 0) {
          printf("restart-refused %s\n", why);
        } else {
          down->restarts++;
          trace_restart(down, now, at_us);
          printf("restart %lld %lld\n", (long long)(now_ns(CLOCK_REALTIME) / 1000000), (long long)at_us);
        }
        fflush(stdout);
      }
      int64_t opportunity = direction_serve(down, now);
      next = direction_sample(down, now);
      if (opportunity >= 0 && opportunity < next) next = opportunity;
    }
    for (int i = 0; i < 2; i++) {
      int64_t due = direction_release(&dirs[i]);
      if (due >= 0 && (next < 0 || due < next)) next = due;
    }
    struct timespec timeout, *tp = NULL;
    if (next >= 0) {
      int64_t wait = next - now_ns(CLOCK_MONOTONIC);
      if (wait < 0) wait = 0;
      timeout.tv_sec = wait / 1000000000LL;
      timeout.tv_nsec = wait % 1000000000LL;
      tp = &timeout;
    }
    int ready = ppoll(pfd, 2, tp, NULL);
    if (ready < 0 && errno != EINTR) die("ppoll");
    for (int i = 0; i < 2; i++)
      if (ready > 0 && (pfd[i].revents & POLLIN)) direction_read(&dirs[i]);
  }
  printf("{");
  direction_report(&dirs[0], stdout);
  printf(",");
  direction_report(&dirs[1], stdout);
  printf("}\n");
  fflush(stdout);
  return 0;
}

/*
 * labtools trace-sim --trace FILE --queue-bytes B [--start-us T]: the trace-mode queue
 * on a simulated clock, for tests. The simulated clock is the trace's time, started
 * (as a restart would) at T us, 0 by default. Reads "arrival_us bytes" per packet
 * (arrivals in order, none before T) from stdin; prints "drop I" for the I-th packet
 * (0-based) when the queue refuses it, and "served T" in packet order for each packet
 * that crossed, T being the opportunity (us of trace time) that finished it.
 */
static void sim_pop(struct direction *d) {
  while (d->served > 0) {
    printf("served %lld\n", (long long)(d->due_ns[d->head] / 1000));
    d->head = (d->head + 1) % SLOTS;
    d->count--;
    d->served--;
  }
}

static int cmd_trace_sim(int argc, char **argv) {
  struct direction d;
  memset(&d, 0, sizeof d);
  d.trace = load_schedule(arg(argc, argv, "--trace", NULL));
  d.queue_limit = (uint64_t)number(argc, argv, "--queue-bytes");
  d.due_ns = calloc(SLOTS, sizeof *d.due_ns);
  d.len = calloc(SLOTS, sizeof *d.len);
  if (!d.due_ns || !d.len) die("calloc");
  const char *start_text = arg(argc, argv, "--start-us", "0");
  char *start_end;
  long long start_us = strtoll(start_text, &start_end, 10);
  if (*start_end != '\0' || start_us < 0) {
    fprintf(stderr, "labtools trace-sim: --start-us must be a whole number of microseconds >= 0, got \"%s\"\n", start_text);
    usage();
  }
  trace_restart(&d, start_us * 1000LL, start_us);
  long long arrival_us;
  unsigned bytes;
  for (unsigned long i = 0; scanf("%lld %u", &arrival_us, &bytes) == 2; i++) {
    direction_serve(&d, arrival_us * 1000 - 1); /* opportunities before it */
    sim_pop(&d);
    if (d.count == SLOTS || !direction_enqueue(&d, bytes, arrival_us * 1000)) printf("drop %lu\n", i);
  }
  while (d.count > d.served) direction_serve(&d, next_opportunity_ns(&d));
  sim_pop(&d);
  return 0;
}

/* ------------------------------------------------------------------ UDP */

struct udp_payload {
  uint32_t magic;
  uint32_t seq;
  int64_t send_ns;
};
#define UDP_MAGIC 0x53414d59u /* "SAMY" */

static struct sockaddr_in address(const char *ip, int port) {
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
    fprintf(stderr, "labtools: not an IPv4 address: %s\n", ip);
    exit(2);
  }
  return sa;
}

static int cmd_udp_send(int argc, char **argv) {
  struct sockaddr_in dst = address(arg(argc, argv, "--dst", NULL), (int)number(argc, argv, "--port"));
  double rate_kbps = number(argc, argv, "--rate-kbps");
  int bytes = (int)number(argc, argv, "--bytes");
  double duration_s = number(argc, argv, "--duration-s");
  if (rate_kbps <= 0 || bytes < (int)sizeof(struct udp_payload) || bytes > 1472 || duration_s <= 0) usage();
  if (flag(argc, argv, "--rt")) go_realtime();
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  if (connect(fd, (struct sockaddr *)&dst, sizeof dst) < 0) die("connect");
  unsigned char packet[1472];
  memset(packet, 0, sizeof packet);
  int64_t interval_ns = (int64_t)(bytes * 8.0 / rate_kbps * 1e6);
  int64_t start = now_ns(CLOCK_MONOTONIC), end = start + (int64_t)(duration_s * 1e9);
  uint32_t seq = 0;
  uint64_t errors = 0;
  for (int64_t due = start; due < end && !stop_requested; due += interval_ns) {
    struct timespec ts = {.tv_sec = due / 1000000000LL, .tv_nsec = due % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop_requested) {
    }
    if (stop_requested) break;
    struct udp_payload p = {.magic = UDP_MAGIC, .seq = seq++, .send_ns = now_ns(CLOCK_REALTIME)};
    memcpy(packet, &p, sizeof p);
    if (send(fd, packet, (size_t)bytes, 0) < 0) errors++;
  }
  printf("{\"sent\":%u,\"sendErrors\":%llu}\n", seq, (unsigned long long)errors);
  return 0;
}

static int bound_socket(int type, int port) {
  int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = address("0.0.0.0", port);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) die("bind");
  return fd;
}

static int cmd_udp_recv(int argc, char **argv) {
  int fd = bound_socket(SOCK_DGRAM, (int)number(argc, argv, "--port"));
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) < 0) die("SO_TIMESTAMPNS");
  printf("ready\n");
  fflush(stdout);
  while (!stop_requested) {
    struct udp_payload p;
    unsigned char data[1500];
    char control[256];
    struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t n = recvmsg(fd, &msg, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("recvmsg");
    }
    if (n < (ssize_t)sizeof p) continue;
    memcpy(&p, data, sizeof p);
    if (p.magic != UDP_MAGIC) continue;
    int64_t recv_ns = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        recv_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
      }
    }
    if (recv_ns < 0) recv_ns = now_ns(CLOCK_REALTIME);
    printf("%u %lld %lld\n", p.seq, (long long)p.send_ns, (long long)recv_ns);
  }
  fflush(stdout);
  return 0;
}

/* ------------------------------------------------------------------ TCP */

static int cmd_tcp_send(int argc, char **argv) {
  struct sockaddr_in dst = address(arg(argc, argv, "--dst", NULL), (int)number(argc, argv, "--port"));
  const char *cc = arg(argc, argv, "--cc", NULL);
  double duration_s = number(argc, argv, "--duration-s");
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) < 0) die("TCP_CONGESTION");
  if (connect(fd, (struct sockaddr *)&dst, sizeof dst) < 0) die("connect");
  static unsigned char block[65536];
  int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(duration_s * 1e9);
  uint64_t sent = 0;
  while (!stop_requested && now_ns(CLOCK_MONOTONIC) < end) {
    ssize_t n = send(fd, block, sizeof block, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    sent += (uint64_t)n;
  }
  close(fd);
  printf("{\"sent\":%llu,\"cc\":\"%s\"}\n", (unsigned long long)sent, cc);
  return 0;
}

static int cmd_tcp_recv(int argc, char **argv) {
  /* A line per sample as it is printed (20 a second): a sink killed before it could
   * flush would otherwise lose its last seconds and cut a line in two. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  int lfd = bound_socket(SOCK_STREAM, (int)number(argc, argv, "--port"));
  if (listen(lfd, 1) < 0) die("listen");
  printf("ready\n");
  fflush(stdout);
  int fd = -1;
  while (fd < 0 && !stop_requested) {
    fd = accept(lfd, NULL, NULL);
    if (fd < 0 && errno != EINTR) die("accept");
  }
  static unsigned char block[262144];
  uint64_t total = 0;
  int64_t last_print = 0;
  while (fd >= 0 && !stop_requested) {
    ssize_t n = recv(fd, block, sizeof block, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += (uint64_t)n;
    int64_t now = now_ns(CLOCK_REALTIME) / 1000000;
    if (now - last_print >= 50) {
      printf("%lld %llu\n", (long long)now, (unsigned long long)total);
      last_print = now;
    }
  }
  printf("%lld %llu\nend\n", (long long)(now_ns(CLOCK_REALTIME) / 1000000), (unsigned long long)total);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) usage();
  install_signals();
  if (strcmp(argv[1], "delay") == 0) return cmd_delay(argc, argv);
  if (strcmp(argv[1], "trace-sim") == 0) return cmd_trace_sim(argc, argv);
  if (strcmp(argv[1], "udp-send") == 0) return cmd_udp_send(argc, argv);
  if (strcmp(argv[1], "udp-recv") == 0) return cmd_udp_recv(argc, argv);
  if (strcmp(argv[1], "tcp-send") == 0) return cmd_tcp_send(argc, argv);
  if (strcmp(argv[1], "tcp-recv") == 0) return cmd_tcp_recv(argc, argv);
  usage();
  return 2;
}
