/* loadgen — a dependency-free C load generator for PushHub and the bare C yardstick (rawserver).
 *
 * One thread, one epoll loop, non-blocking sockets.  Client frames are masked (RFC 6455 §5.3);
 * server frames are parsed incrementally (a header may arrive a byte at a time; payloads are never
 * buffered, only their first bytes are kept to tell the message type); pings are answered.
 * Every client binds a source address in 127.0.0.2..127.0.0.250 before connecting so that the
 * ephemeral ports of one address never run out.  Everything is bounded in count and time.
 *
 *   loadgen connect  --port P [--path /v1/connect|/ws] [--n 10000] [--inflight 100] [--no-hello]
 *                    [--subscribe NAME --admin-port A --data DIR] [--pid SERVERPID] [--settle 2]
 *   loadgen fanout   --port P --trigger raw|sync|patch [--n 10000] [--rounds R] [--admin-port A]
 *                    [--data DIR | --token-file F] [--screen NAME] [--body-size B] [--pid SERVERPID]
 *                    [--group DIR (--followers F | --member K)]
 *     --group: several generators measure one fan-out together (hubs scaled out over Redis, each
 *     generator on its own hub, past one process's descriptor limit). The lead (--followers F)
 *     triggers; each round it appends "R T0" (CLOCK_MONOTONIC ns, shared by every process) to
 *     DIR/rounds and waits for DIR/done.K.R from every member. A member (--member K) only
 *     listens: a client's k-th matching message belongs to round k; when all its clients have
 *     round R it writes DIR/done.K.R holding the ns from T0 to its last delivery. Each process
 *     writes its per-round last-delivery times to DIR/result.K (the lead is K=0).
 *   loadgen admin    --admin-port A (--data DIR | --token-file F) [--conns 64] [--seconds 5]
 *                    [--rate R] [--keys 64]
 *   loadgen echo     --port P [--path /v1/echo] [--n 100] [--seconds 5] [--interval MS] [--size 32]
 *                    [--idle N]
 *   loadgen usersync --port P --admin-port A --data DIR [--n 10000] [--seconds 10] [--interval MS]
 *   loadgen track    --port P [--n 1000] [--interval 20] [--seconds 10] [--screen bench/track]
 *                    [--admin-port A (--data DIR | --token-file F) [--experiment bench-track]] [--pid SERVERPID]
 *     Goal events (issue 26): clients subscribed to a screen a running experiment touches send
 *     {"type":"track","event":"purchase","value":1} every --interval ms each; see "mode: track".
 *   loadgen resume   --port P --admin-port A --data DIR --control CDIR --pid HUBPID [--clients 19000]
 *                    [--screens 3] [--inflight N] [--settle 2]
 *     A rolling restart (issue 24), in four phases with the hub restarted between them by
 *     bench/restart/run.sh through CDIR: see "mode: resume" below.
 *   loadgen drive    --port P --subscribe A[,B…] [--n 10000] [--id-first K] [--jwt-secret-file F]
 *                    [--hello-extra-file F]
 *     Clients held for a script (issue 27's releases, bench/releases/run.py; issue 28's components,
 *     bench/components/run.py), which tells them
 *     what to send and reads what they received, one line at a time on stdin/stdout: see
 *     "mode: drive" below.
 *
 * Each mode prints one line of figures on stdout (progress and errors go to stderr) and exits 0,
 * or 1 when a client failed, a delivery was missing or a request was refused.
 * Build: make -C bench/loadgen (gcc -O2, nothing else). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

/* ------------------------------------------------------------------------------------------- */
/* utilities                                                                                     */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("loadgen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("loadgen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64* */
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

static void *xcalloc(size_t n, size_t m) {
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p) die("out of memory");
    return p;
}

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t pct(const uint64_t *v, size_t n, double p) {
    if (n == 0) return 0;
    size_t k = (size_t)ceil(p * (double)n);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return v[k - 1];
}

/* A growable array of nanosecond samples. */
typedef struct {
    uint64_t *v;
    size_t n, cap;
} samples;

static void samples_add(samples *s, uint64_t x) {
    if (s->n == s->cap) s->cap = s->cap ? s->cap * 2 : 4096, s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    s->v[s->n++] = x;
}

static void samples_sort(samples *s) { qsort(s->v, s->n, sizeof *s->v, cmp_u64); }

/* Formats nanoseconds as "123 µs" or "12.3 ms". */
static const char *dur(uint64_t ns, char *buf) {
    if (ns < 1000000) sprintf(buf, "%.0f µs", (double)ns / 1e3);
    else if (ns < 100000000) sprintf(buf, "%.2f ms", (double)ns / 1e6);
    else sprintf(buf, "%.1f ms", (double)ns / 1e6);
    return buf;
}

static char *read_file_trimmed(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s: %s", path, strerror(errno));
    char *buf = xmalloc(1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && isspace((unsigned char)buf[n - 1])) buf[--n] = 0;
    size_t s = 0;
    while (buf[s] && isspace((unsigned char)buf[s])) s++;
    memmove(buf, buf + s, n - s + 1);
    return buf;
}

/* VmRSS of a process in KiB (0 when unknown). */
static long rss_kib(int pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    long v = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) { v = strtol(line + 6, NULL, 10); break; }
    fclose(f);
    return v;
}

/* CPU time (user + system, all threads) of a process in ns: the process CPU clock when the
 * kernel lets us read it (ns resolution), else utime+stime from /proc/PID/stat (clock ticks). */
static uint64_t cpu_ns(int pid) {
    clockid_t cid;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &cid) == 0 && clock_gettime(cid, &ts) == 0)
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    unsigned long ut = 0, st = 0;
    /* after ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(14) stime */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return 0;
    return (uint64_t)(ut + st) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* Busy CPU time of the whole machine (all cores, everything but idle and iowait), in ns. */
static uint64_t machine_busy_ns(void) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return 0;
    unsigned long long v[10] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    if (n < 8) return 0;
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]; /* user nice system irq softirq steal */
    return (uint64_t)busy * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

static uint64_t self_cpu_ns(void);

/* What the rest of the machine did during a measurement: busy CPU not spent by this process or by
 * the server (--pid), as a percentage of every core over the same wall time. Printed with every
 * figure so that a disturbed run shows (another engineer compiling, a background load). */
static struct {
    uint64_t wall, busy, self, server, excluded;
} watch0;
static int exclude_pid; /* --exclude-pid: a process of ours that is not "others" (a background load) */

static void watch_start(int pid) {
    watch0.wall = now_ns(), watch0.busy = machine_busy_ns(), watch0.self = self_cpu_ns();
    watch0.server = pid ? cpu_ns(pid) : 0;
    watch0.excluded = exclude_pid ? cpu_ns(exclude_pid) : 0;
}

static double watch_others_pct(int pid) {
    uint64_t wall = now_ns() - watch0.wall, busy = machine_busy_ns() - watch0.busy, self = self_cpu_ns() - watch0.self;
    uint64_t server = pid ? cpu_ns(pid) - watch0.server : 0;
    uint64_t excluded = exclude_pid ? cpu_ns(exclude_pid) - watch0.excluded : 0;
    double others = (double)busy - (double)self - (double)server - (double)excluded;
    if (others < 0 || !wall) others = 0;
    return 100.0 * others / ((double)wall * (double)sysconf(_SC_NPROCESSORS_ONLN));
}

static uint64_t self_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- SHA-1 (RFC 3174), SHA-256 (FIPS 180-4), HMAC (RFC 2104), base64 (RFC 4648) ---- */

static void sha1(const uint8_t *msg, size_t len, uint8_t out[20]) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    uint8_t block[128] = {0};
    size_t full = len & ~(size_t)63, rest = len - full, tail = rest < 56 ? 64 : 128;
    memcpy(block, msg + full, rest);
    block[rest] = 0x80;
    for (int k = 0; k < 8; k++) block[tail - 1 - k] = (uint8_t)((uint64_t)len * 8 >> (8 * k));
    for (size_t off = 0; off < full + tail; off += 64) {
        const uint8_t *p = off < full ? msg + off : block + (off - full);
        uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int t = 0; t < 16; t++) w[t] = (uint32_t)p[4 * t] << 24 | p[4 * t + 1] << 16 | p[4 * t + 2] << 8 | p[4 * t + 3];
        for (int t = 16; t < 80; t++) {
            uint32_t x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16];
            w[t] = x << 1 | x >> 31;
        }
        for (int t = 0; t < 80; t++) {
            uint32_t f = t < 20 ? ((b & c) | (~b & d)) + 0x5A827999
                       : t < 40 ? (b ^ c ^ d) + 0x6ED9EBA1
                       : t < 60 ? ((b & c) | (b & d) | (c & d)) + 0x8F1BBCDC
                                : (b ^ c ^ d) + 0xCA62C1D6;
            uint32_t tmp = (a << 5 | a >> 27) + f + e + w[t];
            e = d, d = c, c = b << 30 | b >> 2, b = a, a = tmp;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
    }
    for (int k = 0; k < 20; k++) out[k] = (uint8_t)(h[k / 4] >> (24 - 8 * (k % 4)));
}

typedef struct {
    uint32_t h[8];
    uint8_t buf[64];
    size_t buf_len;
    uint64_t total;
} sha256_ctx;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
    0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
    0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) ((x) >> (n) | (x) << (32 - (n)))

static void sha256_block(sha256_ctx *c, const uint8_t *p) {
    uint32_t w[64], s[8];
    for (int t = 0; t < 16; t++) w[t] = (uint32_t)p[4 * t] << 24 | p[4 * t + 1] << 16 | p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ROR(w[t - 15], 7) ^ ROR(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ROR(w[t - 2], 17) ^ ROR(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    memcpy(s, c->h, sizeof s);
    for (int t = 0; t < 64; t++) {
        uint32_t S1 = ROR(s[4], 6) ^ ROR(s[4], 11) ^ ROR(s[4], 25), ch = (s[4] & s[5]) ^ (~s[4] & s[6]);
        uint32_t t1 = s[7] + S1 + ch + K256[t] + w[t];
        uint32_t S0 = ROR(s[0], 2) ^ ROR(s[0], 13) ^ ROR(s[0], 22), maj = (s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]);
        uint32_t t2 = S0 + maj;
        s[7] = s[6], s[6] = s[5], s[5] = s[4], s[4] = s[3] + t1, s[3] = s[2], s[2] = s[1], s[1] = s[0], s[0] = t1 + t2;
    }
    for (int k = 0; k < 8; k++) c->h[k] += s[k];
}

static void sha256_init(sha256_ctx *c) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof iv);
    c->buf_len = 0, c->total = 0;
}

static void sha256_update(sha256_ctx *c, const void *data, size_t n) {
    const uint8_t *p = data;
    c->total += n;
    while (n) {
        size_t take = 64 - c->buf_len < n ? 64 - c->buf_len : n;
        memcpy(c->buf + c->buf_len, p, take);
        c->buf_len += take, p += take, n -= take;
        if (c->buf_len == 64) sha256_block(c, c->buf), c->buf_len = 0;
    }
}

static void sha256_final(sha256_ctx *c, uint8_t out[32]) {
    uint64_t bits = c->total * 8;
    uint8_t pad = 0x80, zero = 0, len[8];
    sha256_update(c, &pad, 1);
    while (c->buf_len != 56) sha256_update(c, &zero, 1);
    for (int k = 0; k < 8; k++) len[k] = (uint8_t)(bits >> (56 - 8 * k));
    sha256_update(c, len, 8);
    for (int k = 0; k < 32; k++) out[k] = (uint8_t)(c->h[k / 4] >> (24 - 8 * (k % 4)));
}

static void hmac_sha256(const uint8_t *key, size_t klen, const uint8_t *msg, size_t mlen, uint8_t out[32]) {
    uint8_t k0[64] = {0}, ipad[64], opad[64], inner[32];
    if (klen > 64) {
        sha256_ctx c;
        sha256_init(&c), sha256_update(&c, key, klen), sha256_final(&c, k0);
    } else memcpy(k0, key, klen);
    for (int i = 0; i < 64; i++) ipad[i] = k0[i] ^ 0x36, opad[i] = k0[i] ^ 0x5c;
    sha256_ctx c;
    sha256_init(&c), sha256_update(&c, ipad, 64), sha256_update(&c, msg, mlen), sha256_final(&c, inner);
    sha256_init(&c), sha256_update(&c, opad, 64), sha256_update(&c, inner, 32), sha256_final(&c, out);
}

/* base64 (url: URL alphabet, no padding). Returns the length written (out gets a NUL). */
static size_t b64(const uint8_t *in, size_t n, char *out, int url) {
    const char *al = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                         : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = al[v >> 18], out[o++] = al[(v >> 12) & 63], out[o++] = al[(v >> 6) & 63], out[o++] = al[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = al[v >> 18], out[o++] = al[(v >> 12) & 63];
        if (!url) out[o++] = '=', out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = al[v >> 18], out[o++] = al[(v >> 12) & 63], out[o++] = al[(v >> 6) & 63];
        if (!url) out[o++] = '=';
    }
    out[o] = 0;
    return o;
}

