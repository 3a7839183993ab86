// Declarations only (include/cfuzzer.h): libFuzzer itself is linked by -sanitize=fuzzer.
#include "cfuzzer.h"
