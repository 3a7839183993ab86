#ifndef CADENCE_SHIM_H
#define CADENCE_SHIM_H
/// What Swift cannot import from libdrm directly: fourcc macros, dumb-buffer ioctls,
/// and the drmEventContext callbacks with a user pointer. Kept tiny on purpose.
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// DRM_FORMAT_XRGB8888 and friends (macros in drm_fourcc.h).
uint32_t cadence_fourcc_xrgb8888(void);
uint32_t cadence_fourcc_argb8888(void);

#ifdef __cplusplus
}
#endif
#endif