/* An HS256 JWT for user `sub`, valid for an hour. */
static void mint_jwt(const char *secret, const char *sub, char *out, size_t cap) {
    char payload[256], p64[400], sig64[64];
    uint8_t sig[32];
    int pn = snprintf(payload, sizeof payload, "{\"sub\":\"%s\",\"exp\":%ld}", sub, (long)time(NULL) + 3600);
    b64((const uint8_t *)payload, (size_t)pn, p64, 1);
    int n = snprintf(out, cap, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.%s", p64); /* {"alg":"HS256","typ":"JWT"} */
    hmac_sha256((const uint8_t *)secret, strlen(secret), (const uint8_t *)out, (size_t)n, sig);
    b64(sig, 32, sig64, 1);
    snprintf(out + n, cap - (size_t)n, ".%s", sig64);
}

/* ------------------------------------------------------------------------------------------- */
/* options                                                                                       */

static struct {
    const char *mode;
    const char *host;
    int port, admin_port, pid;
    const char *path;
    int n, inflight, hello, src_first, src_last;
    const char *subscribe, *data, *token_file, *jwt_secret_file, *user_token_file;
    double settle_s, hold_s, timeout_s;
    /* fanout */
    const char *trigger, *screen;
    int rounds, body_size;
    double gap_s, round_timeout_s;
    const char *group;
    int followers, member;
    /* admin */
    int conns, keys;
    double seconds, rate;
    /* echo / usersync */
    int size, idle;
    const char *idle_path;
    double interval_ms, warmup_s;
    const char *label;
    /* resume */
    int screens;
    const char *control;
    /* track */
    const char *experiment;
    /* drive: client i is user u<id_first + i> (device d-<id_first + i>) */
    int id_first;
    const char *hello_extra_file; /* drive: line i % L of it goes into client i's hello */
} O = {
    .host = "127.0.0.1", .n = -1, .inflight = -1, .hello = -1, .src_first = 2, .src_last = 250,
    .settle_s = 2, .timeout_s = 120, .rounds = -1, .body_size = 0, .gap_s = 0.05, .round_timeout_s = 30,
    .conns = 64, .keys = 64, .seconds = -1, .rate = 0, .size = 32, .idle_path = "/v1/connect", .interval_ms = -1,
    .warmup_s = 1, .member = -1, .screens = 3,
};

static void usage(void) {
    fputs("usage: loadgen MODE [options]   (see the comment at the top of loadgen.c, or bench/README.md)\n"
          "  connect  --port P [--path /v1/connect|/ws] [--n 10000] [--inflight 100] [--no-hello|--hello]\n"
          "           [--subscribe NAME [--admin-port A --data DIR]] [--pid SERVERPID] [--settle S] [--hold S]\n"
          "  fanout   --port P --trigger raw|sync|patch [--n 10000] [--rounds R] [--gap S] [--pid SERVERPID]\n"
          "           [--admin-port A --data DIR|--token-file F] [--screen NAME] [--body-size B]\n"
          "           [--group DIR (--followers F | --member K)]\n"
          "  admin    --admin-port A --data DIR|--token-file F [--conns 64] [--seconds 5] [--rate R] [--keys 64]\n"
          "  echo     --port P [--path /v1/echo] [--n 100] [--size 32] [--seconds 5] [--interval MS] [--idle N]\n"
          "  usersync --port P --admin-port A --data DIR [--n 10000] [--seconds 10] [--interval MS]\n"
          "  track    --port P [--n 1000] [--interval 20] [--seconds 10] [--warmup 1] [--screen bench/track]\n"
          "           [--admin-port A --data DIR|--token-file F [--experiment bench-track]] [--pid SERVERPID]\n"
          "  resume   --port P --admin-port A --data DIR --control CDIR --pid HUBPID [--clients 19000]\n"
          "           [--screens 3] [--inflight N] [--settle S]   (driven by bench/restart/run.sh)\n"
          "  drive    --port P --subscribe A[,B...] [--n 10000] [--id-first K]   (commands on stdin: bench/releases/run.py)\n"
          "           [--hello-extra-file F]   (client i's hello gets line i % L of F: members such as\n"
          "           \"app\":{\"platform\":\"ios\",\"version\":\"5.2.0\"},\"components\":{\"Carousel\":2})\n"
          "common: --host 127.0.0.1  --src-first 2 --src-last 250 (source addresses 127.0.0.X)\n"
          "        --timeout S (bound on every connect phase)  --label TEXT (prefix of the figures line)\n"
          "        --jwt-secret-file F | --user-token-file F (sign clients in: user u<i>, or the i-th line)\n"
          "        --id-first K (client i is user u<K+i>, device d-<K+i>: several generators, distinct units)\n"
          "        --exclude-pid P (a process of ours left out of the \"others\" CPU figure)\n",
          stderr);
    exit(2);
}

static void parse_args(int argc, char **argv) {
    if (argc < 2 || argv[1][0] == '-') usage();
    O.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
#define ARG() (i + 1 < argc ? argv[++i] : (die("%s needs a value", a), ""))
        if (!strcmp(a, "--host")) O.host = ARG();
        else if (!strcmp(a, "--port")) O.port = atoi(ARG());
        else if (!strcmp(a, "--admin-port")) O.admin_port = atoi(ARG());
        else if (!strcmp(a, "--pid")) O.pid = atoi(ARG());
        else if (!strcmp(a, "--path")) O.path = ARG();
        else if (!strcmp(a, "--n") || !strcmp(a, "--clients")) O.n = atoi(ARG());
        else if (!strcmp(a, "--inflight")) O.inflight = atoi(ARG());
        else if (!strcmp(a, "--hello")) O.hello = 1;
        else if (!strcmp(a, "--no-hello")) O.hello = 0;
        else if (!strcmp(a, "--subscribe")) O.subscribe = ARG();
        else if (!strcmp(a, "--data")) O.data = ARG();
        else if (!strcmp(a, "--token-file")) O.token_file = ARG();
        else if (!strcmp(a, "--jwt-secret-file")) O.jwt_secret_file = ARG();
        else if (!strcmp(a, "--user-token-file")) O.user_token_file = ARG();
        else if (!strcmp(a, "--settle")) O.settle_s = atof(ARG());
        else if (!strcmp(a, "--hold")) O.hold_s = atof(ARG());
        else if (!strcmp(a, "--timeout")) O.timeout_s = atof(ARG());
        else if (!strcmp(a, "--src-first")) O.src_first = atoi(ARG());
        else if (!strcmp(a, "--src-last")) O.src_last = atoi(ARG());
        else if (!strcmp(a, "--trigger")) O.trigger = ARG();
        else if (!strcmp(a, "--screen")) O.screen = ARG();
        else if (!strcmp(a, "--rounds")) O.rounds = atoi(ARG());
        else if (!strcmp(a, "--body-size")) O.body_size = atoi(ARG());
        else if (!strcmp(a, "--gap")) O.gap_s = atof(ARG());
        else if (!strcmp(a, "--round-timeout")) O.round_timeout_s = atof(ARG());
        else if (!strcmp(a, "--group")) O.group = ARG();
        else if (!strcmp(a, "--followers")) O.followers = atoi(ARG());
        else if (!strcmp(a, "--member")) O.member = atoi(ARG());
        else if (!strcmp(a, "--conns")) O.conns = atoi(ARG());
        else if (!strcmp(a, "--keys")) O.keys = atoi(ARG());
        else if (!strcmp(a, "--seconds")) O.seconds = atof(ARG());
        else if (!strcmp(a, "--rate")) O.rate = atof(ARG());
        else if (!strcmp(a, "--size")) O.size = atoi(ARG());
        else if (!strcmp(a, "--idle")) O.idle = atoi(ARG());
        else if (!strcmp(a, "--idle-path")) O.idle_path = ARG();
        else if (!strcmp(a, "--interval")) O.interval_ms = atof(ARG());
        else if (!strcmp(a, "--warmup")) O.warmup_s = atof(ARG());
        else if (!strcmp(a, "--label")) O.label = ARG();
        else if (!strcmp(a, "--screens")) O.screens = atoi(ARG());
        else if (!strcmp(a, "--control")) O.control = ARG();
        else if (!strcmp(a, "--experiment")) O.experiment = ARG();
        else if (!strcmp(a, "--id-first")) O.id_first = atoi(ARG());
        else if (!strcmp(a, "--hello-extra-file")) O.hello_extra_file = ARG();
        else if (!strcmp(a, "--exclude-pid")) exclude_pid = atoi(ARG());
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) usage();
        else die("unknown option %s (try --help)", a);
#undef ARG
    }
    if (O.src_first < 1 || O.src_last > 254 || O.src_last < O.src_first) die("bad --src-first/--src-last");
    if (O.inflight < 0) O.inflight = strcmp(O.mode, "resume") == 0 ? 0 : 100; /* resume: 0 = every client at once */
    else if (O.inflight < 1 && strcmp(O.mode, "resume") != 0) O.inflight = 1;
}

/* The admin token: --token-file, else DATA/admin.token. */
static char *admin_token(void) {
    char path[4096];
    if (O.token_file) return read_file_trimmed(O.token_file);
    if (!O.data) die("the admin API needs --data DIR or --token-file F");
    snprintf(path, sizeof path, "%s/admin.token", O.data);
    return read_file_trimmed(path);
}

/* ------------------------------------------------------------------------------------------- */
/* the event loop                                                                                */

enum { K_WS = 1, K_HTTP = 2, K_CMD = 3 };
static int epfd;
static uint8_t rbuf[1 << 18];

#define TAG(kind, idx) ((uint64_t)(kind) << 32 | (uint32_t)(idx))

static void ep_add(int fd, uint32_t events, uint64_t tag) {
    struct epoll_event ev = {.events = events, .data.u64 = tag};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl add: %s", strerror(errno));
}

static void ep_mod(int fd, uint32_t events, uint64_t tag) {
    struct epoll_event ev = {.events = events, .data.u64 = tag};
    epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
}

static void raise_nofile(void) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

static long nofile_limit(void) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    return (long)rl.rlim_cur;
}

/* ------------------------------------------------------------------------------------------- */
/* WebSocket clients                                                                             */

enum { WS_FREE, WS_CONNECTING, WS_UPGRADING, WS_HELLO, WS_SUBSCRIBING, WS_READY, WS_CLOSED };
#define PREFIX 200 /* room for a snapshot's "screen", "version" and "hash" (resume mode) */
#define TAIL 64    /* a message's last bytes: a patch's "screen" and "version" come after its ops (drive mode) */

typedef struct {
    int fd, id;
    uint8_t state, want_hello, in_payload, fh_len, fh_need, op, msg_op, prefix_len, ctrl_len, epout, awaiting;
    uint16_t hlen;
    uint32_t round;
    uint64_t remaining, msg_len;
    uint64_t t0;        /* start of the connect, or of the message in flight */
    uint64_t next_send; /* echo pacing */
    const char *path;
    char *hbuf; /* the upgrade response, until its blank line */
    char *out;  /* bytes the socket did not take */
    uint32_t out_len, out_off;
    char accept[29];
    uint8_t fh[14];
    uint8_t prefix[PREFIX]; /* first bytes of the current message */
    uint8_t tail[TAIL];     /* its last bytes (tail_len of them) */
    uint8_t tail_len;
    uint8_t ctrl[125];      /* control frame payload */
} ws;

static ws *conns;
static int n_conns;
static int ws_ready, ws_failed, ws_inflight;
static char first_error[256];
static samples connect_lat;
static char *jwt_secret;
static char **user_tokens;
static int n_user_tokens;

/* Mode hooks. */
static void (*on_ready)(ws *c);
static void (*on_message)(ws *c, int op, const uint8_t *prefix, size_t plen, uint64_t len);
static void (*on_welcome)(ws *c, const uint8_t *prefix, size_t plen); /* before on_ready */
static void (*hello_extra)(ws *c, char *buf, size_t cap);             /* more hello fields: ,"k":v */
/* resume: the hub is being stopped; a ready client it closes (1001, or an EOF) is counted here
 * and is no failure. */
static int expect_going_away, closed_1001, closed_other;
static long bytes_in; /* every byte read from WebSocket clients (101 responses included) */
static void (*on_command_input)(void); /* stdin is readable (drive mode): read it, run nothing */

/* Closes a client without counting it as failed. */
static void ws_drop(ws *c) {
    if (c->state == WS_CLOSED || c->state == WS_FREE) return;
    if (c->state != WS_READY) ws_inflight--;
    if (c->state == WS_READY) ws_ready--;
    close(c->fd);
    c->fd = -1;
    c->state = WS_CLOSED;
    free(c->hbuf), c->hbuf = NULL;
    free(c->out), c->out = NULL;
}

/* Closes a client and counts it as failed (the first failure's reason is kept). */
static void ws_fail(ws *c, const char *why) {
    if (c->state == WS_CLOSED || c->state == WS_FREE) return;
    if (!first_error[0]) snprintf(first_error, sizeof first_error, "client %d: %s", c->id, why);
    ws_failed++;
    ws_drop(c);
}

static void ws_flush(ws *c) {
    while (c->out_off < c->out_len) {
        ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (w < 0) {
            if (errno == EAGAIN) break;
            ws_fail(c, strerror(errno));
            return;
        }
        c->out_off += (uint32_t)w;
    }
    if (c->out_off == c->out_len) {
        free(c->out), c->out = NULL, c->out_len = c->out_off = 0;
        if (c->epout) ep_mod(c->fd, EPOLLIN, TAG(K_WS, c->id)), c->epout = 0;
    } else if (!c->epout) ep_mod(c->fd, EPOLLIN | EPOLLOUT, TAG(K_WS, c->id)), c->epout = 1;
}

static void ws_write(ws *c, const void *p, size_t n) {
    if (c->state == WS_CLOSED) return;
    if (c->out_len == c->out_off) {
        ssize_t w = write(c->fd, p, n);
        if (w == (ssize_t)n) return;
        if (w < 0 && errno != EAGAIN) { ws_fail(c, strerror(errno)); return; }
        if (w < 0) w = 0;
        p = (const char *)p + w, n -= (size_t)w;
    }
    c->out = xrealloc(c->out, c->out_len + n);
    memcpy(c->out + c->out_len, p, n);
    c->out_len += (uint32_t)n;
    ws_flush(c);
}

/* One masked client frame (FIN set) into f, which has room for n + 14 bytes; returns its size. */
static size_t ws_frame(uint8_t *f, int op, const void *payload, size_t n) {
    size_t h = 0;
    f[h++] = (uint8_t)(0x80 | op);
    if (n < 126) f[h++] = (uint8_t)(0x80 | n);
    else if (n < 65536) f[h++] = 0x80 | 126, f[h++] = (uint8_t)(n >> 8), f[h++] = (uint8_t)n;
    else {
        f[h++] = 0x80 | 127;
        for (int k = 0; k < 8; k++) f[h++] = (uint8_t)((uint64_t)n >> (56 - 8 * k));
    }
    uint32_t m = (uint32_t)rnd();
    uint8_t mask[4] = {(uint8_t)m, (uint8_t)(m >> 8), (uint8_t)(m >> 16), (uint8_t)(m >> 24)};
    memcpy(f + h, mask, 4);
    h += 4;
    const uint8_t *p = payload;
    for (size_t k = 0; k < n; k++) f[h + k] = p[k] ^ mask[k & 3];
    return h + n;
}

static void ws_send(ws *c, int op, const void *payload, size_t n) {
    uint8_t stack[4096], *f = n + 14 <= sizeof stack ? stack : xmalloc(n + 14);
    ws_write(c, f, ws_frame(f, op, payload, n));
    if (f != stack) free(f);
}

static void ws_send_text(ws *c, const char *s) { ws_send(c, 0x1, s, strlen(s)); }

/* Starts client `id`: socket, bind a 127.0.0.X source, non-blocking connect. */
static void ws_start(int id, const char *path, int want_hello) {
    ws *c = &conns[id];
    memset(c, 0, sizeof *c);
    c->id = id, c->path = path, c->want_hello = (uint8_t)want_hello, c->fd = -1;
    c->state = WS_CONNECTING;
    c->t0 = now_ns();
    ws_inflight++;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) { c->fd = -1; ws_fail(c, strerror(errno)); return; }
    c->fd = fd;
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in src = {.sin_family = AF_INET};
    src.sin_addr.s_addr = htonl(0x7F000000u | (uint32_t)(O.src_first + id % (O.src_last - O.src_first + 1)));
    if (bind(fd, (struct sockaddr *)&src, sizeof src) < 0) { ws_fail(c, strerror(errno)); return; }
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)O.port)};
    inet_pton(AF_INET, O.host, &dst.sin_addr);
    if (connect(fd, (struct sockaddr *)&dst, sizeof dst) < 0 && errno != EINPROGRESS) {
        char why[128];
        snprintf(why, sizeof why, "connect: %s", strerror(errno));
        ws_fail(c, why);
        return;
    }
    ep_add(fd, EPOLLIN | EPOLLOUT, TAG(K_WS, id));
    c->epout = 1;
}

static void ws_connected(ws *c) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
        char why[128];
        snprintf(why, sizeof why, "connect: %s", strerror(err));
        ws_fail(c, why);
        return;
    }
    uint8_t key[16], digest[20];
    char key64[25], req[4096], cat[64];
    for (int k = 0; k < 16; k++) key[k] = (uint8_t)rnd();
    b64(key, 16, key64, 0);
    snprintf(cat, sizeof cat, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key64);
    sha1((uint8_t *)cat, strlen(cat), digest);
    b64(digest, 20, c->accept, 0);
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
                     c->path, O.host, O.port, key64);
    c->state = WS_UPGRADING;
    ep_mod(c->fd, EPOLLIN, TAG(K_WS, c->id)), c->epout = 0;
    ws_write(c, req, (size_t)n);
}

static void ws_become_ready(ws *c) {
    c->state = WS_READY;
    ws_inflight--, ws_ready++;
    samples_add(&connect_lat, now_ns() - c->t0);
    if (on_ready) on_ready(c);
}

static void ws_send_hello(ws *c) {
    char msg[2048], extra[512] = "";
    if (hello_extra) hello_extra(c, extra, sizeof extra);
    if (user_tokens) {
        if (c->id >= n_user_tokens) die("--user-token-file has %d lines, client %d needs one", n_user_tokens, c->id);
        snprintf(msg, sizeof msg, "{\"type\":\"hello\",\"protocol\":1,\"token\":\"%s\",\"device\":\"d-%d\"%s}",
                 user_tokens[c->id], O.id_first + c->id, extra);
    } else if (jwt_secret) {
        char sub[32], jwt[1024];
        snprintf(sub, sizeof sub, "u%d", O.id_first + c->id);
        mint_jwt(jwt_secret, sub, jwt, sizeof jwt);
        snprintf(msg, sizeof msg, "{\"type\":\"hello\",\"protocol\":1,\"token\":\"%s\",\"device\":\"d-%d\"%s}", jwt,
                 O.id_first + c->id, extra);
    } else snprintf(msg, sizeof msg, "{\"type\":\"hello\",\"protocol\":1,\"device\":\"d-%d\"%s}", O.id_first + c->id, extra);
    c->state = WS_HELLO;
    ws_send_text(c, msg);
}

static int has_type(const uint8_t *p, size_t n, const char *type) {
    char pat[64];
    int k = snprintf(pat, sizeof pat, "\"type\":\"%s\"", type);
    return memmem(p, n, pat, (size_t)k) != NULL;
}

