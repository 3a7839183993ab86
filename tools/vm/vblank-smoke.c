// Harness smoke test (independent of Cadence): sets the preferred mode on a connector
// with a dumb buffer, then
//   1. calls drmWaitVBlank(RELATIVE, 1) repeatedly for --seconds and reports the rate
//      seen from the kernel's vblank timestamps, or that vblank is unsupported;
//   2. page-flips for --seconds and reports the flip rate and event sequence numbers.
// Prints one `key=value` line per phase. Exit status: 0 when the result matches
// --expect (vblank: vblanks tick within 0.5% of the mode's refresh; none: drmWaitVBlank
// fails with EOPNOTSUPP), 1 otherwise, 2 on setup errors. --hold S only sets the mode and
// keeps DRM master for S seconds (to test clients facing another master). --frozen fills both
// buffers with the same picture (a client whose flips change nothing: observe --verify crc).
// Build: gcc -O2 $(pkg-config --cflags libdrm) vblank-smoke.c -ldrm -o vblank-smoke
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct flip_state { int pending; unsigned count, first_seq, last_seq, gaps; double first_t, last_t; };

static void on_flip(int fd, unsigned seq, unsigned sec, unsigned usec, unsigned crtc,
                    void *data) {
    (void)fd; (void)crtc;
    struct flip_state *st = data;
    double t = sec + usec * 1e-6;
    if (st->count == 0) { st->first_seq = seq; st->first_t = t; }
    else if (seq > st->last_seq + 1) st->gaps += seq - st->last_seq - 1;
    st->last_seq = seq; st->last_t = t;
    st->count++;
    st->pending = 0;
}

