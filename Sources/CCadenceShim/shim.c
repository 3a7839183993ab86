#define _GNU_SOURCE
#include "cadence_shim.h"
#include <errno.h>
#include <poll.h>
#include <time.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <xf86drm.h>
#include <drm_fourcc.h>
#include <drm_mode.h>

uint32_t cadence_fourcc_xrgb8888(void) { return DRM_FORMAT_XRGB8888; }
uint32_t cadence_fourcc_argb8888(void) { return DRM_FORMAT_ARGB8888; }

int cadence_dumb_create(int fd, uint32_t width, uint32_t height, uint32_t bpp,
                        uint32_t *handle, uint32_t *pitch, uint64_t *size) {
    struct drm_mode_create_dumb req;
    memset(&req, 0, sizeof req);
    req.width = width;
    req.height = height;
    req.bpp = bpp;
    if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &req) != 0) return -errno;
    *handle = req.handle;
    *pitch = req.pitch;
    *size = req.size;
    return 0;
}

int cadence_dumb_map(int fd, uint32_t handle, uint64_t *offset) {
    struct drm_mode_map_dumb req;
    memset(&req, 0, sizeof req);
    req.handle = handle;
    if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &req) != 0) return -errno;
    *offset = req.offset;
    return 0;
}

int cadence_dumb_destroy(int fd, uint32_t handle) {
    struct drm_mode_destroy_dumb req;
    memset(&req, 0, sizeof req);
    req.handle = handle;
    if (drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &req) != 0) return -errno;
    return 0;
}

/* drmHandleEvent has no context pointer for the callbacks, so the destination array
 * lives in thread-local storage for the duration of one call. */
static __thread cadence_drm_event *collect_out;
static __thread int collect_cap;
static __thread int collect_count;

static void push(uint32_t kind, uint32_t crtc, uint64_t seq, uint64_t ns, uint64_t user) {
    if (collect_count >= collect_cap) return;
    cadence_drm_event *e = &collect_out[collect_count++];
    e->kind = kind;
    e->crtc_id = crtc;
    e->sequence = seq;
    e->timestamp_ns = ns;
    e->user_data = user;
}

static void on_flip(int fd, unsigned int seq, unsigned int sec, unsigned int usec,
                    unsigned int crtc, void *user) {
    (void)fd;
    push(CADENCE_EVENT_FLIP, crtc, seq, (uint64_t)sec * 1000000000ull + (uint64_t)usec * 1000ull,
         (uint64_t)(uintptr_t)user);
}

static void on_vblank(int fd, unsigned int seq, unsigned int sec, unsigned int usec, void *user) {
    (void)fd;
    push(CADENCE_EVENT_VBLANK, 0, seq, (uint64_t)sec * 1000000000ull + (uint64_t)usec * 1000ull,
         (uint64_t)(uintptr_t)user);
}

static void on_sequence(int fd, uint64_t seq, uint64_t ns, uint64_t user) {
    (void)fd;
    push(CADENCE_EVENT_SEQUENCE, 0, seq, ns, user);
}

int cadence_handle_events(int fd, cadence_drm_event *out, int capacity) {
    drmEventContext ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.version = 4;
    ctx.vblank_handler = on_vblank;
    ctx.page_flip_handler2 = on_flip;
    ctx.sequence_handler = on_sequence;
    collect_out = out;
    collect_cap = capacity;
    collect_count = 0;
    int r = drmHandleEvent(fd, &ctx);
    int err = errno;
    int n = collect_count;
    collect_out = NULL;
    collect_cap = 0;
    collect_count = 0;
    if (r != 0) return -(err ? err : EIO);
    return n;
}

/* Set in the handler, read by every thread that paces (one per card): a lock-free atomic, which
 * is async-signal-safe and, unlike volatile sig_atomic_t, defined across threads. */
static atomic_int stop_signal;
static int hup_ignored;

static void on_stop(int sig) {
    int saved = errno;
    atomic_store_explicit(&stop_signal, sig, memory_order_relaxed);
    errno = saved;
}

void cadence_install_stop_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: poll() returns EINTR so the loop sees the flag */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* SIGHUP (the terminal went away) stops the run too, unless it was ignored when we were
     * started (nohup): then it stays ignored. */
    struct sigaction old;
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler == SIG_IGN) {
        hup_ignored = 1;
    } else {
        hup_ignored = 0;
        sigaction(SIGHUP, &sa, NULL);
    }
}

int cadence_stop_signal(void) { return atomic_load_explicit(&stop_signal, memory_order_relaxed); }

void cadence_remove_stop_handlers(void) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (!hup_ignored) signal(SIGHUP, SIG_DFL);
}

int cadence_poll_ns(int fd, int64_t timeout_ns) {
    struct pollfd pfd = { .fd = fd, .events = POLLIN, .revents = 0 };
    if (timeout_ns < 0) timeout_ns = 0;
    struct timespec ts = { .tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000 };
    int r = ppoll(&pfd, 1, &ts, NULL);
    if (r < 0) return -errno;
    return r > 0 ? 1 : 0;
}

int cadence_poll2_ns(int fd, int other, int64_t timeout_ns) {
    struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN, .revents = 0 },
                             { .fd = other, .events = POLLIN, .revents = 0 } };
    if (timeout_ns < 0) timeout_ns = 0;
    struct timespec ts = { .tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000 };
    int r = ppoll(pfd, 2, &ts, NULL);
    if (r < 0) return -errno;
    return (pfd[0].revents ? 1 : 0) | (pfd[1].revents ? 2 : 0);
}