/* A complete message: the session steps before READY, then the mode's hook. */
static void ws_message(ws *c, int op, const uint8_t *prefix, size_t plen, uint64_t len) {
    if (c->state == WS_READY) {
        if (on_message) on_message(c, op, prefix, plen, len);
        return;
    }
    if (has_type(prefix, plen, "error")) {
        char why[PREFIX + 32];
        snprintf(why, sizeof why, "hub error: %.*s", (int)plen, (const char *)prefix);
        ws_fail(c, why);
        return;
    }
    if (c->state == WS_HELLO && has_type(prefix, plen, "welcome")) {
        if (on_welcome) on_welcome(c, prefix, plen);
        if (O.subscribe) {
            char msg[512];
            snprintf(msg, sizeof msg, "{\"type\":\"subscribe\",\"screen\":\"%s\"}", O.subscribe);
            c->state = WS_SUBSCRIBING;
            ws_send_text(c, msg);
        } else ws_become_ready(c);
    } else if (c->state == WS_SUBSCRIBING && has_type(prefix, plen, "snapshot")) ws_become_ready(c);
    /* anything else before READY (a replayed sync) is ignored */
}

/* Keeps the last TAIL bytes of the message being read, `n` more of which are at `p`. */
static void keep_tail(ws *c, const uint8_t *p, size_t n) {
    if (n >= TAIL) {
        memcpy(c->tail, p + n - TAIL, TAIL), c->tail_len = TAIL;
        return;
    }
    size_t keep = c->tail_len < TAIL - n ? c->tail_len : TAIL - n;
    memmove(c->tail, c->tail + c->tail_len - keep, keep);
    memcpy(c->tail + keep, p, n);
    c->tail_len = (uint8_t)(keep + n);
}

/* Incremental frame parser: bytes in, messages out; only the prefix and tail of a payload are kept. */
static void ws_frames(ws *c, const uint8_t *p, size_t n) {
    while (n && c->state != WS_CLOSED) {
        if (!c->in_payload) {
            if (c->fh_len == 0) c->fh_need = 2;
            while (n && c->fh_len < c->fh_need) {
                c->fh[c->fh_len++] = *p++, n--;
                if (c->fh_len == 2) {
                    uint8_t l7 = c->fh[1] & 0x7f;
                    if (c->fh[1] & 0x80) { ws_fail(c, "masked server frame"); return; }
                    if (c->fh[0] & 0x70) { ws_fail(c, "RSV bits set (no extension was negotiated)"); return; }
                    c->fh_need = (uint8_t)(2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0));
                }
            }
            if (c->fh_len < c->fh_need) return;
            uint8_t l7 = c->fh[1] & 0x7f;
            uint64_t len = l7;
            if (l7 == 126) len = (uint64_t)c->fh[2] << 8 | c->fh[3];
            if (l7 == 127) {
                len = 0;
                for (int k = 0; k < 8; k++) len = len << 8 | c->fh[2 + k];
            }
            c->op = c->fh[0] & 0x0f;
            c->fh_len = 0;
            c->in_payload = 1;
            c->remaining = len;
            if (c->op >= 8) {
                if (len > 125 || !(c->fh[0] & 0x80)) { ws_fail(c, "bad control frame"); return; }
                c->ctrl_len = 0;
            } else if (c->op != 0) {
                c->msg_op = c->op, c->prefix_len = 0, c->msg_len = 0, c->tail_len = 0;
            }
        }
        size_t take = c->remaining < n ? (size_t)c->remaining : n;
        if (c->op >= 8) memcpy(c->ctrl + c->ctrl_len, p, take), c->ctrl_len += (uint8_t)take;
        else {
            size_t room = PREFIX - c->prefix_len, k = take < room ? take : room;
            memcpy(c->prefix + c->prefix_len, p, k);
            c->prefix_len += (uint8_t)k;
            c->msg_len += take;
            keep_tail(c, p, take);
        }
        p += take, n -= take, c->remaining -= take;
        if (c->remaining) return;
        c->in_payload = 0;
        int fin = c->fh[0] & 0x80;
        if (c->op == 0x9) ws_send(c, 0xA, c->ctrl, c->ctrl_len);
        else if (c->op == 0x8) {
            char why[160];
            int code = c->ctrl_len >= 2 ? c->ctrl[0] << 8 | c->ctrl[1] : 1005;
            snprintf(why, sizeof why, "server closed %d %.*s", code, c->ctrl_len > 2 ? c->ctrl_len - 2 : 0,
                     (const char *)c->ctrl + 2);
            ws_send(c, 0x8, c->ctrl, c->ctrl_len >= 2 ? 2 : 0);
            if (expect_going_away && c->state == WS_READY) {
                if (code == 1001) closed_1001++;
                else closed_other++;
                ws_drop(c);
                return;
            }
            ws_fail(c, why);
            return;
        } else if (c->op < 8 && fin) ws_message(c, c->msg_op, c->prefix, c->prefix_len, c->msg_len);
    }
}

static void ws_upgrade_input(ws *c, const uint8_t *p, size_t n) {
    if (!c->hbuf) c->hbuf = xmalloc(2048);
    size_t room = 2047 - c->hlen, take = n < room ? n : room;
    memcpy(c->hbuf + c->hlen, p, take);
    c->hlen += (uint16_t)take;
    c->hbuf[c->hlen] = 0;
    char *end = strstr(c->hbuf, "\r\n\r\n");
    if (!end) {
        if (c->hlen >= 2047) ws_fail(c, "upgrade response over 2 KiB");
        return;
    }
    size_t head = (size_t)(end - c->hbuf) + 4;
    if (strncmp(c->hbuf, "HTTP/1.1 101", 12) != 0) {
        char why[160];
        char *eol = strstr(c->hbuf, "\r\n");
        snprintf(why, sizeof why, "upgrade refused: %.*s", (int)(eol - c->hbuf), c->hbuf);
        ws_fail(c, why);
        return;
    }
    char *acc = strcasestr(c->hbuf, "\r\nSec-WebSocket-Accept:");
    if (!acc || acc > end) { ws_fail(c, "101 without Sec-WebSocket-Accept"); return; }
    acc += 23;
    while (*acc == ' ') acc++;
    if (strncmp(acc, c->accept, 28) != 0) { ws_fail(c, "wrong Sec-WebSocket-Accept"); return; }
    /* bytes after the head that were in this read are frames */
    size_t consumed_before = c->hlen - take; /* bytes of hbuf from earlier reads */
    size_t rest_off = head - consumed_before;
    free(c->hbuf), c->hbuf = NULL, c->hlen = 0;
    if (c->want_hello) ws_send_hello(c);
    else ws_become_ready(c);
    if (rest_off < n && c->state != WS_CLOSED) ws_frames(c, p + rest_off, n - rest_off);
}

static void ws_readable(ws *c) {
    for (;;) {
        ssize_t r = read(c->fd, rbuf, sizeof rbuf);
        if (r > 0) {
            bytes_in += r;
            if (c->state == WS_UPGRADING) ws_upgrade_input(c, rbuf, (size_t)r);
            else ws_frames(c, rbuf, (size_t)r);
            if (c->state == WS_CLOSED || (size_t)r < sizeof rbuf) return;
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (expect_going_away && c->state == WS_READY) { /* the stopping hub closed without a close frame */
            closed_other++;
            ws_drop(c);
            return;
        }
        if (r == 0) { ws_fail(c, c->state == WS_UPGRADING ? "EOF before the 101" : "EOF"); return; }
        ws_fail(c, strerror(errno));
        return;
    }
}

/* ------------------------------------------------------------------------------------------- */
/* HTTP/1.1 keep-alive clients (the admin API, rawserver's POST /publish)                       */

typedef struct http http;
struct http {
    int fd, id, busy, epout, port;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off;
    uint64_t t_sent, due;
    void (*done)(http *h, int status, const char *body, size_t len);
};

static http *https;
static int n_https;
static const char *bearer;

static int tcp_connect_blocking(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) die("socket: %s", strerror(errno));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {.tv_sec = 30};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, O.host, &dst.sin_addr);
    if (connect(fd, (struct sockaddr *)&dst, sizeof dst) < 0) die("connect to %s:%d: %s", O.host, port, strerror(errno));
    return fd;
}

static int format_request(char *buf, size_t cap, const char *method, const char *path, int port, size_t blen) {
    char auth[1024] = "";
    if (bearer) snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", bearer);
    return snprintf(buf, cap, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n%sContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                    method, path, O.host, port, auth, blen);
}

/* Parses one response out of buf; returns its total size (0 = incomplete, -1 = unsupported). */
static long parse_response(const char *buf, size_t n, int *status, size_t *body_off, size_t *body_len) {
    const char *end = memmem(buf, n, "\r\n\r\n", 4);
    if (!end) return 0;
    size_t head = (size_t)(end - buf) + 4, cl = 0;
    if (n < 12 || strncmp(buf, "HTTP/1.", 7) != 0) return -1;
    *status = atoi(buf + 9);
    for (const char *h = memmem(buf, head, "\r\n", 2); h && h + 2 < buf + head - 2; h = memmem(h + 2, (size_t)(buf + head - h - 2), "\r\n", 2)) {
        if (strncasecmp(h + 2, "Content-Length:", 15) == 0) cl = strtoul(h + 17, NULL, 10);
        if (strncasecmp(h + 2, "Transfer-Encoding:", 18) == 0) return -1;
    }
    if (n < head + cl) return 0;
    *body_off = head, *body_len = cl;
    return (long)(head + cl);
}

/* A blocking request on a fresh connection, for set-up and /metrics. Returns the status; *body
 * (malloc'd, NUL-terminated) when asked. */
static int http_blocking(int port, const char *method, const char *path, const char *body, char **out) {
    int fd = tcp_connect_blocking(port);
    size_t blen = body ? strlen(body) : 0;
    char *req = xmalloc(blen + 2048);
    int h = format_request(req, 2048, method, path, port, blen);
    if (blen) memcpy(req + h, body, blen);
    for (size_t off = 0; off < (size_t)h + blen;) {
        ssize_t w = write(fd, req + off, (size_t)h + blen - off);
        if (w <= 0) die("%s %s: write: %s", method, path, strerror(errno));
        off += (size_t)w;
    }
    free(req);
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap);
    int status = 0;
    size_t bo = 0, bl = 0;
    long total;
    while ((total = parse_response(buf, n, &status, &bo, &bl)) == 0) {
        if (n + 4096 > cap) cap *= 2, buf = xrealloc(buf, cap);
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r <= 0) die("%s %s: no complete answer (%s)", method, path, r < 0 ? strerror(errno) : "EOF");
        n += (size_t)r;
    }
    if (total < 0) die("%s %s: unsupported answer", method, path);
    close(fd);
    if (out) {
        memmove(buf, buf + bo, bl);
        buf[bl] = 0;
        *out = buf;
    } else free(buf);
    return status;
}

static void http_fail(http *h, const char *why) { die("HTTP connection %d to port %d: %s", h->id, h->port, why); }

static void http_flush(http *h) {
    while (h->out_off < h->out_len) {
        ssize_t w = write(h->fd, h->out + h->out_off, h->out_len - h->out_off);
        if (w < 0) {
            if (errno == EAGAIN) break;
            http_fail(h, strerror(errno));
        }
        h->out_off += (size_t)w;
    }
    int want = h->out_off < h->out_len;
    if (want != h->epout) ep_mod(h->fd, EPOLLIN | (want ? EPOLLOUT : 0), TAG(K_HTTP, h->id)), h->epout = want;
    if (!want) h->out_len = h->out_off = 0;
}

static http *http_open(int port, void (*done)(http *, int, const char *, size_t)) {
    https = xrealloc(https, (size_t)(n_https + 1) * sizeof *https);
    http *h = &https[n_https];
    memset(h, 0, sizeof *h);
    h->id = n_https++;
    h->port = port;
    h->done = done;
    h->fd = tcp_connect_blocking(port);
    fcntl(h->fd, F_SETFL, fcntl(h->fd, F_GETFL) | O_NONBLOCK);
    ep_add(h->fd, EPOLLIN, TAG(K_HTTP, h->id));
    return h;
}

static void http_send(http *h, const char *method, const char *path, const char *body, size_t blen) {
    if (h->busy) die("HTTP connection %d is busy", h->id);
    size_t need = h->out_len + blen + 2048;
    h->out = xrealloc(h->out, need);
    int n = format_request(h->out + h->out_len, 2048, method, path, h->port, blen);
    memcpy(h->out + h->out_len + n, body, blen);
    h->out_len += (size_t)n + blen;
    h->busy = 1;
    h->t_sent = now_ns();
    http_flush(h);
}

/* The server may close a keep-alive connection that has nothing in flight (an idle timeout): open
 * a new one in its place, as any HTTP client does. With a request in flight that is an error. */
static long http_reconnects;

static void http_reopen(http *h) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, h->fd, NULL);
    close(h->fd);
    h->fd = tcp_connect_blocking(h->port);
    fcntl(h->fd, F_SETFL, fcntl(h->fd, F_GETFL) | O_NONBLOCK);
    h->in_len = 0, h->out_len = h->out_off = 0, h->epout = 0;
    ep_add(h->fd, EPOLLIN, TAG(K_HTTP, h->id));
    http_reconnects++;
}

static void http_readable(http *h) {
    for (;;) {
        if (h->in_cap - h->in_len < 65536) h->in_cap = h->in_cap * 2 + 65536, h->in = xrealloc(h->in, h->in_cap);
        ssize_t r = read(h->fd, h->in + h->in_len, h->in_cap - h->in_len);
        if (r == 0 || (r < 0 && errno == ECONNRESET)) {
            if (h->busy) http_fail(h, "the server closed the connection with a request in flight");
            http_reopen(h); /* whatever it said before closing (a 408) answered no request of ours */
            return;
        }
        if (r < 0) {
            if (errno == EAGAIN || errno == EINTR) break;
            http_fail(h, strerror(errno));
        }
        h->in_len += (size_t)r;
        if ((size_t)r < 65536) break;
    }
    for (;;) {
        int status = 0;
        size_t bo = 0, bl = 0;
        long total = parse_response(h->in, h->in_len, &status, &bo, &bl);
        if (total == 0) return;
        if (total < 0) http_fail(h, "unsupported answer (chunked, or not HTTP)");
        int was_busy = h->busy;
        h->busy = 0;
        if (was_busy && h->done) h->done(h, status, h->in + bo, bl); /* else: unsolicited (a 408 before a close) */
        memmove(h->in, h->in + total, h->in_len - (size_t)total);
        h->in_len -= (size_t)total;
    }
}

/* ------------------------------------------------------------------------------------------- */
/* the pump                                                                                      */

