// SPDX-License-Identifier: GPL-2.0
/*
 * napi_rr: a UDP request/response latency probe for napipatch's latency
 * experiment (napipatch bench run). Built by napipatch with
 * `gcc -static -O2 -pthread` so it runs in the busybox initramfs and on
 * any x86_64 host.
 *
 *   napi_rr server [-p PORT] [-b US] [-P] [-B BUDGET]
 *       echo every datagram back; prints "napi_rr listening PORT".
 *   napi_rr client -H ADDR -p PORT -r PKTS_PER_S -d DELAY_US -t SECONDS
 *                  [-b US] [-P] [-B BUDGET] [-s] [-q 5,50,95,99]
 *       open loop: a sender thread sends at the given rate (packets due
 *       while it slept go out on wake-up: the guest's timers are coarse);
 *       the main thread receives each reply, records the round trip in ns
 *       and then spins DELAY_US (the application's processing time, as in
 *       the v4 cover letter's xsk_rr -d). Prints one line:
 *       "napi_rr sent=N samples=M p5=NS p50=NS ...".
 *
 * -b sets SO_BUSY_POLL on the receiving socket (0 turns busy poll off for
 * it even if net.core.busy_read is set), -P SO_PREFER_BUSY_POLL, -B
 * SO_BUSY_POLL_BUDGET. -s ("SO_BUSY_POLL in a separate thread"): the
 * receiving socket does not busy poll; a second socket to the same peer
 * (same NAPI once it has a reply) is busy polled by a thread of its own
 * with non-blocking recv, which drives the NAPI that delivers the replies.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

#define MAXQ 16
#define MAXSAMPLES (4 * 1024 * 1024)

struct msg { uint64_t seq, sent_ns; char pad[48]; };

static int busy_us = -1, prefer, budget, separate, port = 54321;
static long rate = 1000, delay_us, seconds = 5;
static const char *host = "127.0.0.1";
static double pcts[MAXQ] = {5, 50, 95, 99};
static int npcts = 4;
static volatile int stop;
static long sent;
static int fd_main;
static struct sockaddr_in peer;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * A kernel without high-resolution timers (the tinyconfig guest: jiffies
 * clocksource) reads CLOCK_MONOTONIC in 4 ms steps, useless for latencies
 * of microseconds and for the DELAY_US spin. There the TSC is read
 * instead, its rate measured against CLOCK_MONOTONIC between two tick
 * edges 400 ms apart.
 */
static int use_tsc;
static double tsc_ns;
static uint64_t tsc0, tsc0_ns;

static inline uint64_t rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return mono_ns();
#endif
}

static uint64_t tick_edge(uint64_t *tsc)
{
	uint64_t m0 = mono_ns(), m;

	while ((m = mono_ns()) == m0)
		;
	*tsc = rdtsc();
	return m;
}

static void pick_clock(void)
{
	struct timespec res, d = { .tv_sec = 0, .tv_nsec = 400000000 };
	uint64_t t1, t2, m1, m2;

	if (clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_sec == 0 && res.tv_nsec <= 1000)
		return;
	m1 = tick_edge(&t1);
	nanosleep(&d, NULL);
	m2 = tick_edge(&t2);
	if (t2 <= t1)
		return;
	tsc_ns = (double)(m2 - m1) / (double)(t2 - t1);
	tsc0 = t1;
	tsc0_ns = m1;
	use_tsc = 1;
}

static uint64_t now_ns(void)
{
	return use_tsc ? tsc0_ns + (uint64_t)((rdtsc() - tsc0) * tsc_ns) : mono_ns();
}

static void die(const char *what)
{
	fprintf(stderr, "napi_rr: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void setopt(int fd, int opt, int val, const char *name)
{
	if (setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val)) < 0)
		fprintf(stderr, "napi_rr: warning: %s=%d: %s\n", name, val, strerror(errno));
}

static void busy_opts(int fd, int us)
{
	if (us >= 0)
		setopt(fd, SO_BUSY_POLL, us, "SO_BUSY_POLL");
	if (prefer)
		setopt(fd, SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL");
	if (budget)
		setopt(fd, SO_BUSY_POLL_BUDGET, budget, "SO_BUSY_POLL_BUDGET");
}

static int udp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		die("socket");
	return fd;
}

static int server(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in from;
	socklen_t fl, al = sizeof(a);
	char buf[2048];
	int fd = udp_socket();
	ssize_t n;

	a.sin_addr.s_addr = inet_addr(host);
	busy_opts(fd, busy_us);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("bind");
	getsockname(fd, (struct sockaddr *)&a, &al);
	printf("napi_rr listening %d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n > 0)
			sendto(fd, buf, n, 0, (struct sockaddr *)&from, fl);
	}
	return 0;
}

