#ifndef CADENCE_CSEAT_SHIM_H
#define CADENCE_CSEAT_SHIM_H
#include <libseat.h>
#endif