static void pump(int timeout_ms) {
    static struct epoll_event evs[1024];
    int n = epoll_wait(epfd, evs, 1024, timeout_ms);
    if (n < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
    for (int k = 0; k < n; k++) {
        uint32_t kind = (uint32_t)(evs[k].data.u64 >> 32), idx = (uint32_t)evs[k].data.u64, e = evs[k].events;
        if (kind == K_WS) {
            ws *c = &conns[idx];
            if (c->state == WS_CLOSED || c->state == WS_FREE) continue;
            if (e & EPOLLOUT) {
                if (c->state == WS_CONNECTING) ws_connected(c);
                else ws_flush(c);
            }
            if (c->state != WS_CLOSED && c->state != WS_CONNECTING && (e & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                ws_readable(c);
            else if (c->state == WS_CONNECTING && (e & (EPOLLHUP | EPOLLERR))) ws_connected(c);
        } else if (kind == K_HTTP) {
            http *h = &https[idx];
            if (e & EPOLLOUT) http_flush(h);
            if (e & (EPOLLIN | EPOLLHUP | EPOLLERR)) http_readable(h);
        } else if (kind == K_CMD && on_command_input) on_command_input();
    }
}

static int ms_until(uint64_t deadline, int cap) {
    uint64_t t = now_ns();
    if (t >= deadline) return 0;
    uint64_t ms = (deadline - t + 999999) / 1000000;
    return ms > (uint64_t)cap ? cap : (int)ms;
}

/* Pumps for `seconds`. */
static void pump_for(double seconds) {
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    while (now_ns() < end) pump(ms_until(end, 100));
}

/* Opens clients [first, first+count) with at most `inflight` handshakes at once; each goes
 * upgrade (+ hello → welcome (+ subscribe → snapshot)). Returns the ns from the first connect to
 * the last client ready. Bounded by --timeout. */
static uint64_t open_clients(int first, int count, int inflight, const char *path, int want_hello) {
    uint64_t t0 = now_ns(), deadline = t0 + (uint64_t)(O.timeout_s * 1e9), last = t0;
    int started = 0, ready0 = ws_ready, failed0 = ws_failed;
    while (now_ns() < deadline) {
        while (started < count && ws_inflight < inflight) ws_start(first + started++, path, want_hello);
        int done = (ws_ready - ready0) + (ws_failed - failed0);
        if (done >= count) break;
        pump(ms_until(deadline, 50));
        if (ws_ready - ready0 + ws_failed - failed0 > done) last = now_ns();
    }
    if (ws_inflight > 0) {
        note("%d clients still in their handshake after %.0f s", ws_inflight, O.timeout_s);
        for (int i = first; i < first + started; i++)
            if (conns[i].state != WS_READY && conns[i].state != WS_CLOSED) ws_fail(&conns[i], "handshake timeout");
    }
    for (int i = first + started; i < first + count; i++) {
        conns[i].id = i, conns[i].state = WS_CLOSED, conns[i].fd = -1;
        ws_failed++;
    }
    return last - t0;
}

static void alloc_conns(int n) {
    long lim = nofile_limit();
    if (n + 16 > lim) die("%d clients need %d descriptors; this process may open %ld (RLIMIT_NOFILE hard limit)", n, n + 16, lim);
    conns = xcalloc((size_t)n, sizeof *conns);
    n_conns = n;
}

static int default_hello(const char *path) { return O.hello >= 0 ? O.hello : strcmp(path, "/v1/connect") == 0; }

static void load_identities(void) {
    if (O.user_token_file) {
        FILE *f = fopen(O.user_token_file, "r");
        if (!f) die("cannot read %s: %s", O.user_token_file, strerror(errno));
        char line[4096];
        int cap = 0;
        while (fgets(line, sizeof line, f)) {
            size_t l = strcspn(line, "\r\n");
            line[l] = 0;
            if (!l) continue;
            if (n_user_tokens == cap) cap = cap ? cap * 2 : 1024, user_tokens = xrealloc(user_tokens, (size_t)cap * sizeof *user_tokens);
            user_tokens[n_user_tokens++] = strdup(line);
        }
        fclose(f);
    } else if (O.jwt_secret_file) jwt_secret = read_file_trimmed(O.jwt_secret_file);
}

static void label(const char *mode) {
    if (O.label) printf("%s: ", O.label);
    printf("%s", mode);
}

/* ------------------------------------------------------------------------------------------- */
/* mode: connect                                                                                 */

static int mode_connect(void) {
    if (!O.path) O.path = "/v1/connect";
    if (O.n < 0) O.n = 10000;
    int hello = default_hello(O.path) || O.subscribe;
    alloc_conns(O.n);
    if (O.subscribe && O.admin_port) {
        bearer = admin_token();
        char path[512];
        snprintf(path, sizeof path, "/v1/screens/%s", O.subscribe);
        int st = http_blocking(O.admin_port, "PUT", path,
                               "{\"type\":\"screen\",\"title\":\"bench\",\"children\":[{\"id\":\"a\",\"type\":\"text\",\"text\":\"hello\"}]}", NULL);
        if (st / 100 != 2) die("PUT %s: %d", path, st);
        pump_for(0.3);
    }
    long rss0 = O.pid ? rss_kib(O.pid) : 0;
    uint64_t cpu0 = O.pid ? cpu_ns(O.pid) : 0, gen0 = self_cpu_ns();
    watch_start(O.pid);
    uint64_t took = open_clients(0, O.n, O.inflight, O.path, hello);
    uint64_t cpu1 = O.pid ? cpu_ns(O.pid) : 0, gen1 = self_cpu_ns();
    double others = watch_others_pct(O.pid);
    int ready = ws_ready;
    pump_for(O.settle_s);
    long rss1 = O.pid ? rss_kib(O.pid) : 0;
    samples_sort(&connect_lat);
    char a[32], b[32];
    const char *what = O.subscribe ? "upgrade+hello+welcome+subscribe+snapshot" : hello ? "upgrade+hello+welcome" : "upgrade";
    label("connect");
    printf(" %s %s: %d clients, %d in flight: %.0f connects/s (%.3f s; each p50 %s, p99 %s)", O.path, what, ready,
           O.inflight, took ? (double)ready / ((double)took / 1e9) : 0, (double)took / 1e9,
           dur(pct(connect_lat.v, connect_lat.n, 0.5), a), dur(pct(connect_lat.v, connect_lat.n, 0.99), b));
    if (O.pid)
        printf("; server CPU %.1f µs/connect; server RSS %.1f -> %.1f MiB = %.2f KiB per connection (after %.1f s)",
               ready ? (double)(cpu1 - cpu0) / 1e3 / ready : 0, rss0 / 1024.0, rss1 / 1024.0,
               ready ? (double)(rss1 - rss0) / ready : 0, O.settle_s);
    /* The generator's own cost: when it is near 100 % of a core, connects/s is its limit, not the server's. */
    printf("; generator CPU %.1f µs/connect (%.0f%% of a core)", ready ? (double)(gen1 - gen0) / 1e3 / ready : 0,
           took ? 100.0 * (double)(gen1 - gen0) / (double)took : 0);
    printf("; others %.0f%% CPU", others);
    if (ws_failed) printf("; %d FAILED (%s)", ws_failed, first_error);
    printf("\n");
    fflush(stdout);
    if (O.hold_s > 0) pump_for(O.hold_s);
    return ws_failed ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------- */
/* mode: fanout                                                                                  */

enum { T_RAW, T_SYNC, T_PATCH };
static int trigger_kind;
static uint32_t cur_round;
static int round_got, round_http_done, round_other, round_snapshots;
static uint64_t round_t0, round_first, round_last, last_msg_len;
static samples fan_lat;

/* --group member: per round, deliveries so far, the last one's time, and every arrival time
 * (turned into latencies once the round's T0 is known). */
static int *member_got;
static uint64_t *member_last;
static samples *member_arrivals;

static void fan_message(ws *c, int op, const uint8_t *prefix, size_t plen, uint64_t len) {
    (void)op;
    int match = trigger_kind == T_RAW    ? 1
              : trigger_kind == T_SYNC   ? has_type(prefix, plen, "sync")
                                         : (has_type(prefix, plen, "patch") || has_type(prefix, plen, "snapshot"));
    if (member_got) {
        /* a member does not know when a round starts: a client's k-th message is round k's */
        if (!match || (int)c->round >= O.rounds) {
            round_other++;
            return;
        }
        uint64_t t = now_ns();
        int r = (int)++c->round;
        member_got[r]++;
        if (t > member_last[r]) member_last[r] = t;
        samples_add(&member_arrivals[r], t);
        last_msg_len = len;
        if (trigger_kind == T_PATCH && has_type(prefix, plen, "snapshot")) round_snapshots++;
        return;
    }
    if (!match || c->round == cur_round || cur_round == 0) {
        round_other++;
        return;
    }
    if (trigger_kind == T_PATCH && has_type(prefix, plen, "snapshot")) round_snapshots++;
    uint64_t t = now_ns();
    c->round = cur_round;
    round_got++;
    if (!round_first) round_first = t;
    round_last = t;
    last_msg_len = len;
    samples_add(&fan_lat, t - round_t0);
}

static void fan_http_done(http *h, int status, const char *body, size_t len) {
    (void)h;
    if (status / 100 != 2) die("trigger answered %d: %.*s", status, (int)(len > 300 ? 300 : len), body);
    round_http_done = 1;
}

static void screen_tree(char *buf, size_t cap, unsigned v) {
    /* 8 keyed rows and a title: changing the title is a one-op patch */
    int n = snprintf(buf, cap, "{\"type\":\"screen\",\"title\":\"t%u\",\"children\":[", v);
    for (int r = 0; r < 8; r++)
        n += snprintf(buf + n, cap - (size_t)n, "%s{\"id\":\"r%d\",\"type\":\"row\",\"text\":\"row number %d\"}", r ? "," : "", r, r);
    snprintf(buf + n, cap - (size_t)n, "]}");
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

static void group_path(char *buf, size_t cap, const char *fmt, int a, int b) {
    int n = snprintf(buf, cap, "%s/", O.group);
    snprintf(buf + n, cap - (size_t)n, fmt, a, b);
}

static void write_file(const char *path, const char *text) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) die("cannot write %s: %s", tmp, strerror(errno));
    fputs(text, f);
    fclose(f);
    if (rename(tmp, path) != 0) die("rename %s: %s", path, strerror(errno));
}

/* T0 of round r from DIR/rounds, or 0 while the lead has not started it. */
static uint64_t group_round_t0(int r) {
    char path[4200];
    snprintf(path, sizeof path, "%s/rounds", O.group);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int round;
    unsigned long long t0;
    uint64_t found = 0;
    while (fscanf(f, "%d %llu", &round, &t0) == 2)
        if (round == r) found = t0;
    fclose(f);
    return found;
}

/* A --group member: listens for the lead's rounds; see the comment at the top. */
static int fanout_member(void) {
    member_got = calloc((size_t)O.rounds + 1, sizeof *member_got);
    member_last = calloc((size_t)O.rounds + 1, sizeof *member_last);
    member_arrivals = calloc((size_t)O.rounds + 1, sizeof *member_arrivals);
    char path[4200], text[64];
    group_path(path, sizeof path, "ready.%d", O.member, 0);
    write_file(path, "ready\n");
    samples lat = {0};
    long missing = 0;
    uint64_t total_ns = 0;
    FILE *result;
    group_path(path, sizeof path, "result.%d", O.member, 0);
    result = fopen(path, "w");
    if (!result) die("cannot write %s", path);
    for (int r = 1; r <= O.rounds; r++) {
        uint64_t t0 = 0, deadline = now_ns() + (uint64_t)(O.round_timeout_s * 1e9) * 4;
        while (!(t0 = group_round_t0(r)) && now_ns() < deadline) pump(5);
        if (!t0) die("round %d: the lead did not start it", r);
        deadline = t0 + (uint64_t)(O.round_timeout_s * 1e9);
        while (member_got[r] < ws_ready && now_ns() < deadline) pump(ms_until(deadline, 20));
        if (member_got[r] < ws_ready) {
            missing += ws_ready - member_got[r];
            note("round %d: only %d of %d clients got the message", r, member_got[r], ws_ready);
        }
        uint64_t took = member_last[r] > t0 ? member_last[r] - t0 : 0;
        total_ns += took;
        for (size_t i = 0; i < member_arrivals[r].n; i++)
            samples_add(&lat, member_arrivals[r].v[i] > t0 ? member_arrivals[r].v[i] - t0 : 0);
        fprintf(result, "%d %llu %d\n", r, (unsigned long long)took, member_got[r]);
        fflush(result);
        snprintf(text, sizeof text, "%llu\n", (unsigned long long)took);
        group_path(path, sizeof path, "done.%d.%d", O.member, r);
        write_file(path, text);
    }
    fclose(result);
    samples_sort(&lat);
    char a[32], b[32];
    label("fanout");
    printf(" member %d %s N=%d rounds=%d: %.0f deliveries/s, p50 %s, p99 %s, message %llu B", O.member, O.trigger,
           ws_ready, O.rounds, total_ns ? (double)lat.n / ((double)total_ns / 1e9) : 0,
           dur(pct(lat.v, lat.n, 0.5), a), dur(pct(lat.v, lat.n, 0.99), b), (unsigned long long)last_msg_len);
    if (round_snapshots) printf(", %d snapshots instead of patches", round_snapshots);
    if (missing) printf(", %ld MISSING", missing);
    printf("\n");
    return missing || ws_failed ? 1 : 0;
}

static int mode_fanout(void) {
    if (!O.trigger) die("fanout needs --trigger raw|sync|patch");
    trigger_kind = !strcmp(O.trigger, "raw") ? T_RAW : !strcmp(O.trigger, "sync") ? T_SYNC : !strcmp(O.trigger, "patch") ? T_PATCH : -1;
    if (trigger_kind < 0) die("--trigger is raw, sync or patch");
    if (O.n < 0) O.n = 10000;
    if (O.rounds < 0) O.rounds = O.n >= 200000 / 5 ? 5 : 200000 / O.n > 200 ? 200 : 200000 / O.n;
    if (!O.path) O.path = trigger_kind == T_RAW ? "/ws" : "/v1/connect";
    if (!O.screen) O.screen = "bench/fanout";
    if (trigger_kind != T_RAW) {
        if (!O.admin_port) die("--trigger %s needs --admin-port", O.trigger);
        bearer = admin_token();
    }
    char tree[4096], path[512];
    snprintf(path, sizeof path, "/v1/screens/%s", O.screen);
    if (O.group && O.member < 0 && O.followers < 1) die("--group needs --followers F (the lead) or --member K");
    if (trigger_kind == T_PATCH) {
        if (!O.group) { /* a group's screen is made before any member subscribes (bench/scaleout/fanout.sh) */
            screen_tree(tree, sizeof tree, 0);
            int st = http_blocking(O.admin_port, "PUT", path, tree, NULL);
            if (st / 100 != 2) die("PUT %s: %d", path, st);
        }
        O.subscribe = O.screen;
    }
    alloc_conns(O.n);
    on_message = fan_message;
    uint64_t took = open_clients(0, O.n, O.inflight, O.path, trigger_kind != T_RAW);
    if (ws_failed) {
        note("%d of %d clients failed to connect (%s)", ws_failed, O.n, first_error);
        return 1;
    }
    note("%d clients ready in %.2f s", ws_ready, (double)took / 1e9);
    if (O.group && O.member >= 0) return fanout_member();
    if (O.group) {
        char ready[4200];
        uint64_t deadline = now_ns() + (uint64_t)(O.timeout_s * 1e9);
        for (int k = 1; k <= O.followers; k++) {
            group_path(ready, sizeof ready, "ready.%d", k, 0);
            while (!file_exists(ready) && now_ns() < deadline) pump(20);
            if (!file_exists(ready)) die("member %d is not ready after %.0f s", k, O.timeout_s);
        }
    }
    FILE *group_result = NULL;
    if (O.group) {
        char where[4200];
        group_path(where, sizeof where, "result.%d", 0, 0);
        group_result = fopen(where, "w");
    }
    http *trig = http_open(trigger_kind == T_RAW ? O.port : O.admin_port, fan_http_done);
    pump_for(0.5);
    round_other = 0;
    /* the raw body looks like a sync message of the requested size */
    char body[8192];
    int blen = 0;
    if (trigger_kind == T_RAW) {
        int size = O.body_size > 0 ? O.body_size : 87;
        if (size > (int)sizeof body - 1) size = (int)sizeof body - 1;
        /* what the hub sends for a sync to all (85-90 B), padded to --body-size */
        blen = snprintf(body, sizeof body, "{\"type\":\"sync\",\"id\":\"s-1\",\"seq\":1,\"reason\":\"bench\",\"scope\":\"bundle\",\"jitter_ms\":4000}");
        if (size > blen + 9) {
            blen = snprintf(body + blen - 1, sizeof body - (size_t)blen, ",\"pad\":\"") + blen - 1;
            while (blen < size - 2) body[blen++] = 'x';
            body[blen++] = '"', body[blen++] = '}';
            body[blen] = 0;
        }
    } else if (trigger_kind == T_SYNC) blen = snprintf(body, sizeof body, "{\"target\":{\"all\":true},\"reason\":\"bench\"}");
    watch_start(O.pid);
    double others = 0;
    uint64_t cpu0 = O.pid ? cpu_ns(O.pid) : 0, gen0 = self_cpu_ns(), cpu1 = cpu0, gen1 = gen0;
    uint64_t total_ns = 0, best_ns = UINT64_MAX, worst_ns = 0;
    samples firsts = {0};
    long missing = 0;
    int rounds_done = 0;
    for (int r = 1; r <= O.rounds; r++) {
        cur_round = (uint32_t)r;
        round_got = 0, round_http_done = 0, round_first = round_last = 0;
        if (trigger_kind == T_PATCH) blen = (int)strlen((screen_tree(body, sizeof body, (unsigned)r), body));
        round_t0 = now_ns();
        if (O.group) {
            char rounds[4200];
            snprintf(rounds, sizeof rounds, "%s/rounds", O.group);
            FILE *f = fopen(rounds, "a");
            if (!f) die("cannot append to %s", rounds);
            fprintf(f, "%d %llu\n", r, (unsigned long long)round_t0);
            fclose(f);
        }
        http_send(trig, trigger_kind == T_PATCH ? "PUT" : "POST",
                  trigger_kind == T_RAW ? "/publish" : trigger_kind == T_SYNC ? "/v1/syncs" : path, body, (size_t)blen);
        uint64_t deadline = round_t0 + (uint64_t)(O.round_timeout_s * 1e9);
        while ((round_got < ws_ready || !round_http_done) && now_ns() < deadline) pump(ms_until(deadline, 100));
        if (!round_http_done) die("round %d: the trigger request got no answer in %.0f s", r, O.round_timeout_s);
        cpu1 = O.pid ? cpu_ns(O.pid) : 0, gen1 = self_cpu_ns();
        others = watch_others_pct(O.pid);
        rounds_done++;
        if (round_got < ws_ready) {
            missing += ws_ready - round_got;
            note("round %d: only %d of %d clients got the message in %.0f s", r, round_got, ws_ready, O.round_timeout_s);
        }
        if (O.group) {
            /* every member has the round before the next one starts */
            char done[4200];
            for (int k = 1; k <= O.followers; k++) {
                group_path(done, sizeof done, "done.%d.%d", k, r);
                while (!file_exists(done) && now_ns() < deadline + (uint64_t)(O.round_timeout_s * 1e9)) pump(5);
                if (!file_exists(done)) die("round %d: member %d did not finish", r, k);
            }
            if (group_result)
                fprintf(group_result, "%d %llu %d\n", r, (unsigned long long)(round_got ? round_last - round_t0 : 0), round_got);
        }
        if (round_got) {
            uint64_t t = round_last - round_t0;
            total_ns += t;
            if (t < best_ns) best_ns = t;
            if (t > worst_ns) worst_ns = t;
            samples_add(&firsts, round_first - round_t0);
        }
        if (ws_failed) break;
        pump_for(O.gap_s);
    }
    if (group_result) fclose(group_result);
    samples_sort(&fan_lat);
    samples_sort(&firsts);
    long deliveries = (long)fan_lat.n;
    char a[32], b[32], c[32];
    label("fanout");
    printf(" %s N=%d rounds=%d: %.0f deliveries/s (rounds %.0f-%.0f/s), p50 %s, p99 %s, trigger->first %s",
           O.trigger, ws_ready, rounds_done, total_ns ? (double)deliveries / ((double)total_ns / 1e9) : 0,
           worst_ns ? (double)ws_ready / ((double)worst_ns / 1e9) : 0, best_ns != UINT64_MAX ? (double)ws_ready / ((double)best_ns / 1e9) : 0,
           dur(pct(fan_lat.v, fan_lat.n, 0.5), a), dur(pct(fan_lat.v, fan_lat.n, 0.99), b), dur(pct(firsts.v, firsts.n, 0.5), c));
    if (O.pid) printf(", server CPU %.2f µs/delivery", deliveries ? (double)(cpu1 - cpu0) / 1e3 / (double)deliveries : 0);
    printf(", generator CPU %.2f µs/delivery, message %llu B", deliveries ? (double)(gen1 - gen0) / 1e3 / (double)deliveries : 0,
           (unsigned long long)last_msg_len);
    printf(", others %.0f%% CPU", others);
    if (round_snapshots) printf(", %d snapshots instead of patches", round_snapshots);
    if (missing) printf(", %ld MISSING", missing);
    if (round_other) printf(", %d other messages", round_other);
    if (ws_failed) printf(", %d clients FAILED (%s)", ws_failed, first_error);
    printf("\n");
    return missing || ws_failed ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------- */
/* mode: admin                                                                                   */

static samples adm_lat;
static long adm_ok, adm_err, adm_seq;
static int adm_last_status;
static char adm_last_error[256];
static uint64_t adm_stop, adm_start, adm_last_done;

static void adm_issue(http *h) {
    char path[128], body[256];
    long k = adm_seq++;
    snprintf(path, sizeof path, "/v1/screens/bench-%ld", k % O.keys);
    int n = snprintf(body, sizeof body, "{\"type\":\"screen\",\"title\":\"bench\",\"n\":%ld,\"children\":[{\"id\":\"a\",\"type\":\"text\",\"text\":\"v%ld\"}]}", k, k);
    http_send(h, "PUT", path, body, (size_t)n);
}

static void adm_done(http *h, int status, const char *body, size_t len) {
    uint64_t t = now_ns();
    adm_last_done = t;
    if (status / 100 == 2) adm_ok++, samples_add(&adm_lat, t - h->t_sent);
    else {
        adm_err++;
        adm_last_status = status;
        snprintf(adm_last_error, sizeof adm_last_error, "%d %.*s", status, (int)(len > 200 ? 200 : len), body);
    }
    if (t < adm_stop && O.rate <= 0) adm_issue(h);
}

/* Counters from /metrics whose name mentions fsync, commit or journal (absent on older hubs). */
typedef struct {
    char name[128];
    double v;
} metric;

static int scrape(metric *m, int cap) {
    char *text = NULL;
    int st = http_blocking(O.admin_port, "GET", "/metrics", NULL, &text);
    int n = 0;
    if (st == 200)
        for (char *line = strtok(text, "\n"); line && n < cap; line = strtok(NULL, "\n")) {
            if (line[0] == '#') continue;
            if (!strstr(line, "fsync") && !strstr(line, "commit") && !strstr(line, "journal")) continue;
            char *sp = strrchr(line, ' ');
            if (!sp) continue;
            snprintf(m[n].name, sizeof m[n].name, "%.*s", (int)(sp - line), line);
            m[n].v = atof(sp + 1);
            n++;
        }
    free(text);
    return n;
}

static volatile sig_atomic_t stop_requested;
static void on_stop_signal(int sig) { (void)sig, stop_requested = 1; }

static int mode_admin(void) {
    if (!O.admin_port) die("admin needs --admin-port");
    if (O.seconds < 0) O.seconds = 5;
    if (O.keys < 1) O.keys = 1;
    bearer = admin_token();
    metric m0[64], m1[64];
    int nm0 = scrape(m0, 64);
    for (int i = 0; i < O.conns; i++) http_open(O.admin_port, adm_done);
    watch_start(O.pid);
    uint64_t cpu0 = O.pid ? cpu_ns(O.pid) : 0;
    adm_start = now_ns();
    adm_stop = adm_start + (uint64_t)(O.seconds * 1e9);
    if (O.rate <= 0)
        for (int i = 0; i < n_https; i++) adm_issue(&https[i]);
    uint64_t interval = O.rate > 0 ? (uint64_t)(1e9 / O.rate) : 0, next_due = adm_start;
    long late = 0;
    int rr = 0;
    uint64_t late_due = 0;
    /* SIGTERM/SIGINT end the run early and still print its figures (run.sh's background load) */
    signal(SIGTERM, on_stop_signal), signal(SIGINT, on_stop_signal);
    while (now_ns() < adm_stop) {
        if (stop_requested) {
            adm_stop = now_ns();
            break;
        }
        if (O.rate > 0) {
            uint64_t t = now_ns();
            int blocked = 0;
            while (next_due <= t && next_due < adm_stop) {
                http *idle = NULL; /* round robin, so that every connection stays in use */
                for (int i = 0; i < n_https && !idle; i++, rr = (rr + 1) % n_https)
                    if (!https[rr].busy) idle = &https[rr];
                if (!idle) {
                    if (next_due != late_due) late++, late_due = next_due; /* counted once per request */
                    blocked = 1;
                    break;
                }
                adm_issue(idle);
                next_due += interval;
            }
            /* wait for the next due time, or (every connection busy) for an answer */
            pump(blocked ? 5 : ms_until(next_due, 1));
        } else pump(ms_until(adm_stop, 100));
    }
    uint64_t drain = now_ns() + 10000000000ull;
    for (;;) {
        int busy = 0;
        for (int i = 0; i < n_https; i++) busy += https[i].busy;
        if (!busy || now_ns() > drain) break;
        pump(ms_until(drain, 100));
    }
    uint64_t span = (adm_last_done > adm_start ? adm_last_done : now_ns()) - adm_start;
    double others = watch_others_pct(O.pid);
    uint64_t cpu1 = O.pid ? cpu_ns(O.pid) : 0;
    int nm1 = scrape(m1, 64);
    samples_sort(&adm_lat);
    char a[32], b[32], c[32];
    label("admin");
    printf(" PUT /v1/screens/bench-K (%d keys), %d connections", O.keys, O.conns);
    if (O.rate > 0) printf(", paced at %.0f/s", O.rate);
    printf(", %.1f s: %.0f mutations/s, p50 %s, p99 %s, max %s", (double)span / 1e9, (double)adm_ok / ((double)span / 1e9),
           dur(pct(adm_lat.v, adm_lat.n, 0.5), a), dur(pct(adm_lat.v, adm_lat.n, 0.99), b),
           dur(adm_lat.n ? adm_lat.v[adm_lat.n - 1] : 0, c));
    if (O.pid) printf(", server CPU %.0f µs/mutation", adm_ok ? (double)(cpu1 - cpu0) / 1e3 / (double)adm_ok : 0);
    for (int i = 0; i < nm1; i++)
        for (int j = 0; j < nm0; j++)
            if (!strcmp(m0[j].name, m1[i].name) && m1[i].v != m0[j].v) printf("; %s +%.0f", m1[i].name, m1[i].v - m0[j].v);
    printf("; others %.0f%% CPU", others);
    if (late) printf("; %ld requests waited for a free connection", late);
    if (http_reconnects) printf("; the server closed %ld idle keep-alive connections (reopened)", http_reconnects);
    if (adm_err) printf("; %ld REFUSED (last: %s)", adm_err, adm_last_error);
    printf("\n");
    return adm_err ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------- */
/* mode: echo                                                                                    */

static int echo_first, echo_count;
static uint64_t echo_measure_from, echo_stop, echo_interval;
static samples echo_lat;
static long echo_msgs;
static int echo_running;

static void echo_send(ws *c) {
    uint8_t msg[65536];
    size_t n = (size_t)O.size > sizeof msg ? sizeof msg : (size_t)O.size;
    for (size_t k = 0; k < n; k++) msg[k] = (uint8_t)('a' + (k + (size_t)c->id) % 26);
    c->t0 = now_ns();
    c->awaiting = 1;
    ws_send(c, 0x2, msg, n);
}

static void echo_message(ws *c, int op, const uint8_t *prefix, size_t plen, uint64_t len) {
    (void)op, (void)prefix, (void)plen, (void)len;
    if (c->id < echo_first || !c->awaiting) return; /* idle clients: ignore */
    uint64_t t = now_ns();
    c->awaiting = 0;
    if (t >= echo_measure_from && t < echo_stop) samples_add(&echo_lat, t - c->t0), echo_msgs++;
    if (t >= echo_stop) return;
    if (echo_interval == 0) echo_send(c);
    else c->next_send += echo_interval; /* on schedule; when late, the loop sends at once */
}

static int mode_echo(void) {
    if (!O.path) O.path = "/v1/echo";
    if (O.n < 0) O.n = 100;
    if (O.seconds < 0) O.seconds = 5;
    if (O.interval_ms < 0) O.interval_ms = 0;
    alloc_conns(O.idle + O.n);
    uint64_t idle_took = 0;
    if (O.idle) {
        idle_took = open_clients(0, O.idle, O.inflight, O.idle_path, default_hello(O.idle_path));
        note("%d idle clients on %s ready in %.2f s", ws_ready, O.idle_path, (double)idle_took / 1e9);
    }
    echo_first = O.idle, echo_count = O.n;
    open_clients(O.idle, O.n, O.inflight, O.path, 0);
    if (ws_failed) die("%d clients failed (%s)", ws_failed, first_error);
    on_message = echo_message;
    echo_interval = (uint64_t)(O.interval_ms * 1e6);
    uint64_t start = now_ns();
    echo_measure_from = start + (uint64_t)(O.warmup_s * 1e9);
    echo_stop = echo_measure_from + (uint64_t)(O.seconds * 1e9);
    for (int i = 0; i < O.n; i++) {
        ws *c = &conns[O.idle + i];
        if (echo_interval == 0) echo_send(c);
        else c->next_send = start + echo_interval * (uint64_t)i / (uint64_t)O.n; /* staggered */
    }
    echo_running = 1;
    int watching = 0; /* 0 before the window, 1 in it, 2 after */
    double others = 0;
    while (now_ns() < echo_stop + 200000000ull) {
        if (watching == 0 && now_ns() >= echo_measure_from) watch_start(O.pid), watching = 1;
        if (watching == 1 && now_ns() >= echo_stop) others = watch_others_pct(O.pid), watching = 2;
        uint64_t t = now_ns(), next = echo_stop + 200000000ull;
        if (echo_interval && t < echo_stop)
            for (int i = 0; i < O.n; i++) {
                ws *c = &conns[O.idle + i];
                if (c->state != WS_READY || c->awaiting) continue;
                if (c->next_send <= t) echo_send(c);
                else if (c->next_send < next) next = c->next_send;
            }
        pump(echo_interval ? ms_until(next < t + 1000000 ? t + 1000000 : next, 1) : ms_until(next, 100));
    }
    samples_sort(&echo_lat);
    char a[32], b[32], c[32];
    label("echo");
    printf(" %s N=%d", O.path, O.n);
    if (O.idle) printf(" (+%d idle on %s)", O.idle, O.idle_path);
    printf(", %d B binary, ", O.size);
    if (echo_interval) printf("each client every %.1f ms", O.interval_ms);
    else printf("one in flight each");
    printf(", %.0f s: %.0f msg/s, RTT p50 %s, p99 %s, max %s", O.seconds, (double)echo_msgs / O.seconds,
           dur(pct(echo_lat.v, echo_lat.n, 0.5), a), dur(pct(echo_lat.v, echo_lat.n, 0.99), b),
           dur(echo_lat.n ? echo_lat.v[echo_lat.n - 1] : 0, c));
    printf("; others %.0f%% CPU", others);
    if (ws_failed) printf("; %d clients FAILED (%s)", ws_failed, first_error);
    printf("\n");
    return ws_failed ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------- */
/* mode: usersync                                                                                */

static int us_target = -1, us_got, us_http_done, us_stray;
static uint64_t us_t0;
static samples us_lat;

static void us_message(ws *c, int op, const uint8_t *prefix, size_t plen, uint64_t len) {
    (void)op, (void)len;
    if (!has_type(prefix, plen, "sync")) return;
    if (c->id != us_target || us_got) { us_stray++; return; }
    us_got = 1;
    samples_add(&us_lat, now_ns() - us_t0);
}

static void us_http(http *h, int status, const char *body, size_t len) {
    (void)h;
    if (status / 100 != 2) die("POST /v1/syncs answered %d: %.*s", status, (int)(len > 300 ? 300 : len), body);
    us_http_done = 1;
}

static int mode_usersync(void) {
    if (!O.admin_port) die("usersync needs --admin-port");
    if (!O.jwt_secret_file && !O.user_token_file) {
        static char p[4096];
        if (!O.data) die("usersync needs --data DIR (for jwt.secret and admin.token) or --jwt-secret-file");
        snprintf(p, sizeof p, "%s/jwt.secret", O.data);
        O.jwt_secret_file = p;
    }
    load_identities();
    bearer = admin_token();
    if (!O.path) O.path = "/v1/connect";
    if (O.n < 0) O.n = 10000;
    if (O.seconds < 0) O.seconds = 10;
    if (O.interval_ms < 0) O.interval_ms = 10;
    O.hello = 1;
    alloc_conns(O.n);
    uint64_t took = open_clients(0, O.n, O.inflight, O.path, 1);
    if (ws_failed) die("%d clients failed (%s)", ws_failed, first_error);
    note("%d signed-in clients ready in %.2f s", ws_ready, (double)took / 1e9);
    on_message = us_message;
    http *h = http_open(O.admin_port, us_http);
    pump_for(0.3);
    uint64_t start = now_ns(), stop = start + (uint64_t)(O.seconds * 1e9), interval = (uint64_t)(O.interval_ms * 1e6);
    uint64_t next = start;
    long probes = 0, lost = 0;
    watch_start(O.pid);
    while (now_ns() < stop) {
        while (now_ns() < next) pump(ms_until(next, 1));
        int k = (int)(rnd() % (uint64_t)O.n);
        if (conns[k].state != WS_READY) continue;
        char body[256];
        int n = snprintf(body, sizeof body, "{\"target\":{\"user\":\"u%d\"},\"reason\":\"probe\"}", k);
        us_target = k, us_got = 0, us_http_done = 0;
        us_t0 = now_ns();
        http_send(h, "POST", "/v1/syncs", body, (size_t)n);
        uint64_t deadline = us_t0 + 5000000000ull;
        while ((!us_got || !us_http_done) && now_ns() < deadline) pump(ms_until(deadline, 100));
        if (!us_http_done) die("POST /v1/syncs: no answer in 5 s");
        probes++;
        if (!us_got) lost++;
        next += interval;
        if (next < now_ns()) next = now_ns();
    }
    double others = watch_others_pct(O.pid);
    samples_sort(&us_lat);
    char a[32], b[32], c[32];
    label("usersync");
    printf(" sync to one user among %d signed-in clients, one every %.0f ms, %.0f s: %ld probes, POST->arrival p50 %s, p99 %s, max %s",
           ws_ready, O.interval_ms, O.seconds, probes, dur(pct(us_lat.v, us_lat.n, 0.5), a), dur(pct(us_lat.v, us_lat.n, 0.99), b),
           dur(us_lat.n ? us_lat.v[us_lat.n - 1] : 0, c));
    printf("; others %.0f%% CPU", others);
    if (lost) printf("; %ld LOST", lost);
    if (us_stray) printf("; %d syncs to the wrong client", us_stray);
    if (ws_failed) printf("; %d clients FAILED (%s)", ws_failed, first_error);
    printf("\n");
    return lost || ws_failed ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------- */
/* mode: track (issue 26: goal events)                                                           */
/*
 * --n clients say hello (anonymous devices d-<i>: each its own unit) and subscribe to --screen;
 * with --admin-port the screen (8 keyed rows) and a running 50/50 experiment --experiment
 * (default bench-track, variant b changes the title) are stored first, so every client is served
 * a variant of it and its goal events count. Without --admin-port the screen and a running
 * experiment touching it must exist. Then each client sends
 * {"type":"track","event":"purchase","value":1} every --interval ms (staggered over the interval;
 * a client that falls behind sends one per pass until it is on schedule again), for --seconds
 * after --warmup. SIGTERM/SIGINT end the run early and still print (a background load).
 *
 * The hub answers nothing to a track that counts; an `error` (bad_track, rate_limited) is counted
 * and the first one shown. The per-connection rate limit (default 100 messages/s, bursts of
 * 1000: `pushhub --message-rate`) counts tracks like every message: at --interval below 10 ms,
 * start the hub with a higher rate. With --admin-port, /metrics' pushhub_result_events_total
 * before and after the window says how many events the control plane appended to the results
 * log (the tracks that counted).
 */

static long tr_errors, tr_rate_limited, tr_sent_window;
static char tr_first_error[PREFIX + 1];
static int tr_measuring;

static void tr_message(ws *c, int op, const uint8_t *p, size_t n, uint64_t len) {
    (void)c, (void)op, (void)len;
    if (!has_type(p, n, "error")) return; /* patches of the screen, heartbeats */
    tr_errors++;
    if (memmem(p, n, "rate_limited", 12)) tr_rate_limited++;
    if (!tr_first_error[0]) snprintf(tr_first_error, sizeof tr_first_error, "%.*s", (int)n, (const char *)p);
}

/* CPU ns (clock ticks: 10 ms resolution) of each thread of a process, by tid; returns how many. */
typedef struct {
    int tid;
    uint64_t ns;
} thread_cpu;

static int threads_cpu(int pid, thread_cpu *out, int cap) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < cap) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char stat[320], buf[1024];
        snprintf(stat, sizeof stat, "/proc/%d/task/%s/stat", pid, e->d_name);
        FILE *f = fopen(stat, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        char *p = strrchr(buf, ')');
        unsigned long ut = 0, st = 0;
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) continue;
        out[n].tid = atoi(e->d_name);
        out[n++].ns = (uint64_t)(ut + st) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
    }
    closedir(d);
    return n;
}

static int cmp_tid(const void *a, const void *b) { return ((const thread_cpu *)a)->tid - ((const thread_cpu *)b)->tid; }

/* pushhub_result_events_total from /metrics, or -1. */
static long tr_result_events(void) {
    char *text = NULL;
    long v = -1;
    if (http_blocking(O.admin_port, "GET", "/metrics", NULL, &text) == 200) {
        const char *m = strstr(text, "\npushhub_result_events_total ");
        if (m) v = atol(m + strlen("\npushhub_result_events_total "));
    }
    free(text);
    return v;
}

static int mode_track(void) {
    if (O.n < 0) O.n = 1000;
    if (O.seconds < 0) O.seconds = 10;
    if (O.interval_ms <= 0) O.interval_ms = 20;
    if (!O.screen) O.screen = "bench/track";
    if (!O.experiment) O.experiment = "bench-track";
    if (!O.path) O.path = "/v1/connect";
    double per_client = 1000.0 / O.interval_ms;
    if (per_client > 100)
        note("each client sends %.0f messages/s: above the hub's default rate limit (100/s, bursts of 1000); "
             "start it with --message-rate", per_client);
    if (O.admin_port) {
        bearer = admin_token();
        char tree[4096], path[512], body[1024];
        snprintf(path, sizeof path, "/v1/screens/%s", O.screen);
        screen_tree(tree, sizeof tree, 0);
        int st = http_blocking(O.admin_port, "PUT", path, tree, NULL);
        if (st / 100 != 2) die("PUT %s: %d", path, st);
        snprintf(path, sizeof path, "/v1/experiments/%s", O.experiment);
        snprintf(body, sizeof body,
                 "{\"key\":\"%s\",\"status\":\"running\",\"variants\":[{\"key\":\"a\",\"weight\":1},{\"key\":\"b\",\"weight\":1}],"
                 "\"screens\":{\"%s\":{\"b\":{\"title\":\"B\"}}}}",
                 O.experiment, O.screen);
        st = http_blocking(O.admin_port, "PUT", path, body, NULL);
        if (st / 100 != 2) die("PUT %s: %d", path, st);
    }
    O.subscribe = O.screen;
    alloc_conns(O.n);
    on_message = tr_message;
    uint64_t took = open_clients(0, O.n, O.inflight, O.path, 1);
    if (ws_failed) die("%d of %d clients failed (%s)", ws_failed, O.n, first_error);
    note("%d clients subscribed to %s in %.2f s", ws_ready, O.screen, (double)took / 1e9);
    signal(SIGTERM, on_stop_signal), signal(SIGINT, on_stop_signal);
    static const char msg[] = "{\"type\":\"track\",\"event\":\"purchase\",\"value\":1}";
    uint8_t frame[sizeof msg + 14];
    uint64_t interval = (uint64_t)(O.interval_ms * 1e6), start = now_ns();
    uint64_t from = start + (uint64_t)(O.warmup_s * 1e9), stop = from + (uint64_t)(O.seconds * 1e9);
    for (int i = 0; i < O.n; i++) conns[i].next_send = start + interval * (uint64_t)i / (uint64_t)O.n; /* staggered */
    long events0 = -1, late = 0;
    thread_cpu th0[64], th1[64];
    int nt0 = 0;
    uint64_t cpu0 = 0, gen0 = 0, t_from = 0, t_stop = 0;
    double others = 0;
    while (now_ns() < stop) {
        if (stop_requested) break;
        uint64_t t = now_ns(), next = stop;
        if (!tr_measuring && t >= from) {
            events0 = O.admin_port ? tr_result_events() : -1;
            watch_start(O.pid);
            cpu0 = O.pid ? cpu_ns(O.pid) : 0, gen0 = self_cpu_ns(), t_from = now_ns();
            if (O.pid) nt0 = threads_cpu(O.pid, th0, 64);
            tr_measuring = 1;
        }
        for (int i = 0; i < O.n; i++) {
            ws *c = &conns[i];
            if (c->state != WS_READY) continue;
            if (c->next_send <= t) {
                ws_write(c, frame, ws_frame(frame, 0x1, msg, sizeof msg - 1));
                if (tr_measuring) tr_sent_window++;
                c->next_send += interval;
                if (c->next_send <= t) late++;
            }
            if (c->next_send < next) next = c->next_send;
        }
        pump(ms_until(next, 1));
    }
    t_stop = now_ns();
    uint64_t cpu1 = O.pid ? cpu_ns(O.pid) : 0, gen1 = self_cpu_ns();
    int nt1 = O.pid && tr_measuring ? threads_cpu(O.pid, th1, 64) : 0;
    if (tr_measuring) others = watch_others_pct(O.pid);
    pump_for(0.5); /* errors in flight; the control plane's last tick */
    long events1 = events0 >= 0 ? tr_result_events() : -1;
    double span = tr_measuring ? (double)(t_stop - t_from) / 1e9 : 0;
    double us = tr_sent_window ? (double)(cpu1 - cpu0) / 1e3 / (double)tr_sent_window : 0;
    label("track");
    printf(" %s: %d clients, one every %.1f ms each (%.0f/s offered), %.1f s: %.0f track messages/s sent", O.screen, ws_ready,
           O.interval_ms, (double)ws_ready * per_client, span, span > 0 ? (double)tr_sent_window / span : 0);
    if (O.pid)
        printf(", server CPU %.2f µs/message (%.0f%% of a core) = %.0f messages/s per core", us,
               span > 0 ? 100.0 * (double)(cpu1 - cpu0) / 1e9 / span : 0, us > 0 ? 1e6 / us : 0);
    if (nt1 && span > 0) {
        /* A thread near 100 % is the limit, whatever the cores. PushHub's threads by tid: the main
         * thread (tid = pid), then one per client loop, then the control plane (LoopGroup starts
         * it last); another server's are printed by tid. */
        qsort(th1, (size_t)nt1, sizeof *th1, cmp_tid);
        printf(" (threads:");
        for (int i = 0; i < nt1; i++) {
            uint64_t before = 0;
            for (int j = 0; j < nt0; j++)
                if (th0[j].tid == th1[i].tid) before = th0[j].ns;
            const char *what = th1[i].tid == O.pid ? "main" : i == nt1 - 1 ? "control plane" : "loop";
            printf("%s %s %.0f%%", i ? "," : "", what, 100.0 * (double)(th1[i].ns - before) / 1e9 / span);
        }
        printf(")");
    }
    printf(", generator CPU %.2f µs/message (%.0f%% of a core)", tr_sent_window ? (double)(gen1 - gen0) / 1e3 / (double)tr_sent_window : 0,
           span > 0 ? 100.0 * (double)(gen1 - gen0) / 1e9 / span : 0);
    if (events0 >= 0 && events1 >= 0) printf(", result events appended %ld", events1 - events0);
    printf(", others %.0f%% CPU", others);
    if (late) printf(", %ld sends behind schedule", late);
    if (tr_errors) printf(", %ld ERRORS (%ld rate_limited; first: %s)", tr_errors, tr_rate_limited, tr_first_error);
    if (ws_failed) printf(", %d clients FAILED (%s)", ws_failed, first_error);
    if (stop_requested) printf(" (ended by a signal)");
    printf("\n");
    return tr_errors || ws_failed ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------- */
/* mode: resume (issue 24: a rolling restart)                                                    */
/*
 * bench/restart/run.sh starts a hub (--dev, a data dir) and this mode, then restarts the hub on
 * the same port and data dir when told through the control directory (--control CDIR):
 *
 *   setup    S screens (2-10 KB trees, 3 versions each) are published and 2 syncs to all are
 *            sent through the admin API, so that versions and sync_seq are not trivial.
 *   phase 1  N clients connect (at most --inflight handshakes at once), say hello (anonymous
 *            device d-<i>, "heartbeat":true as the SDKs do), and once welcomed subscribe to every
 *            screen without `have`: snapshots. Each keeps version and hash per screen, and its
 *            welcome's sync_seq and epoch. Then CDIR/phase1.done.
 *            The script stops the hub (SIGTERM: close 1001 to every client; we answer and close),
 *            starts it again and writes CDIR/go.2 = "PID START_NS" (CLOCK_REALTIME just before
 *            it started the process).
 *   phase 2  resume: all N reconnect with hello {last_sync, epoch} and subscribe with `have`.
 *   phase 3  plain, same hub process: the clients close; --settle S later all N connect again
 *            without `have` or `last_sync` (snapshots). Then CDIR/phase3.done; the script restarts
 *            the hub again and writes CDIR/go.4.
 *   phase 4  plain after a restart: phase 2's conditions without `have` and `last_sync`.
 *
 * Phases 2 and 4 begin when the new hub's port takes a TCP connection (a probe every 2 ms; the
 * kernel completes it once the hub has called listen()): "current" times are counted from there,
 * and also from the hub's start. A client is current when it has an answer (unchanged, patch or
 * snapshot) to each of its subscribes. The hub's CPU (user + system, all threads) is read before
 * and after each phase; per client it is what one resume, or one plain connect + subscribes,
 * cost. Each phase prints one figures line; a last line compares them.
 */

#define RS_MAX_SCREENS 8

static int rs_s;
static char rs_screen[RS_MAX_SCREENS][32];
static int32_t *rs_version; /* [client * S + screen]: the version the client holds */
static char (*rs_hash)[65]; /* ... and its hash */
static long *rs_last_sync;  /* per client: welcome.sync_seq, or the newest sync it got */
static char rs_epoch[64];   /* the epoch phase 1's welcomes named */
static uint8_t *rs_answered; /* per client: bit k = screen k answered in this phase */
static int rs_recording, rs_resuming, rs_current;
static uint64_t rs_last_current;
static char rs_example[5][256];

static struct {
    long unchanged, patch, snapshot, pending, syncs, other, unparsed, stale, newer, epoch_mismatch, seq_behind;
    long snapshot_bytes, patch_bytes, unchanged_bytes;
    int examples;
    samples lat;
} RC;

/* The string value of "key" in a message's first bytes (the first occurrence: top-level members
 * come before any tree). Returns 0 when it is not there in full. */
static int json_str(const uint8_t *p, size_t n, const char *key, char *out, size_t cap) {
    char pat[64];
    int k = snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const uint8_t *v = memmem(p, n, pat, (size_t)k);
    if (!v) return 0;
    v += k;
    const uint8_t *end = memchr(v, '"', n - (size_t)(v - p));
    if (!end || (size_t)(end - v) >= cap) return 0;
    memcpy(out, v, (size_t)(end - v));
    out[end - v] = 0;
    return 1;
}

static int json_num(const uint8_t *p, size_t n, const char *key, long *out) {
    char pat[64];
    int k = snprintf(pat, sizeof pat, "\"%s\":", key);
    const uint8_t *v = memmem(p, n, pat, (size_t)k);
    if (!v) return 0;
    v += k;
    if (v >= p + n || !(isdigit(*v) || *v == '-')) return 0;
    long x = 0;
    int neg = *v == '-';
    if (neg) v++;
    const uint8_t *d = v;
    while (v < p + n && isdigit(*v)) x = x * 10 + (*v++ - '0');
    if (v == d || v == p + n) return 0; /* no digits, or cut off by the end of the prefix */
    *out = neg ? -x : x;
    return 1;
}

static uint64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A TcpExt counter of /proc/net/netstat (this network namespace), or -1. */
static long tcpext(const char *name) {
    FILE *f = fopen("/proc/net/netstat", "r");
    if (!f) return -1;
    static char names[8192], values[8192];
    long v = -1;
    while (fgets(names, sizeof names, f) && fgets(values, sizeof values, f)) {
        if (strncmp(names, "TcpExt:", 7) != 0) continue;
        char *sn, *sv, *a = strtok_r(names, " \n", &sn), *b = strtok_r(values, " \n", &sv);
        while (a && b) {
            if (!strcmp(a, name)) { v = atol(b); break; }
            a = strtok_r(NULL, " \n", &sn), b = strtok_r(NULL, " \n", &sv);
        }
    }
    fclose(f);
    return v;
}

static size_t frame_size(uint64_t payload) { return (size_t)payload + (payload < 126 ? 2 : payload < 65536 ? 4 : 10); }

/* Screen k's tree at a version: sections of keyed rows until about `target` bytes, one node with
 * a capability filter; only the title changes between versions. */
static int rs_tree(char *buf, size_t cap, int k, int version, size_t target) {
    static const char *words[] = {"kick-off", "possession", "corner", "substitution", "offside", "penalty", "header", "tackle"};
    int n = snprintf(buf, cap,
                     "{\"type\":\"screen\",\"title\":\"Screen %d, edition %d\",\"children\":["
                     "{\"id\":\"promo\",\"type\":\"banner\",\"text\":\"New: live tables\",\"min_app_version\":\"5.0.0\","
                     "\"fallback\":{\"type\":\"text\",\"text\":\"Update the app for live tables\"}}",
                     k, version);
    for (int sec = 0; (size_t)n < target && (size_t)n + 1024 < cap; sec++) {
        n += snprintf(buf + n, cap - (size_t)n, ",{\"id\":\"sec%d\",\"type\":\"section\",\"title\":\"Section %d\",\"children\":[", sec, sec);
        for (int r = 0; r < 6; r++)
            n += snprintf(buf + n, cap - (size_t)n,
                          "%s{\"id\":\"r%d\",\"type\":\"row\",\"text\":\"%d' %s, row %d of section %d\",\"value\":%d,"
                          "\"action\":{\"type\":\"open\",\"url\":\"app://match/%d/event/%d\"}}",
                          r ? "," : "", r, 10 + r * 7 + sec, words[(r + sec) % 8], r, sec, (sec * 37 + r * 11) % 100, k, sec * 6 + r);
        n += snprintf(buf + n, cap - (size_t)n, "]}");
    }
    n += snprintf(buf + n, cap - (size_t)n, "]}");
    return n;
}

static void rs_setup(void) {
    static const size_t sizes[] = {2048, 5120, 10240, 4096, 8192, 3072, 6144, 7168};
    char *tree = xmalloc(65536), path[128];
    bearer = admin_token();
    for (int k = 0; k < rs_s; k++) {
        snprintf(rs_screen[k], sizeof rs_screen[k], "restart/s%d", k);
        snprintf(path, sizeof path, "/v1/screens/%s", rs_screen[k]);
        int len = 0;
        for (int v = 1; v <= 3; v++) {
            len = rs_tree(tree, 65536, k, v, sizes[k]);
            int st = http_blocking(O.admin_port, "PUT", path, tree, NULL);
            if (st / 100 != 2) die("PUT %s: %d", path, st);
        }
        note("published %s: 3 versions, %d-byte tree", rs_screen[k], len);
    }
    for (int i = 0; i < 2; i++) {
        int st = http_blocking(O.admin_port, "POST", "/v1/syncs", "{\"target\":{\"all\":true},\"reason\":\"bench\"}", NULL);
        if (st / 100 != 2) die("POST /v1/syncs: %d", st);
    }
    free(tree);
}

static void rs_hello_extra(ws *c, char *buf, size_t cap) {
    if (rs_resuming)
        snprintf(buf, cap, ",\"heartbeat\":true,\"epoch\":\"%s\",\"last_sync\":%ld", rs_epoch, rs_last_sync[c->id]);
    else snprintf(buf, cap, ",\"heartbeat\":true");
}

static void rs_welcome(ws *c, const uint8_t *p, size_t n) {
    char epoch[64];
    long seq = -1;
    if (!json_str(p, n, "epoch", epoch, sizeof epoch) || !json_num(p, n, "sync_seq", &seq)) {
        RC.unparsed++;
        return;
    }
    if (rs_recording) {
        if (!rs_epoch[0]) snprintf(rs_epoch, sizeof rs_epoch, "%s", epoch);
        rs_last_sync[c->id] = seq;
    } else if (seq < rs_last_sync[c->id]) RC.seq_behind++;
    if (strcmp(epoch, rs_epoch) != 0) RC.epoch_mismatch++;
}

/* Welcomed: every subscribe in one write (with `have` when resuming). */
static void rs_subscribe(ws *c) {
    uint8_t out[RS_MAX_SCREENS * (256 + 14)];
    size_t o = 0;
    for (int k = 0; k < rs_s; k++) {
        char msg[256];
        int len;
        size_t at = (size_t)c->id * (size_t)rs_s + (size_t)k;
        if (rs_resuming && rs_version[at] > 0)
            len = snprintf(msg, sizeof msg, "{\"type\":\"subscribe\",\"screen\":\"%s\",\"have\":{\"version\":%d,\"hash\":\"%s\"}}",
                           rs_screen[k], rs_version[at], rs_hash[at]);
        else len = snprintf(msg, sizeof msg, "{\"type\":\"subscribe\",\"screen\":\"%s\"}", rs_screen[k]);
        o += ws_frame(out + o, 0x1, msg, (size_t)len);
    }
    ws_write(c, out, o);
}

static void rs_answer(ws *c, int k) {
    uint8_t bit = (uint8_t)(1u << k), all = (uint8_t)((1u << rs_s) - 1);
    if (rs_answered[c->id] & bit) return;
    rs_answered[c->id] |= bit;
    if (rs_answered[c->id] == all) {
        uint64_t t = now_ns();
        rs_current++, rs_last_current = t;
        samples_add(&RC.lat, t - c->t0);
    }
}

static void rs_message(ws *c, int op, const uint8_t *p, size_t n, uint64_t len) {
    (void)op;
    if (has_type(p, n, "heartbeat")) return;
    if (has_type(p, n, "sync")) {
        long seq;
        RC.syncs++;
        if (json_num(p, n, "seq", &seq) && seq > rs_last_sync[c->id]) rs_last_sync[c->id] = seq;
        return;
    }
    int is_unchanged = has_type(p, n, "unchanged"), is_patch = has_type(p, n, "patch"), is_snapshot = has_type(p, n, "snapshot");
    int is_pending = has_type(p, n, "pending");
    if (!is_unchanged && !is_patch && !is_snapshot && !is_pending) {
        if (has_type(p, n, "error")) {
            char why[PREFIX + 32];
            snprintf(why, sizeof why, "hub error: %.*s", (int)n, (const char *)p);
            ws_fail(c, why);
        } else RC.other++;
        return;
    }
    char screen[64], hash[65];
    long version = 0;
    int k = -1;
    if (json_str(p, n, "screen", screen, sizeof screen))
        for (int i = 0; i < rs_s; i++)
            if (!strcmp(screen, rs_screen[i])) k = i;
    if (k < 0) { RC.other++; return; }
    if (is_pending) {
        RC.pending++;
        rs_answer(c, k);
        return;
    }
    if (!json_num(p, n, "version", &version) || !json_str(p, n, "hash", hash, sizeof hash)) {
        RC.unparsed++;
        ws_fail(c, "an answer whose version or hash is not in its first bytes");
        return;
    }
    size_t at = (size_t)c->id * (size_t)rs_s + (size_t)k, bytes = frame_size(len);
    int32_t had = rs_version[at];
    if (is_unchanged) {
        RC.unchanged++, RC.unchanged_bytes += (long)bytes;
        if (version != had || strcmp(hash, rs_hash[at]) != 0) RC.stale++;
    } else if (is_patch) RC.patch++, RC.patch_bytes += (long)bytes;
    else {
        RC.snapshot++, RC.snapshot_bytes += (long)bytes;
        if (rs_resuming && RC.examples < 5)
            snprintf(rs_example[RC.examples++], sizeof rs_example[0], "client %d %s: sent have v%d %.12s…, got a snapshot of v%ld %.12s…",
                     c->id, screen, had, rs_hash[at], version, hash);
    }
    if (!rs_recording && had > 0 && version != had) RC.newer++;
    rs_version[at] = (int32_t)version;
    memcpy(rs_hash[at], hash, sizeof hash);
    rs_answer(c, k);
}

static void rs_reset_phase(void) {
    ws_ready = ws_failed = ws_inflight = 0;
    first_error[0] = 0;
    free(RC.lat.v);
    memset(&RC, 0, sizeof RC);
    memset(rs_answered, 0, (size_t)O.n);
    memset(rs_example, 0, sizeof rs_example);
    rs_current = 0, rs_last_current = 0;
    bytes_in = 0;
    connect_lat.n = 0;
}

/* Starts every client (at most --inflight handshakes at once) and pumps until each is current or
 * failed, bounded by --timeout. Returns when the first connect was made. */
static uint64_t rs_run(void) {
    uint64_t t0 = now_ns(), deadline = t0 + (uint64_t)(O.timeout_s * 1e9);
    int started = 0;
    while (now_ns() < deadline) {
        while (started < O.n && ws_inflight < O.inflight) ws_start(started++, "/v1/connect", 1);
        if (rs_current + ws_failed >= O.n) break;
        pump(ms_until(deadline, 50));
    }
    for (int i = 0; i < O.n; i++) {
        ws *c = &conns[i];
        if (i >= started) c->id = i, c->state = WS_CLOSED, c->fd = -1, ws_failed++;
        else if (c->state != WS_CLOSED && rs_answered[i] != (1u << rs_s) - 1)
            ws_fail(c, c->state == WS_READY ? "no answer to every subscribe in --timeout" : "handshake timeout");
    }
    return t0;
}

typedef struct {
    const char *name;
    double current_s, since_start_s, listening_s; /* from the first connect or probe; from the hub's start */
    double hub_us, gen_us, others, startup_ms; /* startup_ms: the new hub's CPU until its port took connections */
    long overflows;
    int clients, failed;
} rs_result;

static void rs_print(rs_result *r, uint64_t cpu, uint64_t gen, long overflows, double others) {
    samples_sort(&RC.lat);
    char a[32], b[32];
    int ok = rs_current;
    r->hub_us = ok ? (double)cpu / 1e3 / ok : 0;
    r->gen_us = ok ? (double)gen / 1e3 / ok : 0;
    r->others = others, r->overflows = overflows, r->clients = ok, r->failed = ws_failed;
    label("resume");
    printf(" %s: %d of %d clients current (%d screens each), %d in flight: ", r->name, ok, O.n, rs_s, O.inflight);
    if (r->since_start_s > 0)
        printf("%.3f s after the hub's port took connections (%.3f s after its start; listening at %.3f s, hub CPU until then %.0f ms)",
               r->current_s, r->since_start_s, r->listening_s, r->startup_ms);
    else printf("%.3f s from the first connect", r->current_s);
    printf("; each p50 %s, p99 %s", dur(pct(RC.lat.v, RC.lat.n, 0.5), a), dur(pct(RC.lat.v, RC.lat.n, 0.99), b));
    printf("; answers %ld unchanged, %ld patch, %ld snapshot", RC.unchanged, RC.patch, RC.snapshot);
    if (RC.pending) printf(", %ld PENDING", RC.pending);
    printf("; snapshot frames %ld B (%.1f MB)", RC.snapshot_bytes, (double)RC.snapshot_bytes / 1e6);
    if (RC.patch) printf(", patch frames %ld B", RC.patch_bytes);
    if (RC.unchanged) printf(", unchanged frames %ld B", RC.unchanged_bytes);
    printf("; read %.1f MB (%.0f B per client)", (double)bytes_in / 1e6, ok ? (double)bytes_in / ok : 0);
    printf("; syncs replayed %ld", RC.syncs);
    printf("; hub CPU %.0f ms = %.1f µs per client; generator CPU %.1f µs per client", (double)cpu / 1e6, r->hub_us, r->gen_us);
    if (overflows >= 0) printf("; listen queue overflows %ld", overflows);
    printf("; others %.0f%% CPU", others);
    if (!rs_recording && !RC.epoch_mismatch && !RC.seq_behind && !RC.unparsed)
        printf("; every welcome: phase 1's epoch, sync_seq at or above the client's last_sync");
    if (RC.epoch_mismatch) printf("; %ld welcomes with ANOTHER EPOCH", RC.epoch_mismatch);
    if (RC.seq_behind) printf("; %ld welcomes with sync_seq BELOW the client's", RC.seq_behind);
    if (RC.stale) printf("; %ld unchanged answers NOT matching what the client held", RC.stale);
    if (RC.newer) printf("; %ld answers at another version", RC.newer);
    if (RC.other) printf("; %ld other messages", RC.other);
    if (RC.unparsed) printf("; %ld UNPARSED", RC.unparsed);
    if (ws_failed) printf("; %d FAILED (%s)", ws_failed, first_error);
    printf("\n");
    fflush(stdout);
    for (int i = 0; i < RC.examples; i++) note("%s: %s", r->name, rs_example[i]);
}

/* One phase: counters reset, CPU read around rs_run. `hub_start_mono` (0: not after a restart)
 * and `listen_mono` date the restart. */
static void rs_phase(rs_result *r, uint64_t hub_start_mono, uint64_t listen_mono) {
    rs_reset_phase();
    long ov0 = tcpext("ListenOverflows");
    watch_start(O.pid);
    uint64_t cpu0 = cpu_ns(O.pid), gen0 = self_cpu_ns();
    uint64_t t0 = rs_run();
    uint64_t cpu1 = cpu_ns(O.pid), gen1 = self_cpu_ns();
    double others = watch_others_pct(O.pid);
    long ov1 = tcpext("ListenOverflows");
    uint64_t from = listen_mono ? listen_mono : t0, end = rs_last_current ? rs_last_current : now_ns();
    r->current_s = (double)(end - from) / 1e9;
    if (hub_start_mono) {
        r->startup_ms = (double)cpu0 / 1e6;
        r->since_start_s = (double)(end - hub_start_mono) / 1e9;
        r->listening_s = (double)(listen_mono - hub_start_mono) / 1e9;
    }
    rs_print(r, cpu1 - cpu0, gen1 - gen0, ov0 >= 0 && ov1 >= 0 ? ov1 - ov0 : -1, others);
}

static void rs_signal(const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", O.control, name);
    write_file(path, "done\n");
}

/* After phase `done`: the script stops the hub; every client's close is expected. Then waits for
 * CDIR/go.<next> ("PID START_NS"), and for the new hub's port to take a connection. */
static void rs_restart(int done, int next, uint64_t *hub_start_mono, uint64_t *listen_mono) {
    char name[64], path[4200];
    snprintf(name, sizeof name, "phase%d.done", done);
    expect_going_away = 1, closed_1001 = closed_other = 0;
    int live = ws_ready;
    rs_signal(name);
    uint64_t deadline = now_ns() + (uint64_t)(O.timeout_s * 1e9), first = 0, last = 0;
    while (ws_ready > 0 && now_ns() < deadline) {
        int before = ws_ready;
        pump(ms_until(deadline, 50));
        if (ws_ready < before) {
            if (!first) first = now_ns();
            last = now_ns();
        }
    }
    expect_going_away = 0;
    if (ws_ready > 0) die("%d clients still open %.0f s after phase %d (was the hub stopped?)", ws_ready, O.timeout_s, done);
    label("resume");
    printf(" hub stop after phase %d: %d of %d clients closed with 1001, %d otherwise, within %.0f ms of the first close\n", done,
           closed_1001, live, closed_other, (double)(last - first) / 1e6);
    fflush(stdout);
    snprintf(path, sizeof path, "%s/go.%d", O.control, next);
    while (!file_exists(path)) {
        if (now_ns() > deadline) die("no %s after %.0f s", path, O.timeout_s);
        usleep(2000);
    }
    int pid = 0;
    unsigned long long start_rt = 0;
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%d %llu", &pid, &start_rt) != 2) die("%s: expected \"PID START_NS\"", path);
    fclose(f);
    O.pid = pid;
    uint64_t rt = realtime_ns(), mono = now_ns();
    *hub_start_mono = mono - (rt > start_rt ? rt - start_rt : 0);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)O.port)};
    inet_pton(AF_INET, O.host, &dst.sin_addr);
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) die("socket: %s", strerror(errno));
        int rc = connect(fd, (struct sockaddr *)&dst, sizeof dst);
        close(fd);
        if (rc == 0) break;
        if (errno != ECONNREFUSED) die("probe connect: %s", strerror(errno));
        if (now_ns() > deadline) die("the restarted hub did not listen within %.0f s", O.timeout_s);
        if (kill(pid, 0) != 0) die("the restarted hub (pid %d) exited", pid);
        usleep(2000);
    }
    *listen_mono = now_ns();
}