int main(int argc, char **argv) {
    const char *device = "/dev/dri/card0", *want_conn = NULL, *expect = NULL;
    double seconds = 2.0, hold = 0;
    int frozen = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--connector") && i + 1 < argc) want_conn = argv[++i];
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc) expect = argv[++i];
        else if (!strcmp(argv[i], "--hold") && i + 1 < argc) hold = atof(argv[++i]);
        else if (!strcmp(argv[i], "--frozen")) frozen = 1;
        else { fprintf(stderr, "usage: %s [--device P] [--connector NAME] [--seconds S] "
                       "[--expect vblank|none] [--hold S] [--frozen]\n", argv[0]); return 2; }
    }
    int fd = open(device, O_RDWR | O_CLOEXEC);
    if (fd < 0) { fprintf(stderr, "open %s: %s\n", device, strerror(errno)); return 2; }
    drmVersionPtr ver = drmGetVersion(fd);
    drmModeResPtr res = drmModeGetResources(fd);
    if (!ver || !res) { fprintf(stderr, "not a KMS device: %s\n", device); return 2; }

    drmModeConnectorPtr conn = NULL;
    char name[64] = "";
    for (int i = 0; i < res->count_connectors; i++) {
        drmModeConnectorPtr c = drmModeGetConnector(fd, res->connectors[i]);
        if (!c) continue;
        snprintf(name, sizeof name, "%s-%u", drmModeGetConnectorTypeName(c->connector_type),
                 c->connector_type_id);
        if ((want_conn && !strcmp(name, want_conn)) ||
            (!want_conn && c->connection == DRM_MODE_CONNECTED && c->count_modes > 0)) {
            conn = c;
            break;
        }
        drmModeFreeConnector(c);
    }
    if (!conn || conn->count_modes == 0) { fprintf(stderr, "no usable connector\n"); return 2; }
    drmModeModeInfo mode = conn->modes[0];
    for (int i = 0; i < conn->count_modes; i++)
        if (conn->modes[i].type & DRM_MODE_TYPE_PREFERRED) { mode = conn->modes[i]; break; }
    double nominal = mode.clock * 1000.0 / ((double)mode.htotal * mode.vtotal);

    // Pick a CRTC the connector's first encoder can drive.
    uint32_t crtc_id = 0;
    int crtc_index = 0;
    drmModeEncoderPtr enc = drmModeGetEncoder(fd, conn->encoders[0]);
    for (int i = 0; enc && i < res->count_crtcs; i++)
        if (enc->possible_crtcs & (1u << i)) { crtc_id = res->crtcs[i]; crtc_index = i; break; }
    if (!crtc_id) { fprintf(stderr, "no CRTC\n"); return 2; }

    uint32_t fbs[2];
    for (int b = 0; b < 2; b++) {
        struct drm_mode_create_dumb cd = { .width = mode.hdisplay, .height = mode.vdisplay,
                                           .bpp = 32 };
        if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &cd)) { perror("create dumb"); return 2; }
        uint32_t h[4] = { cd.handle }, p[4] = { cd.pitch }, o[4] = { 0 };
        if (drmModeAddFB2(fd, mode.hdisplay, mode.vdisplay, 0x34325258 /* XR24 */, h, p, o,
                          &fbs[b], 0)) { perror("AddFB2"); return 2; }
        struct drm_mode_map_dumb md = { .handle = cd.handle };
        if (!drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &md)) {
            void *px = mmap(NULL, cd.size, PROT_WRITE, MAP_SHARED, fd, md.offset);
            if (px != MAP_FAILED) { memset(px, b && !frozen ? 0x40 : 0xc0, cd.size); munmap(px, cd.size); }
        }
    }
    if (drmModeSetCrtc(fd, crtc_id, fbs[0], 0, 0, &conn->connector_id, 1, &mode)) {
        fprintf(stderr, "SetCrtc: %s\n", strerror(errno));
        return 2;
    }
    printf("driver=%s connector=%s mode=%ux%u nominalHz=%.4f\n", ver->name, name,
           mode.hdisplay, mode.vdisplay, nominal);
    fflush(stdout);
    if (hold > 0) {  // keep the mode and DRM master for `hold` seconds, then exit
        usleep((useconds_t)(hold * 1e6));
        return 0;
    }

    // Phase 1: drmWaitVBlank.
    unsigned vb_count = 0, first_seq = 0, last_seq = 0;
    double first_t = 0, last_t = 0;
    int vb_errno = 0;
    double end = now_s() + seconds;
    while (now_s() < end) {
        drmVBlank vbl = { 0 };
        vbl.request.type = DRM_VBLANK_RELATIVE |
            (crtc_index > 1 ? (crtc_index << DRM_VBLANK_HIGH_CRTC_SHIFT) & DRM_VBLANK_HIGH_CRTC_MASK
                            : (crtc_index == 1 ? DRM_VBLANK_SECONDARY : 0));
        vbl.request.sequence = 1;
        if (drmWaitVBlank(fd, &vbl)) { vb_errno = errno; break; }
        double t = vbl.reply.tval_sec + vbl.reply.tval_usec * 1e-6;
        if (vb_count == 0) { first_seq = vbl.reply.sequence; first_t = t; }
        last_seq = vbl.reply.sequence; last_t = t;
        vb_count++;
    }
    double vb_rate = 0;
    if (vb_errno) {
        printf("waitvblank=error errno=%d (%s)\n", vb_errno, strerror(vb_errno));
    } else if (vb_count > 1 && last_t > first_t) {
        vb_rate = (last_seq - first_seq) / (last_t - first_t);
        printf("waitvblank=ok waits=%u seq=%u..%u rateHz=%.4f\n", vb_count, first_seq,
               last_seq, vb_rate);
    } else {
        printf("waitvblank=ok waits=%u (too few)\n", vb_count);
    }

    // Phase 2: page flips with events.
    struct flip_state st = { 0 };
    drmEventContext ev = { .version = 3, .page_flip_handler2 = on_flip };
    int cur = 1;
    end = now_s() + seconds;
    int flip_errno = 0;
    while (now_s() < end) {
        if (drmModePageFlip(fd, crtc_id, fbs[cur], DRM_MODE_PAGE_FLIP_EVENT, &st)) {
            flip_errno = errno;
            break;
        }
        st.pending = 1;
        while (st.pending) {
            struct pollfd pfd = { .fd = fd, .events = POLLIN };
            if (poll(&pfd, 1, 1000) <= 0) { flip_errno = ETIMEDOUT; break; }
            drmHandleEvent(fd, &ev);
        }
        if (flip_errno) break;
        cur ^= 1;
    }
    if (flip_errno)
        printf("flips=error errno=%d (%s)\n", flip_errno, strerror(flip_errno));
    else
        printf("flips=%u seq=%u..%u missed=%u rateHz=%.4f\n", st.count, st.first_seq,
               st.last_seq, st.gaps,
               st.last_t > st.first_t ? (st.count - 1) / (st.last_t - st.first_t) : 0.0);

    if (!expect) return 0;
    if (!strcmp(expect, "vblank"))
        return (!vb_errno && vb_rate > 0 && fabs(vb_rate - nominal) / nominal < 0.005) ? 0 : 1;
    if (!strcmp(expect, "none")) return vb_errno == EOPNOTSUPP ? 0 : 1;
    fprintf(stderr, "--expect wants vblank or none\n");
    return 2;
}
