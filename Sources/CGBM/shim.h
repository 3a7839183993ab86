#ifndef CADENCE_CGBM_SHIM_H
#define CADENCE_CGBM_SHIM_H
#include <gbm.h>
#endif