static int mode_resume(void) {
    if (!O.admin_port || !O.control || !O.pid) die("resume needs --admin-port, --control DIR and --pid HUBPID");
    if (O.n < 0) O.n = 19000;
    if (O.screens < 1 || O.screens > RS_MAX_SCREENS) die("--screens is 1..%d", RS_MAX_SCREENS);
    if (O.inflight < 1) O.inflight = O.n; /* the default: every client at once, as after a restart */
    rs_s = O.screens;
    alloc_conns(O.n);
    rs_version = xcalloc((size_t)O.n * (size_t)rs_s, sizeof *rs_version);
    rs_hash = xcalloc((size_t)O.n * (size_t)rs_s, sizeof *rs_hash);
    rs_last_sync = xcalloc((size_t)O.n, sizeof *rs_last_sync);
    rs_answered = xcalloc((size_t)O.n, 1);
    rs_setup();
    pump_for(0.3);
    hello_extra = rs_hello_extra, on_welcome = rs_welcome, on_ready = rs_subscribe, on_message = rs_message;
    rs_result p1 = {.name = "phase 1, plain connect to a running hub (recorded)"};
    rs_result p2 = {.name = "phase 2, RESUME after a restart (have + last_sync + epoch)"};
    rs_result p3 = {.name = "phase 3, plain connect to the same hub process (warm)"};
    rs_result p4 = {.name = "phase 4, plain connect after a restart (no have, no last_sync)"};
    uint64_t start = 0, listen = 0;
    int failed = 0;

    rs_recording = 1;
    rs_phase(&p1, 0, 0);
    rs_recording = 0;
    failed += p1.failed;
    if (p1.failed) die("phase 1 failed: nothing to resume from");

    rs_restart(1, 2, &start, &listen);
    rs_resuming = 1;
    rs_phase(&p2, start, listen);
    rs_resuming = 0;
    failed += p2.failed;
    long resume_snapshots = RC.snapshot, resume_snapshot_bytes = RC.snapshot_bytes;

    for (int i = 0; i < O.n; i++) ws_drop(&conns[i]);
    uint64_t idle0 = cpu_ns(O.pid);
    pump_for(O.settle_s);
    note("the clients closed; the hub used %.0f ms of CPU in the %.1f s after", (double)(cpu_ns(O.pid) - idle0) / 1e6, O.settle_s);
    rs_phase(&p3, 0, 0);
    failed += p3.failed;

    rs_restart(3, 4, &start, &listen);
    rs_phase(&p4, start, listen);
    failed += p4.failed;

    label("resume");
    printf(" summary, %d clients × %d screens: hub CPU per resume %.1f µs vs per plain connect after a restart %.1f µs = %.2f× "
           "(goal ≤ 1.2×: %s); vs the warm hub's plain connect %.1f µs = %.2f×; snapshots in the resume %ld, %ld B (goal 0: %s); "
           "every client current %.3f s after the port took connections (plain: %.3f s)",
           O.n, rs_s, p2.hub_us, p4.hub_us, p4.hub_us > 0 ? p2.hub_us / p4.hub_us : 0,
           p4.hub_us > 0 && p2.hub_us <= 1.2 * p4.hub_us ? "met" : "NOT MET", p3.hub_us, p3.hub_us > 0 ? p2.hub_us / p3.hub_us : 0,
           resume_snapshots, resume_snapshot_bytes, resume_snapshots == 0 ? "met" : "NOT MET", p2.current_s, p4.current_s);
    if (failed) printf("; %d client failures in all", failed);
    printf("\n");
    rs_signal("finished");
    return failed ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------- */
/* mode: drive (issue 27: clients a script holds; bench/releases/run.py)                       */
/*
 * --n clients connect (at most --inflight handshakes at once), say hello (signed in as user
 * u<K+i> with a JWT minted from --jwt-secret-file, K = --id-first; else the anonymous device
 * d-<K+i>), subscribe to every screen of --subscribe A[,B…] and wait for each answer. With
 * --hello-extra-file F (L non-empty lines, each at most 400 bytes), client i's hello also carries
 * line i % L of F, pasted as members after a comma (e.g. "app":{"platform":"ios","version":"5.2.0"}
 * or "components":{"Carousel":2,"Text":1}: issue 28's capability profiles). Then the mode
 * prints "ready READY FAILED SECONDS" and obeys one command per line on stdin, answering each with
 * one line on stdout:
 *
 *   mark           forget the messages recorded so far                               → ok
 *   send I TEXT    client I sends TEXT as one text message                           → sent I T
 *   wait N S       until N messages are recorded since the mark, at most S seconds   → count N'
 *   probe S        every client sends an unsubscribe of a screen it does not have and reads up to
 *                  the hub's not_subscribed: whatever the hub queued for it before has been read
 *                  by then (at most S seconds)                                        → probed ANSWERED T
 *   dump           the messages recorded since the mark, one line each
 *                  "m I T TYPE SCREEN VERSION FROM HASH16 BYTES", then                → end N
 *   stats                                                   → stats READY FAILED GENERATOR_CPU_NS
 *   quit, or the end of stdin: exit.
 *
 * T is CLOCK_MONOTONIC in ns (Python's time.monotonic_ns() reads the same clock): for `send`,
 * just before the write; for a message, when its last frame was read. A message's SCREEN is the
 * index of its "screen" in --subscribe (-1: none or another), VERSION and FROM its numbers (-1
 * when absent), HASH16 the first 16 hex digits of its "hash" ("-" without one). The probe's
 * answers are not recorded; every other message after the subscriptions is. Nothing else goes to
 * stdout; an unknown command exits with an error.
 */

#define DV_MAX_SCREENS 4
#define DV_PROBE "{\"type\":\"unsubscribe\",\"screen\":\"bench/drive/probe\"}"

typedef struct {
    uint64_t t, len;
    int32_t client, version, from;
    int16_t screen;
    char type[14];
    char hash[17];
} dv_message;

static char dv_screen[DV_MAX_SCREENS][201];
static int dv_screens;
static uint8_t *dv_answers; /* per client: subscribes answered (the first screen's counts before READY) */
static int dv_subscribed;   /* clients with every subscribe answered */
static dv_message *dv_log;
static size_t dv_n, dv_cap;
static int dv_probed;
static char *dv_in;
static size_t dv_in_len, dv_in_cap;
static int dv_eof;

static char **dv_extras; /* --hello-extra-file's lines */
static int dv_n_extras;

static void dv_load_extras(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s: %s", path, strerror(errno));
    char line[4096];
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        size_t l = strcspn(line, "\r\n");
        line[l] = 0;
        if (!l) continue;
        if (l > 400) die("%s: a line over 400 bytes (a hello has room for 512 of extra members)", path);
        if (dv_n_extras == cap) cap = cap ? cap * 2 : 64, dv_extras = xrealloc(dv_extras, (size_t)cap * sizeof *dv_extras);
        dv_extras[dv_n_extras++] = strdup(line);
    }
    fclose(f);
    if (!dv_n_extras) die("%s has no line", path);
}

