/* Start-up choice of the kernel table: CPUID + XGETBV, then the CADENCE_ISA override. */
#include "raster_simd.h"
#include "kernels_x86.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* Portable Swift for every arithmetic kernel; on x86-64 the SSE2 (baseline) streaming
 * fill and copy. */
static cadence_raster_kernels baseline_table = {
    CADENCE_ISA_BASELINE, INT64_MAX, NULL, NULL, NULL, NULL,
#if defined(__x86_64__)
    cadence_stream_fill_rows_sse2, cadence_stream_copy_rows_sse2,
#else
    NULL, NULL,
#endif
    NULL,
};

#if defined(__x86_64__)
static cadence_raster_kernels avx2_table = {
    CADENCE_ISA_AVX2, INT64_MAX,
    cadence_fill_rows_avx2, cadence_blend_rows_avx2, cadence_blend_mask_avx2, cadence_gradient_span_avx2,
    cadence_stream_fill_rows_avx2, cadence_stream_copy_rows_avx2, cadence_copy_rows_avx2,
};
#endif

const cadence_raster_kernels *cadence_raster_active_table = &baseline_table;
static int32_t request_status = CADENCE_ISA_REQUEST_NONE;
static int32_t requested_isa = -1;
static int32_t cpu_best = CADENCE_ISA_BASELINE;

/* The best path this CPU and this build can run. AVX2 needs CPUID.7:EBX[5], and the OS
 * saving the YMM state (OSXSAVE, XCR0 bits 1 and 2). There are no AVX-512 kernels yet, so
 * an AVX-512 CPU runs the AVX2 path. */
static int32_t detect(void) {
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return CADENCE_ISA_BASELINE;
    const unsigned osxsave = 1u << 27, avx = 1u << 28;
    if ((c & (osxsave | avx)) != (osxsave | avx)) return CADENCE_ISA_BASELINE;
    unsigned xlo, xhi;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    (void)xhi;
    if ((xlo & 6u) != 6u) return CADENCE_ISA_BASELINE;
    if (__get_cpuid_max(0, NULL) < 7) return CADENCE_ISA_BASELINE;
    __cpuid_count(7, 0, a, b, c, d);
    if (b & (1u << 5)) return CADENCE_ISA_AVX2;
#endif
    return CADENCE_ISA_BASELINE;
}

/* The last-level cache in bytes: sysfs first (the cache this CPU's cores share; glibc's
 * sysconf reports 256 MiB on this AMD EPYC VM, whose cores share 32 MiB), then sysconf. */
static long last_level_cache(void) {
    for (int index = 4; index >= 2; index--) {
        char path[64], text[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = 0;
        char *end = NULL;
        long v = strtol(text, &end, 10);
        if (v <= 0 || end == text) continue;
        if (*end == 'K') v <<= 10;
        else if (*end == 'M') v <<= 20;
        return v;
    }
    long llc = -1;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return llc > 0 ? llc : 8L << 20;
}

/* Streaming stores pay off once the memory traffic through the cache exceeds the last-level
 * cache: the bytes written, plus the bytes read for a copy from a large source (counted in
 * one place, copyStreams and CopySource in KernelDispatch.swift). With a 32 MiB L3 a 4K fill
 * (31.6 MiB) is written through the cache and an 8K fill or a 4K copy (63 MiB) streamed;
 * measured on a quiet host in docs/raster-bench.md, "Streaming stores". */
static int64_t stream_threshold(void) {
    /* CADENCE_STREAM_THRESHOLD=BYTES overrides (for measuring the crossover). */
    const char *env = getenv("CADENCE_STREAM_THRESHOLD");
    if (env && *env) {
        char *end = NULL;
        long long v = strtoll(env, &end, 10);
        if (end && *end == 0 && v >= 0) return (int64_t)v;
    }
    return (int64_t)last_level_cache();
}

const cadence_raster_kernels *cadence_raster_table(int32_t isa) {
    if (isa < 0 || isa > cpu_best) return NULL;
    switch (isa) {
    case CADENCE_ISA_BASELINE: return &baseline_table;
#if defined(__x86_64__)
    case CADENCE_ISA_AVX2: return &avx2_table;
#endif
    default: return NULL;
    }
}

int32_t cadence_raster_request_status(void) { return request_status; }
int32_t cadence_raster_requested_isa(void) { return requested_isa; }

__attribute__((constructor))
static void cadence_raster_select(void) {
    cpu_best = detect();
    int64_t threshold = stream_threshold();
    baseline_table.stream_threshold = threshold;
#if defined(__x86_64__)
    avx2_table.stream_threshold = threshold;
#endif
    int32_t want = cpu_best;
    const char *env = getenv("CADENCE_ISA");
    if (env && *env) {
        static const char *const names[CADENCE_ISA_COUNT] = {"baseline", "avx2", "avx512"};
        for (int32_t i = 0; i < CADENCE_ISA_COUNT; i++) {
            if (strcmp(env, names[i]) == 0) requested_isa = i;
        }
        if (requested_isa < 0) {
            request_status = CADENCE_ISA_REQUEST_UNKNOWN;
        } else if (cadence_raster_table(requested_isa) == NULL) {
            request_status = CADENCE_ISA_REQUEST_UNSUPPORTED;
        } else {
            request_status = CADENCE_ISA_REQUEST_HONOURED;
            want = requested_isa;
        }
    }
    const cadence_raster_kernels *t = cadence_raster_table(want);
    cadence_raster_active_table = t ? t : &baseline_table;
}
