/* The x86-64 kernels behind the tables in dispatch.c (private to this target). */
#ifndef CADENCE_KERNELS_X86_H
#define CADENCE_KERNELS_X86_H
#include "raster_simd.h"

#if defined(__x86_64__)
/* Baseline x86-64 (SSE2). */
void cadence_stream_fill_rows_sse2(void *base, ptrdiff_t stride, size_t count, size_t rows, uint32_t pixel);
void cadence_stream_copy_rows_sse2(void *dst, ptrdiff_t dst_stride, const void *src, ptrdiff_t src_stride,
                                   size_t bytes, size_t rows);
/* AVX2: called only when CPUID and XGETBV report it. */
void cadence_fill_rows_avx2(void *base, ptrdiff_t stride, size_t count, size_t rows, uint32_t pixel);
void cadence_blend_rows_avx2(void *base, ptrdiff_t stride, size_t count, size_t rows,
                             uint32_t inv, uint32_t lo, uint32_t hi);
void cadence_blend_mask_avx2(uint32_t *dst, const uint8_t *mask, size_t count, uint32_t pixel);
void cadence_gradient_span_avx2(uint32_t *dst, size_t count, const uint32_t *lut, int64_t u, int64_t step,
                                uint32_t alpha_bits);
void cadence_stream_fill_rows_avx2(void *base, ptrdiff_t stride, size_t count, size_t rows, uint32_t pixel);
void cadence_stream_copy_rows_avx2(void *dst, ptrdiff_t dst_stride, const void *src, ptrdiff_t src_stride,
                                   size_t bytes, size_t rows);
void cadence_copy_rows_avx2(void *dst, ptrdiff_t dst_stride, const void *src, ptrdiff_t src_stride,
                            size_t bytes, size_t rows);
#endif

#endif