static void dv_hello_extra(ws *c, char *buf, size_t cap) { snprintf(buf, cap, ",%s", dv_extras[c->id % dv_n_extras]); }

static int dv_screen_index(const char *name) {
    for (int k = 0; k < dv_screens; k++)
        if (!strcmp(dv_screen[k], name)) return k;
    return -1;
}

static void dv_ready(ws *c) {
    char msg[300];
    dv_answers[c->id] = 1;
    for (int k = 1; k < dv_screens; k++) {
        snprintf(msg, sizeof msg, "{\"type\":\"subscribe\",\"screen\":\"%s\"}", dv_screen[k]);
        ws_send_text(c, msg);
    }
    if (dv_screens == 1) dv_subscribed++;
}

static void dv_message_in(ws *c, int op, const uint8_t *p, size_t n, uint64_t len) {
    (void)op;
    uint64_t t = now_ns();
    if (has_type(p, n, "error") && memmem(p, n, "\"not_subscribed\"", 16)) {
        if (c->awaiting) c->awaiting = 0, dv_probed++;
        return;
    }
    char type[14] = "?", screen[201] = "", hash[65] = "";
    long version = -1, from = -1;
    json_str(p, n, "type", type, sizeof type);
    if (!json_str(p, n, "screen", screen, sizeof screen)) json_str(c->tail, c->tail_len, "screen", screen, sizeof screen);
    if (!json_num(c->tail, c->tail_len, "version", &version)) json_num(p, n, "version", &version);
    json_num(p, n, "from", &from);
    json_str(p, n, "hash", hash, sizeof hash);
    if (dv_answers[c->id] < dv_screens) { /* the answer to a subscribe made in dv_ready */
        if (++dv_answers[c->id] == dv_screens) dv_subscribed++;
        return;
    }
    if (dv_n == dv_cap) dv_cap = dv_cap ? dv_cap * 2 : 16384, dv_log = xrealloc(dv_log, dv_cap * sizeof *dv_log);
    dv_message *m = &dv_log[dv_n++];
    memset(m, 0, sizeof *m);
    m->t = t, m->len = len, m->client = c->id, m->version = (int32_t)version, m->from = (int32_t)from;
    m->screen = (int16_t)dv_screen_index(screen);
    snprintf(m->type, sizeof m->type, "%s", type);
    snprintf(m->hash, sizeof m->hash, "%s", hash[0] ? hash : "-");
}

