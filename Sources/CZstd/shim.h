#ifndef CADENCE_CZSTD_SHIM_H
#define CADENCE_CZSTD_SHIM_H
#include <zstd.h>
#endif
