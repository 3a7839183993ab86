#include "cadence_shim.h"
#include <drm_fourcc.h>

uint32_t cadence_fourcc_xrgb8888(void) { return DRM_FORMAT_XRGB8888; }
uint32_t cadence_fourcc_argb8888(void) { return DRM_FORMAT_ARGB8888; }
