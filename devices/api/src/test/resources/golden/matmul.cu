typedef int arrayd_i32;
typedef long long arrayd_i64;
typedef unsigned char arrayd_u8;
typedef unsigned short arrayd_u16;
typedef unsigned int arrayd_u32;
typedef unsigned long long arrayd_u64;
#define ARRAYD_FN static __device__ __forceinline__
ARRAYD_FN float arrayd_u32_as_f32(arrayd_u32 u) { return __uint_as_float(u); }
ARRAYD_FN arrayd_u32 arrayd_f32_as_u32(float f) { return __float_as_uint(f); }
ARRAYD_FN double arrayd_u64_as_f64(arrayd_u64 u) { return __longlong_as_double((long long)u); }
/* the first guard to catch an index records it; the rest only skip their access */
ARRAYD_FN void arrayd_oob(arrayd_i64 *g, arrayd_i64 id, arrayd_i64 i) {
    if (atomicCAS((arrayd_u64 *)g, 0ull, (arrayd_u64)(id + 1)) == 0ull) g[1] = i;
}
ARRAYD_FN float arrayd_pick_f32(float a, float b, bool less) { float r; if (less) asm("{ .reg .pred p; setp.lt.f32 p, %1, %2; selp.f32 %0, %1, %2, p; }" : "=f"(r) : "f"(a), "f"(b)); else asm("{ .reg .pred p; setp.gt.f32 p, %1, %2; selp.f32 %0, %1, %2, p; }" : "=f"(r) : "f"(a), "f"(b)); return r; }
ARRAYD_FN double arrayd_pick_f64(double a, double b, bool less) { double r; if (less) asm("{ .reg .pred p; setp.lt.f64 p, %1, %2; selp.f64 %0, %1, %2, p; }" : "=d"(r) : "d"(a), "d"(b)); else asm("{ .reg .pred p; setp.gt.f64 p, %1, %2; selp.f64 %0, %1, %2, p; }" : "=d"(r) : "d"(a), "d"(b)); return r; }
ARRAYD_FN float arrayd_fminf(float a, float b) { return a != a ? b : b != b ? a : arrayd_pick_f32(a, b, true); }
ARRAYD_FN float arrayd_fmaxf(float a, float b) { return a != a ? b : b != b ? a : arrayd_pick_f32(a, b, false); }
ARRAYD_FN double arrayd_fmin(double a, double b) { return a != a ? b : b != b ? a : arrayd_pick_f64(a, b, true); }
ARRAYD_FN double arrayd_fmax(double a, double b) { return a != a ? b : b != b ? a : arrayd_pick_f64(a, b, false); }
ARRAYD_FN arrayd_i32 arrayd_div_i32(arrayd_i32 a, arrayd_i32 b) { return b == 0 ? 0 : b == -1 ? (arrayd_i32)(0u - (arrayd_u32)a) : a / b; }
ARRAYD_FN arrayd_i32 arrayd_rem_i32(arrayd_i32 a, arrayd_i32 b) { return b == 0 || b == -1 ? 0 : a % b; }
ARRAYD_FN arrayd_i64 arrayd_div_i64(arrayd_i64 a, arrayd_i64 b) { return b == 0 ? 0 : b == -1 ? (arrayd_i64)((arrayd_u64)0 - (arrayd_u64)a) : a / b; }
ARRAYD_FN arrayd_i64 arrayd_rem_i64(arrayd_i64 a, arrayd_i64 b) { return b == 0 || b == -1 ? 0 : a % b; }
ARRAYD_FN arrayd_u8 arrayd_div_u8(arrayd_u8 a, arrayd_u8 b) { return b == 0 ? 0 : (arrayd_u8)(a / b); }
ARRAYD_FN arrayd_u8 arrayd_rem_u8(arrayd_u8 a, arrayd_u8 b) { return b == 0 ? 0 : (arrayd_u8)(a % b); }
ARRAYD_FN arrayd_i32 arrayd_f2i32(double x) { return x != x ? 0 : x >= 2147483647.0 ? 2147483647 : x <= -2147483648.0 ? (-2147483647 - 1) : (arrayd_i32)x; }
ARRAYD_FN arrayd_i64 arrayd_f2i64(double x) { return x != x ? 0 : x >= 9223372036854775807.0 ? (arrayd_i64)((~(arrayd_u64)0) >> 1) : x <= -9223372036854775808.0 ? -(arrayd_i64)((~(arrayd_u64)0) >> 1) - 1 : (arrayd_i64)x; }
ARRAYD_FN arrayd_u8 arrayd_f2u8(double x) { return (arrayd_u8)(arrayd_f2i32(x) & 0xff); }
ARRAYD_FN float arrayd_h2f(arrayd_u16 h) {
    arrayd_u32 sign = ((arrayd_u32)h & 0x8000u) << 16, e = ((arrayd_u32)h >> 10) & 0x1fu, m = (arrayd_u32)h & 0x3ffu;
    if (e == 0x1fu) return arrayd_u32_as_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        if (m == 0) return arrayd_u32_as_f32(sign);
        arrayd_i32 ee = 1;
        while ((m & 0x400u) == 0) { m <<= 1; ee--; }
        return arrayd_u32_as_f32(sign | ((arrayd_u32)(ee + 112) << 23) | ((m & 0x3ffu) << 13));
    }
    return arrayd_u32_as_f32(sign | ((e + 112u) << 23) | (m << 13));
}
ARRAYD_FN arrayd_u16 arrayd_f2h(float f) {
    arrayd_u32 x = arrayd_f32_as_u32(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (arrayd_u16)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) return (arrayd_u16)(sign | 0x7c00u);
    if (ax >= 0x38800000u) {
        arrayd_u32 r = ax - 0x38000000u, h = r >> 13, rem = r & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
        return (arrayd_u16)(sign | h);
    }
    arrayd_u32 e = ax >> 23;
    if (e < 102u) return (arrayd_u16)sign;
    arrayd_u32 m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e, h = m >> shift;
    arrayd_u32 rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (h & 1u))) h++;
    return (arrayd_u16)(sign | h);
}
ARRAYD_FN float arrayd_bf2f(arrayd_u16 h) { return arrayd_u32_as_f32((arrayd_u32)h << 16); }
ARRAYD_FN arrayd_u16 arrayd_f2bf(float f) {
    arrayd_u32 x = arrayd_f32_as_u32(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (arrayd_u16)((x >> 16) | 0x40u);
    return (arrayd_u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
ARRAYD_FN float arrayd_ld_f32(const float *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN double arrayd_ld_f64(const double *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_i32 arrayd_ld_i32(const arrayd_i32 *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_i64 arrayd_ld_i64(const arrayd_i64 *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_u8 arrayd_ld_u8(const arrayd_u8 *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_u16 arrayd_ld_u16(const arrayd_u16 *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}

extern "C" __global__ void matmul(const float *p_a, const float *p_b, float *p_c, const arrayd_i32 p_m, const arrayd_i32 p_n, const arrayd_i32 p_k, const arrayd_i64 *arrayd_ext, arrayd_i64 *arrayd_guard) {
    const arrayd_i64 v_row = ((arrayd_i64)blockIdx.y * blockDim.y + threadIdx.y);
    const arrayd_i64 v_col = ((arrayd_i64)blockIdx.x * blockDim.x + threadIdx.x);
    if ((((arrayd_i32)(v_row < ((arrayd_i64)p_m))) && ((arrayd_i32)(v_col < ((arrayd_i64)p_n))))) {
        float v_acc = (0x0.0p0f);
        for (arrayd_i64 v_kk = ((arrayd_i64)0); v_kk < ((arrayd_i64)p_k); v_kk += 1) {
            v_acc = (v_acc + (p_a[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_k))) + (arrayd_u64)v_kk))] * p_b[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_kk * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)v_col))]));
        }
        p_c[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)v_col))] = v_acc;
    }
}