static void *sender(void *arg)
{
	uint64_t period = 1000000000ull / (rate > 0 ? rate : 1);
	uint64_t next = now_ns(), end = next + seconds * 1000000000ull;
	struct timespec ts;
	struct msg m = {0};

	(void)arg;
	while (!stop) {
		uint64_t t = now_ns();

		if (t >= end)
			break;
		while (next <= t) {  /* catch up on what fell due while asleep */
			m.seq = sent;
			m.sent_ns = now_ns();
			if (send(fd_main, &m, sizeof(m), MSG_DONTWAIT) == sizeof(m))
				sent++;
			next += period;
		}
		ts.tv_sec = next / 1000000000ull;
		ts.tv_nsec = next % 1000000000ull;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	stop = 1;
	return NULL;
}

static void *poller(void *arg)
{
	int fd = udp_socket();
	char buf[2048];
	struct msg m = {0};

	(void)arg;
	busy_opts(fd, busy_us > 0 ? busy_us : 50);
	if (connect(fd, (struct sockaddr *)&peer, sizeof(peer)) < 0)
		die("connect (poller)");
	send(fd, &m, sizeof(m), 0);  /* one reply gives the socket its NAPI id */
	while (!stop)
		recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	close(fd);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void spin_us(long us)
{
	uint64_t end = now_ns() + us * 1000ull;

	while (now_ns() < end)
		;
}

static void report(uint64_t *s, long n)
{
	int i;

	qsort(s, n, sizeof(*s), cmp_u64);
	printf("napi_rr sent=%ld samples=%ld clock=%s", sent, n, use_tsc ? "tsc" : "monotonic");
	for (i = 0; i < npcts; i++) {
		long k = n ? (long)(pcts[i] / 100.0 * n + 0.999999) - 1 : 0;  /* nearest rank */

		if (k < 0)
			k = 0;
		if (k >= n)
			k = n - 1;
		printf(" p%g=%llu", pcts[i], n ? (unsigned long long)s[k] : 0ull);
	}
	printf("\n");
}

static int client(void)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	uint64_t *samples = calloc(MAXSAMPLES, sizeof(uint64_t));
	pthread_t st, pt;
	struct msg m;
	long n = 0;
	uint64_t drain_until = 0;

	if (!samples)
		die("calloc");
	pick_clock();
	fd_main = udp_socket();
	busy_opts(fd_main, separate ? 0 : busy_us);
	setsockopt(fd_main, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd_main, (struct sockaddr *)&peer, sizeof(peer)) < 0)
		die("connect");
	if (separate && pthread_create(&pt, NULL, poller, NULL))
		die("pthread_create");
	if (pthread_create(&st, NULL, sender, NULL))
		die("pthread_create");
	for (;;) {
		ssize_t r = recv(fd_main, &m, sizeof(m), 0);
		uint64_t t = now_ns();

		if (r == sizeof(m)) {
			if (n < MAXSAMPLES)
				samples[n++] = t - m.sent_ns;
			if (delay_us)
				spin_us(delay_us);
		}
		if (stop) {  /* replies in flight get 300 ms after the last send */
			if (!drain_until)
				drain_until = t + 300000000ull;
			if (t >= drain_until || (r < 0 && errno != EINTR))
				break;
		}
	}
	pthread_join(st, NULL);
	if (separate)
		pthread_join(pt, NULL);
	report(samples, n);
	return 0;
}

static void parse_pcts(char *s)
{
	char *tok;

	npcts = 0;
	for (tok = strtok(s, ","); tok && npcts < MAXQ; tok = strtok(NULL, ","))
		pcts[npcts++] = atof(tok);
}

int main(int argc, char **argv)
{
	int c, is_server;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: napi_rr server|client [options]\n");
		return 2;
	}
	is_server = !strcmp(argv[1], "server");
	optind = 2;
	while ((c = getopt(argc, argv, "H:p:r:d:t:b:PB:sq:")) != -1) {
		switch (c) {
		case 'H': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'r': rate = atol(optarg); break;
		case 'd': delay_us = atol(optarg); break;
		case 't': seconds = atol(optarg); break;
		case 'b': busy_us = atoi(optarg); break;
		case 'P': prefer = 1; break;
		case 'B': budget = atoi(optarg); break;
		case 's': separate = 1; break;
		case 'q': parse_pcts(optarg); break;
		default: return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (is_server)
		return server();
	peer.sin_family = AF_INET;
	peer.sin_port = htons(port);
	peer.sin_addr.s_addr = inet_addr(host);
	return client();
}
