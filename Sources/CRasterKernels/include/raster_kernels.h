#ifndef CADENCE_RASTER_KERNELS_H
#define CADENCE_RASTER_KERNELS_H
/* Wide-vector pixel kernels for the Raster module, selected at run time: the package is
 * built for baseline x86-64 and these run only when the CPU reports the feature.
 * Every kernel computes exactly what the portable Swift path computes. */
#include <stddef.h>
#include <stdint.h>

/* Best kernel level this CPU supports: 0 none, 2 AVX2, 3 AVX-512BW. */
int cadence_raster_simd_level(void);

/* Source-over blend of `rows` rows of `n` pixels (row r at base + r * stride bytes)
 * towards a constant colour. Per 16-bit channel pair x = d * inv + c, where the constant
 * c (`lo` for blue/red, `hi` for green/alpha, two lanes packed in 32 bits) already holds
 * s * a + 128; the result is round((x - 128) / 255). Handles every pixel, tails included.
 * `level` is a value returned by cadence_raster_simd_level() greater than 0. */
void cadence_blend_rect(int level, void *base, ptrdiff_t stride, size_t n, size_t rows,
                        uint32_t inv, uint32_t lo, uint32_t hi);

/* Writes `pixel` to `rows` rows of `n` pixels (row r at base + r * stride bytes). */
void cadence_fill_rect(int level, void *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t pixel);

#endif
