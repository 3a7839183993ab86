#ifndef CADENCE_CFUZZER_H
#define CADENCE_CFUZZER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry for programs that have their own main (compiler-rt, LLVM >= 12): parses
/// libFuzzer's command line and runs `callback` on every input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
