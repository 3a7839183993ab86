#ifndef CADENCE_SHIM_H
#define CADENCE_SHIM_H
/// What Swift cannot import from libdrm directly: fourcc macros, dumb-buffer ioctls,
/// the drmEventContext callbacks (collected into an array), and an async-signal-safe
/// stop flag for SIGINT/SIGTERM/SIGHUP. Kept tiny on purpose.
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// DRM_FORMAT_XRGB8888 and friends (macros in drm_fourcc.h).
uint32_t cadence_fourcc_xrgb8888(void);
uint32_t cadence_fourcc_argb8888(void);

/// DRM_IOCTL_MODE_CREATE_DUMB. Returns 0 or -errno.
int cadence_dumb_create(int fd, uint32_t width, uint32_t height, uint32_t bpp,
                        uint32_t *handle, uint32_t *pitch, uint64_t *size);
/// DRM_IOCTL_MODE_MAP_DUMB: the fake offset to pass to mmap. Returns 0 or -errno.
int cadence_dumb_map(int fd, uint32_t handle, uint64_t *offset);
/// DRM_IOCTL_MODE_DESTROY_DUMB. Returns 0 or -errno.
int cadence_dumb_destroy(int fd, uint32_t handle);

/// Kinds of `cadence_drm_event`.
enum {
    CADENCE_EVENT_FLIP = 1,     ///< page_flip_handler2 (atomic or legacy flip completion)
    CADENCE_EVENT_VBLANK = 2,   ///< vblank_handler (drmWaitVBlank with DRM_VBLANK_EVENT)
    CADENCE_EVENT_SEQUENCE = 3  ///< sequence_handler (drmCrtcQueueSequence)
};

/// One DRM event as delivered by drmHandleEvent.
typedef struct cadence_drm_event {
    uint32_t kind;
    uint32_t crtc_id;        ///< 0 for vblank/sequence events
    uint64_t sequence;       ///< 32-bit for flip/vblank events, 64-bit for sequence events
    uint64_t timestamp_ns;   ///< tv_sec/tv_usec converted, or the sequence event's ns
    uint64_t user_data;
} cadence_drm_event;

/// Reads the pending events on `fd` with drmHandleEvent (page_flip_handler2,
/// vblank_handler, sequence_handler) into `out`. Returns the count, or -errno.
/// Must not be called concurrently from two threads.
int cadence_handle_events(int fd, cadence_drm_event *out, int capacity);

/// Waits until `fd` is readable or `timeout_ns` passes (ppoll, ns precision).
/// Returns 1 when readable, 0 on timeout, -errno on failure (EINTR included).
int cadence_poll_ns(int fd, int64_t timeout_ns);

/// Like cadence_poll_ns on two descriptors (a DRM card and a uevent monitor). Returns a bit
/// mask (1: `fd` readable, 2: `other` readable), 0 on timeout, -errno on failure.
int cadence_poll2_ns(int fd, int other, int64_t timeout_ns);

/// Installs SIGINT/SIGTERM/SIGHUP handlers that only set a flag (async-signal-safe).
void cadence_install_stop_handlers(void);
/// The signal that was received (SIGINT/SIGTERM/SIGHUP), or 0.
int cadence_stop_signal(void);
/// Restores the default disposition of SIGINT/SIGTERM.
void cadence_remove_stop_handlers(void);

#ifdef __cplusplus
}
#endif
#endif
