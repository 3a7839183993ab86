#include "raster_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

int cadence_raster_simd_level(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f")) return 3;
    if (__builtin_cpu_supports("avx2")) return 2;
    return 0;
}

/* Touches the cache lines of the row `ahead` rows below so scattered short rows arrive
 * before they are needed (rows far apart defeat the hardware prefetcher). */
static inline void prefetch_row(const uint8_t *row, size_t bytes) {
    for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(row + off, 1, 3);
    __builtin_prefetch(row + bytes - 1, 1, 3);
}

/* round((y - 128) / 255) for y <= 65153 is ((y - 1) * 0x8081) >> 23: the constants arrive
 * with +128 and are lowered by one, then a high multiply and a shift finish the division. */

__attribute__((target("avx2")))
static inline __m256i blend8(__m256i v, __m256i inv, __m256i lo, __m256i hi) {
    const __m256i mask = _mm256_set1_epi16(0x00FF);
    const __m256i himask = _mm256_set1_epi16((short)0xFF00);
    const __m256i magic = _mm256_set1_epi16((short)0x8081);
    __m256i a = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_and_si256(v, mask), inv), lo);
    __m256i b = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_srli_epi16(v, 8), inv), hi);
    a = _mm256_srli_epi16(_mm256_mulhi_epu16(a, magic), 7);
    b = _mm256_and_si256(_mm256_slli_epi16(_mm256_mulhi_epu16(b, magic), 1), himask);
    return _mm256_or_si256(a, b);
}

__attribute__((target("avx2")))
static void blend_rect_avx2(uint8_t *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t inv, uint32_t lo, uint32_t hi) {
    const __m256i vinv = _mm256_set1_epi16((short)inv);
    const __m256i vlo = _mm256_set1_epi32((int)(lo - 0x00010001u));
    const __m256i vhi = _mm256_set1_epi32((int)(hi - 0x00010001u));
    const size_t tail = n & 7;
    static const int32_t ramp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const __m256i tmask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)tail), _mm256_loadu_si256((const __m256i *)ramp));
    for (size_t r = 0; r < rows; r++) {
        if (rows > 1 && r + 2 < rows) prefetch_row(base + (ptrdiff_t)(r + 2) * stride, n * 4);
        uint32_t *p = (uint32_t *)(base + (ptrdiff_t)r * stride);
        size_t i = 0;
        for (; i + 16 <= n; i += 16) {
            __m256i v0 = _mm256_loadu_si256((const __m256i *)(p + i));
            __m256i v1 = _mm256_loadu_si256((const __m256i *)(p + i + 8));
            _mm256_storeu_si256((__m256i *)(p + i), blend8(v0, vinv, vlo, vhi));
            _mm256_storeu_si256((__m256i *)(p + i + 8), blend8(v1, vinv, vlo, vhi));
        }
        if (i + 8 <= n) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
            _mm256_storeu_si256((__m256i *)(p + i), blend8(v, vinv, vlo, vhi));
            i += 8;
        }
        if (tail) {
            __m256i v = _mm256_maskload_epi32((const int *)(p + i), tmask);
            _mm256_maskstore_epi32((int *)(p + i), tmask, blend8(v, vinv, vlo, vhi));
        }
    }
}

__attribute__((target("avx512bw,avx512f")))
static inline __m512i blend16(__m512i v, __m512i inv, __m512i lo, __m512i hi) {
    const __m512i mask = _mm512_set1_epi16(0x00FF);
    const __m512i himask = _mm512_set1_epi16((short)0xFF00);
    const __m512i magic = _mm512_set1_epi16((short)0x8081);
    __m512i a = _mm512_add_epi16(_mm512_mullo_epi16(_mm512_and_si512(v, mask), inv), lo);
    __m512i b = _mm512_add_epi16(_mm512_mullo_epi16(_mm512_srli_epi16(v, 8), inv), hi);
    a = _mm512_srli_epi16(_mm512_mulhi_epu16(a, magic), 7);
    b = _mm512_and_si512(_mm512_slli_epi16(_mm512_mulhi_epu16(b, magic), 1), himask);
    return _mm512_or_si512(a, b);
}

__attribute__((target("avx512bw,avx512f")))
static void blend_rect_avx512(uint8_t *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t inv, uint32_t lo, uint32_t hi) {
    const __m512i vinv = _mm512_set1_epi16((short)inv);
    const __m512i vlo = _mm512_set1_epi32((int)(lo - 0x00010001u));
    const __m512i vhi = _mm512_set1_epi32((int)(hi - 0x00010001u));
    const size_t tail = n & 15;
    const __mmask16 tmask = (__mmask16)((1u << tail) - 1u);
    for (size_t r = 0; r < rows; r++) {
        if (rows > 1 && r + 2 < rows) prefetch_row(base + (ptrdiff_t)(r + 2) * stride, n * 4);
        uint32_t *p = (uint32_t *)(base + (ptrdiff_t)r * stride);
        size_t i = 0;
        for (; i + 16 <= n; i += 16) {
            __m512i v = _mm512_loadu_si512((const void *)(p + i));
            _mm512_storeu_si512((void *)(p + i), blend16(v, vinv, vlo, vhi));
        }
        if (tail) {
            __m512i v = _mm512_maskz_loadu_epi32(tmask, (const void *)(p + i));
            _mm512_mask_storeu_epi32((void *)(p + i), tmask, blend16(v, vinv, vlo, vhi));
        }
    }
}

