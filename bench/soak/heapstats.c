/* LD_PRELOAD library for the soak: a thread that writes glibc's allocator statistics
 * (mallinfo2, every arena) to $HEAPSTATS_FILE once a second, as one line
 * "<in use bytes> <free bytes held> <mmapped bytes>", overwritten in place. In use = what the
 * process has allocated and not freed (uordblks + hblkhd): flat in use with growing RSS is the
 * allocator keeping freed memory; growing in use is state or a leak.
 *   cc -O2 -shared -fPIC -o heapstats.so heapstats.c -lpthread */
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *sample(void *path) {
    int fd = open((const char *)path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return NULL;
    char line[96];
    for (;;) {
        struct mallinfo2 m = mallinfo2();
        int n = snprintf(line, sizeof line, "%zu %zu %zu\n", m.uordblks + m.hblkhd, m.fordblks, m.hblkhd);
        if (n > 0) {
            if (pwrite(fd, line, (size_t)n, 0) < 0) { /* nothing to do */ }
            if (ftruncate(fd, n) < 0) { /* nothing to do */ }
        }
        sleep(1);
    }
    return NULL;
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("HEAPSTATS_FILE");
    if (path == NULL || *path == 0) return;
    unsetenv("LD_PRELOAD");
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    /* The thread starts before the hub blocks SIGTERM/SIGINT/SIGHUP for its signal loop; it must
     * not be the thread the kernel picks for them (the default action would end the process). */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_create(&thread, &attributes, sample, (void *)path);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
}
