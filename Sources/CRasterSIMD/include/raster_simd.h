#ifndef CADENCE_RASTER_SIMD_H
#define CADENCE_RASTER_SIMD_H
/* ISA-specific span loops for the Raster module, chosen once at start-up.
 *
 * The package is built for baseline x86-64 (and for aarch64); the functions here that use
 * AVX2 carry clang's target("avx2") attribute and are only called when CPUID (and the OS,
 * through XGETBV) report AVX2. Swift is the source of truth: every kernel computes exactly
 * what the portable Swift kernels in Sources/Raster/Kernels.swift compute (RasterTests
 * compare them pixel for pixel), and a NULL entry means "use the Swift kernel".
 *
 * Selection happens in a constructor before main: the best ISA the CPU has, unless the
 * environment variable CADENCE_ISA=baseline|avx2|avx512 asks for another. A request the
 * CPU cannot honour (or an unknown name) falls back to the automatic choice and is recorded
 * in cadence_raster_request_status(); the library itself prints nothing. */
#include <stddef.h>
#include <stdint.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if !__has_feature(nullability)
#define _Nullable
#define _Nonnull
#endif

/* Kernel paths, in the order CADENCE_ISA names them. */
enum {
    CADENCE_ISA_BASELINE = 0, /* portable Swift SIMD (SSE2 on x86-64, NEON on aarch64) */
    CADENCE_ISA_AVX2 = 1,     /* 256-bit AVX2 span loops */
    CADENCE_ISA_AVX512 = 2,   /* AVX-512BW/VL (no kernels are built for it yet: never available) */
    CADENCE_ISA_COUNT = 3
};

/* What happened to a CADENCE_ISA request. */
enum {
    CADENCE_ISA_REQUEST_NONE = 0,        /* unset or empty: automatic choice */
    CADENCE_ISA_REQUEST_HONOURED = 1,    /* the requested path runs */
    CADENCE_ISA_REQUEST_UNSUPPORTED = 2, /* known name, this CPU (or build) lacks it: fell back */
    CADENCE_ISA_REQUEST_UNKNOWN = 3      /* not baseline, avx2 or avx512: fell back */
};

/* Source-over blend of `rows` rows of `count` pixels (row r at base + r * stride bytes)
 * towards a constant colour: per 16-bit channel pair x = d * inv + c with c = `lo` (blue,
 * red) or `hi` (green, alpha) packed in 32 bits, result (x + (x >> 8)) >> 8. */
typedef void (*cadence_blend_rows_fn)(void *_Nonnull base, ptrdiff_t stride, size_t count, size_t rows,
                                      uint32_t inv, uint32_t lo, uint32_t hi);
/* Writes `pixel` to `rows` rows of `count` pixels. */
typedef void (*cadence_fill_rows_fn)(void *_Nonnull base, ptrdiff_t stride, size_t count, size_t rows, uint32_t pixel);
/* Coverage blend: dst[i] = blendPixel(dst[i], pixel, mask[i]) for `count` pixels. */
typedef void (*cadence_blend_mask_fn)(uint32_t *_Nonnull dst, const uint8_t *_Nonnull mask, size_t count, uint32_t pixel);
/* Gradient span: dst[i] = lut[clamp((u + i * step) >> 16, 0, 255)] | alpha_bits. */
typedef void (*cadence_gradient_span_fn)(uint32_t *_Nonnull dst, size_t count, const uint32_t *_Nonnull lut,
                                         int64_t u, int64_t step, uint32_t alpha_bits);
/* Copies `rows` rows of `bytes` bytes (stream_copy_rows: with non-temporal stores, then SFENCE;
 * copy_rows: through the cache). */
typedef void (*cadence_copy_rows_fn)(void *_Nonnull dst, ptrdiff_t dst_stride, const void *_Nonnull src,
                                     ptrdiff_t src_stride, size_t bytes, size_t rows);

/* One path's kernels. A NULL entry: the portable Swift kernel (or memcpy) is used. */
typedef struct cadence_raster_kernels {
    int32_t isa;
    /* Bytes from which a fill or copy uses streaming stores (see stream_fill_rows /
     * stream_copy_rows): beyond the last-level cache, the stores would only evict. */
    int64_t stream_threshold;
    cadence_fill_rows_fn _Nullable fill_rows;
    cadence_blend_rows_fn _Nullable blend_rows;
    cadence_blend_mask_fn _Nullable blend_mask;
    cadence_gradient_span_fn _Nullable gradient_span;
    cadence_fill_rows_fn _Nullable stream_fill_rows;
    cadence_copy_rows_fn _Nullable stream_copy_rows;
    /* Cached row copy (NULL: memcpy per row). */
    cadence_copy_rows_fn _Nullable copy_rows;
} cadence_raster_kernels;

/* The table chosen at start-up (never NULL; set once before main, read-only after). */
extern const cadence_raster_kernels *_Nonnull cadence_raster_active_table;

/// Prefetches the cache line at `p` for writing, kept in every cache level (clang's
/// `__builtin_prefetch`, LLVM's prefetch intrinsic). Raster's row prefetch calls it: binding the
/// intrinsic from Swift by name broke `swift build --sanitize=thread` (TSan turns the call into
/// an `invoke`, which LLVM rejects for that intrinsic).
static inline __attribute__((always_inline)) void cadence_prefetch_write(const void *_Nonnull p) {
    __builtin_prefetch(p, 1, 3);
}

/* The active table: one load, no CPUID. */
static inline const cadence_raster_kernels *_Nonnull cadence_raster_active(void) {
    return cadence_raster_active_table;
}

/* The table of path `isa` if this CPU and build can run it, else NULL (for tests and
 * benchmarks that compare paths in one process). */
const cadence_raster_kernels *_Nullable cadence_raster_table(int32_t isa);

/* One of CADENCE_ISA_REQUEST_*: what became of the CADENCE_ISA environment variable. */
int32_t cadence_raster_request_status(void);

/* The path CADENCE_ISA named (CADENCE_ISA_*), or -1 when unset, empty or unknown. */
int32_t cadence_raster_requested_isa(void);

#endif