__attribute__((target("avx2")))
static void fill_rect_avx2(uint8_t *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t pixel) {
    const __m256i v = _mm256_set1_epi32((int)pixel);
    const size_t tail = n & 7;
    static const int32_t ramp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const __m256i tmask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)tail), _mm256_loadu_si256((const __m256i *)ramp));
    for (size_t r = 0; r < rows; r++) {
        uint32_t *p = (uint32_t *)(base + (ptrdiff_t)r * stride);
        size_t i = 0;
        for (; i + 32 <= n; i += 32) {
            _mm256_storeu_si256((__m256i *)(p + i), v);
            _mm256_storeu_si256((__m256i *)(p + i + 8), v);
            _mm256_storeu_si256((__m256i *)(p + i + 16), v);
            _mm256_storeu_si256((__m256i *)(p + i + 24), v);
        }
        for (; i + 8 <= n; i += 8) _mm256_storeu_si256((__m256i *)(p + i), v);
        if (tail) _mm256_maskstore_epi32((int *)(p + i), tmask, v);
    }
}

__attribute__((target("avx512bw,avx512f")))
static void fill_rect_avx512(uint8_t *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t pixel) {
    const __m512i v = _mm512_set1_epi32((int)pixel);
    const size_t tail = n & 15;
    const __mmask16 tmask = (__mmask16)((1u << tail) - 1u);
    for (size_t r = 0; r < rows; r++) {
        uint32_t *p = (uint32_t *)(base + (ptrdiff_t)r * stride);
        size_t i = 0;
        for (; i + 64 <= n; i += 64) {
            _mm512_storeu_si512((void *)(p + i), v);
            _mm512_storeu_si512((void *)(p + i + 16), v);
            _mm512_storeu_si512((void *)(p + i + 32), v);
            _mm512_storeu_si512((void *)(p + i + 48), v);
        }
        for (; i + 16 <= n; i += 16) _mm512_storeu_si512((void *)(p + i), v);
        if (tail) _mm512_mask_storeu_epi32((void *)(p + i), tmask, v);
    }
}

void cadence_fill_rect(int level, void *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t pixel) {
    if (level >= 3) fill_rect_avx512((uint8_t *)base, stride, n, rows, pixel);
    else fill_rect_avx2((uint8_t *)base, stride, n, rows, pixel);
}

void cadence_blend_rect(int level, void *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t inv, uint32_t lo, uint32_t hi) {
    if (level >= 3) blend_rect_avx512((uint8_t *)base, stride, n, rows, inv, lo, hi);
    else blend_rect_avx2((uint8_t *)base, stride, n, rows, inv, lo, hi);
}

#else

int cadence_raster_simd_level(void) { return 0; }

void cadence_fill_rect(int level, void *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t pixel) {
    (void)level; (void)base; (void)stride; (void)n; (void)rows; (void)pixel;
}

__attribute__((target("avx2")))
static void fill_rect_avx2(uint8_t *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t pixel) {
    const __m256i v = _mm256_set1_epi32((int)pixel);
    const size_t tail = n & 7;
    static const int32_t ramp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const __m256i tmask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)tail), _mm256_loadu_si256((const __m256i *)ramp));
    for (size_t r = 0; r < rows; r++) {
        uint32_t *p = (uint32_t *)(base + (ptrdiff_t)r * stride);
        size_t i = 0;
        for (; i + 32 <= n; i += 32) {
            _mm256_storeu_si256((__m256i *)(p + i), v);
            _mm256_storeu_si256((__m256i *)(p + i + 8), v);
            _mm256_storeu_si256((__m256i *)(p + i + 16), v);
            _mm256_storeu_si256((__m256i *)(p + i + 24), v);
        }
        for (; i + 8 <= n; i += 8) _mm256_storeu_si256((__m256i *)(p + i), v);
        if (tail) _mm256_maskstore_epi32((int *)(p + i), tmask, v);
    }
}

__attribute__((target("avx512bw,avx512f")))
static void fill_rect_avx512(uint8_t *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t pixel) {
    const __m512i v = _mm512_set1_epi32((int)pixel);
    const size_t tail = n & 15;
    const __mmask16 tmask = (__mmask16)((1u << tail) - 1u);
    for (size_t r = 0; r < rows; r++) {
        uint32_t *p = (uint32_t *)(base + (ptrdiff_t)r * stride);
        size_t i = 0;
        for (; i + 64 <= n; i += 64) {
            _mm512_storeu_si512((void *)(p + i), v);
            _mm512_storeu_si512((void *)(p + i + 16), v);
            _mm512_storeu_si512((void *)(p + i + 32), v);
            _mm512_storeu_si512((void *)(p + i + 48), v);
        }
        for (; i + 16 <= n; i += 16) _mm512_storeu_si512((void *)(p + i), v);
        if (tail) _mm512_mask_storeu_epi32((void *)(p + i), tmask, v);
    }
}

void cadence_fill_rect(int level, void *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t pixel) {
    if (level >= 3) fill_rect_avx512((uint8_t *)base, stride, n, rows, pixel);
    else fill_rect_avx2((uint8_t *)base, stride, n, rows, pixel);
}

void cadence_blend_rect(int level, void *base, ptrdiff_t stride, size_t n, size_t rows, uint32_t inv, uint32_t lo, uint32_t hi) {
    (void)level; (void)base; (void)stride; (void)n; (void)rows; (void)inv; (void)lo; (void)hi;
}

#endif
