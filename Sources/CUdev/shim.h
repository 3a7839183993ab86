#ifndef CADENCE_CUDEV_SHIM_H
#define CADENCE_CUDEV_SHIM_H
#include <libudev.h>
#endif