/* stdin is readable: take what is there (commands run in mode_drive's loop, never inside pump). */
static void dv_read_commands(void) {
    for (;;) {
        if (dv_in_cap - dv_in_len < 65536) dv_in_cap = dv_in_cap * 2 + 65536, dv_in = xrealloc(dv_in, dv_in_cap);
        ssize_t r = read(0, dv_in + dv_in_len, dv_in_cap - dv_in_len - 1);
        if (r > 0) {
            dv_in_len += (size_t)r;
            continue;
        }
        if (r == 0) {
            dv_eof = 1;
            epoll_ctl(epfd, EPOLL_CTL_DEL, 0, NULL);
        } else if (errno != EAGAIN && errno != EINTR) die("stdin: %s", strerror(errno));
        return;
    }
}

static void dv_answer(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* Runs one command line; returns 0 for quit. */
static int dv_command(char *line) {
    char word[16] = "";
    int at = 0;
    sscanf(line, "%15s %n", word, &at);
    char *rest = line + at;
    if (!strcmp(word, "quit")) return 0;
    if (!strcmp(word, "mark")) {
        dv_n = 0;
        dv_answer("ok");
    } else if (!strcmp(word, "send")) {
        int i = -1, k = 0;
        if (sscanf(rest, "%d %n", &i, &k) < 1 || i < 0 || i >= n_conns || !rest[k]) die("bad command: %s", line);
        ws *c = &conns[i];
        uint64_t t = now_ns();
        if (c->state == WS_READY) ws_send_text(c, rest + k);
        dv_answer("sent %d %llu%s", i, (unsigned long long)t, c->state == WS_READY ? "" : " closed");
    } else if (!strcmp(word, "wait")) {
        long want = 0;
        double seconds = 0;
        if (sscanf(rest, "%ld %lf", &want, &seconds) != 2) die("bad command: %s", line);
        uint64_t deadline = now_ns() + (uint64_t)(seconds * 1e9);
        while ((long)dv_n < want && now_ns() < deadline) pump(ms_until(deadline, 20));
        dv_answer("count %zu", dv_n);
    } else if (!strcmp(word, "probe")) {
        double seconds = atof(rest);
        dv_probed = 0;
        int asked = 0;
        for (int i = 0; i < n_conns; i++)
            if (conns[i].state == WS_READY) conns[i].awaiting = 1, ws_send_text(&conns[i], DV_PROBE), asked++;
        uint64_t deadline = now_ns() + (uint64_t)(seconds * 1e9);
        while (dv_probed < asked && now_ns() < deadline) pump(ms_until(deadline, 20));
        dv_answer("probed %d %llu", dv_probed, (unsigned long long)now_ns());
    } else if (!strcmp(word, "dump")) {
        for (size_t k = 0; k < dv_n; k++) {
            dv_message *m = &dv_log[k];
            printf("m %d %llu %s %d %d %d %s %llu\n", m->client, (unsigned long long)m->t, m->type, m->screen, m->version,
                   m->from, m->hash, (unsigned long long)m->len);
        }
        dv_answer("end %zu", dv_n);
    } else if (!strcmp(word, "stats")) {
        dv_answer("stats %d %d %llu", ws_ready, ws_failed, (unsigned long long)self_cpu_ns());
    } else die("unknown command: %s", line);
    return 1;
}

static int mode_drive(void) {
    if (!O.subscribe) die("drive needs --subscribe A[,B...]");
    if (O.n < 0) O.n = 10000;
    char *list = strdup(O.subscribe), *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (dv_screens == DV_MAX_SCREENS) die("--subscribe names at most %d screens", DV_MAX_SCREENS);
        if (strlen(name) > 200) die("screen name over 200 characters: %s", name);
        snprintf(dv_screen[dv_screens++], sizeof dv_screen[0], "%s", name);
    }
    if (!dv_screens) die("--subscribe names no screen");
    O.subscribe = dv_screen[0];
    alloc_conns(O.n);
    dv_answers = xcalloc((size_t)O.n, 1);
    on_ready = dv_ready, on_message = dv_message_in;
    if (O.hello_extra_file) dv_load_extras(O.hello_extra_file), hello_extra = dv_hello_extra;
    uint64_t took = open_clients(0, O.n, O.inflight, "/v1/connect", 1);
    uint64_t deadline = now_ns() + (uint64_t)(O.timeout_s * 1e9);
    while (dv_subscribed < ws_ready && now_ns() < deadline) pump(ms_until(deadline, 20));
    if (dv_subscribed < ws_ready) note("%d of %d clients have an answer to every subscribe", dv_subscribed, ws_ready);
    if (ws_failed) note("%d clients failed (%s)", ws_failed, first_error);
    dv_n = 0;
    dv_answer("ready %d %d %.3f", dv_subscribed, ws_failed, (double)took / 1e9);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    ep_add(0, EPOLLIN, TAG(K_CMD, 0));
    on_command_input = dv_read_commands;
    for (;;) {
        char *nl;
        while ((nl = memchr(dv_in, '\n', dv_in_len))) {
            *nl = 0;
            size_t used = (size_t)(nl - dv_in) + 1;
            char *line = strndup(dv_in, used - 1);
            memmove(dv_in, dv_in + used, dv_in_len - used);
            dv_in_len -= used;
            int go_on = dv_command(line);
            free(line);
            if (!go_on) return ws_failed ? 1 : 0;
        }
        if (dv_eof) return ws_failed ? 1 : 0;
        pump(100);
    }
}

/* ------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    parse_args(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    rng ^= (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!O.port && strcmp(O.mode, "admin") != 0) die("--port is required");
    if (!strcmp(O.mode, "connect") || !strcmp(O.mode, "fanout") || !strcmp(O.mode, "echo") || !strcmp(O.mode, "track") ||
        !strcmp(O.mode, "drive"))
        load_identities();
    int rc;
    if (!strcmp(O.mode, "connect")) rc = mode_connect();
    else if (!strcmp(O.mode, "fanout")) rc = mode_fanout();
    else if (!strcmp(O.mode, "admin")) rc = mode_admin();
    else if (!strcmp(O.mode, "echo")) rc = mode_echo();
    else if (!strcmp(O.mode, "usersync")) rc = mode_usersync();
    else if (!strcmp(O.mode, "resume")) rc = mode_resume();
    else if (!strcmp(O.mode, "track")) rc = mode_track();
    else if (!strcmp(O.mode, "drive")) rc = mode_drive();
    else usage();
    fflush(stdout);
    _exit(rc); /* the kernel closes every socket */
}
