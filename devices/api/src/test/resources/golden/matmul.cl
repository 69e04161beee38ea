#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef int arrayd_i32;
typedef long arrayd_i64;
typedef uchar arrayd_u8;
typedef ushort arrayd_u16;
typedef uint arrayd_u32;
typedef ulong arrayd_u64;
#define ARRAYD_FN static inline
ARRAYD_FN float arrayd_u32_as_f32(arrayd_u32 u) { return as_float(u); }
ARRAYD_FN arrayd_u32 arrayd_f32_as_u32(float f) { return as_uint(f); }
ARRAYD_FN double arrayd_u64_as_f64(arrayd_u64 u) { return as_double(u); }
/* overflow-checked 64-bit arithmetic for the per-group check of hoisted guards */
ARRAYD_FN arrayd_i64 arrayd_cadd(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r = (arrayd_i64)((arrayd_u64)a + (arrayd_u64)b); if (((a ^ r) & (b ^ r)) < 0) *ov = 1; return r; }
ARRAYD_FN arrayd_i64 arrayd_csub(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r = (arrayd_i64)((arrayd_u64)a - (arrayd_u64)b); if (((a ^ b) & (a ^ r)) < 0) *ov = 1; return r; }
ARRAYD_FN arrayd_i64 arrayd_cmul(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r = (arrayd_i64)((arrayd_u64)a * (arrayd_u64)b); if (mul_hi(a, b) != (r >> 63)) *ov = 1; return r; }
/* the first guard to catch an index records it; the rest only skip their access */
ARRAYD_FN void arrayd_oob(__global arrayd_i64 *g, arrayd_i64 id, arrayd_i64 i) {
    if (atom_cmpxchg((volatile __global arrayd_i64 *)g, 0, id + 1) == 0) g[1] = i;
}
ARRAYD_FN float arrayd_fminf(float a, float b) { return isnan(a) ? b : isless(a, b) || isnan(b) ? a : b; }
ARRAYD_FN float arrayd_fmaxf(float a, float b) { return isnan(a) ? b : isgreater(a, b) || isnan(b) ? a : b; }
ARRAYD_FN double arrayd_fmin(double a, double b) { return isnan(a) ? b : isless(a, b) || isnan(b) ? a : b; }
ARRAYD_FN double arrayd_fmax(double a, double b) { return isnan(a) ? b : isgreater(a, b) || isnan(b) ? a : b; }
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
ARRAYD_FN float arrayd_ld_global_f32(const __global float *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN double arrayd_ld_global_f64(const __global double *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_i32 arrayd_ld_global_i32(const __global arrayd_i32 *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_i64 arrayd_ld_global_i64(const __global arrayd_i64 *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_u8 arrayd_ld_global_u8(const __global arrayd_u8 *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_u16 arrayd_ld_global_u16(const __global arrayd_u16 *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN float arrayd_ld_local_f32(const __local float *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN double arrayd_ld_local_f64(const __local double *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_i32 arrayd_ld_local_i32(const __local arrayd_i32 *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_i64 arrayd_ld_local_i64(const __local arrayd_i64 *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_u8 arrayd_ld_local_u8(const __local arrayd_u8 *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_u16 arrayd_ld_local_u16(const __local arrayd_u16 *a, arrayd_i64 i, arrayd_i64 n, __global arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}

ARRAYD_FN int arrayd_ok_matmul(const arrayd_i64 *arrayd_lo, const arrayd_i64 *arrayd_hi, const __global float *p_a, const __global float *p_b, const __global float *p_c, const arrayd_i32 p_m, const arrayd_i32 p_n, const arrayd_i32 p_k, const arrayd_i64 *arrayd_ext) {
    int arrayd_ov = 0;
    arrayd_i64 arrayd_mn, arrayd_mx, arrayd_rmn, arrayd_rmx, arrayd_a, arrayd_b, arrayd_c;
    arrayd_mn = 0;
    arrayd_mx = arrayd_mn;
    arrayd_a = 0;
    arrayd_a = arrayd_cadd(arrayd_a, 1, &arrayd_ov);
    arrayd_b = arrayd_cmul(arrayd_a, arrayd_lo[1], &arrayd_ov);
    arrayd_c = arrayd_cmul(arrayd_a, arrayd_hi[1], &arrayd_ov);
    arrayd_mn = arrayd_cadd(arrayd_mn, arrayd_b < arrayd_c ? arrayd_b : arrayd_c, &arrayd_ov);
    arrayd_mx = arrayd_cadd(arrayd_mx, arrayd_b < arrayd_c ? arrayd_c : arrayd_b, &arrayd_ov);
    arrayd_rmn = 0;
    arrayd_c = arrayd_cmul(1, (arrayd_i64)(((arrayd_i64)p_m)), &arrayd_ov);
    arrayd_rmn = arrayd_cadd(arrayd_rmn, arrayd_c, &arrayd_ov);
    arrayd_rmx = arrayd_rmn;
    if (arrayd_ov || !(arrayd_mx < arrayd_rmn)) return 0;
    arrayd_mn = 0;
    arrayd_mx = arrayd_mn;
    arrayd_a = 0;
    arrayd_a = arrayd_cadd(arrayd_a, 1, &arrayd_ov);
    arrayd_b = arrayd_cmul(arrayd_a, arrayd_lo[0], &arrayd_ov);
    arrayd_c = arrayd_cmul(arrayd_a, arrayd_hi[0], &arrayd_ov);
    arrayd_mn = arrayd_cadd(arrayd_mn, arrayd_b < arrayd_c ? arrayd_b : arrayd_c, &arrayd_ov);
    arrayd_mx = arrayd_cadd(arrayd_mx, arrayd_b < arrayd_c ? arrayd_c : arrayd_b, &arrayd_ov);
    arrayd_rmn = 0;
    arrayd_c = arrayd_cmul(1, (arrayd_i64)(((arrayd_i64)p_n)), &arrayd_ov);
    arrayd_rmn = arrayd_cadd(arrayd_rmn, arrayd_c, &arrayd_ov);
    arrayd_rmx = arrayd_rmn;
    if (arrayd_ov || !(arrayd_mx < arrayd_rmn)) return 0;
    return 1;
}
__kernel void matmul(const __global float *p_a, const __global float *p_b, __global float *p_c, const arrayd_i32 p_m, const arrayd_i32 p_n, const arrayd_i32 p_k, const __global arrayd_i64 *arrayd_ext, __global arrayd_i64 *arrayd_guard) {
    const arrayd_i64 arrayd_lo[3] = {(arrayd_i64)(get_group_id(0) * get_local_size(0)), (arrayd_i64)(get_group_id(1) * get_local_size(1)), (arrayd_i64)(get_group_id(2) * get_local_size(2))};
    const arrayd_i64 arrayd_hi[3] = {(arrayd_i64)min(get_group_id(0) * get_local_size(0) + get_local_size(0), get_global_size(0)) - 1, (arrayd_i64)min(get_group_id(1) * get_local_size(1) + get_local_size(1), get_global_size(1)) - 1, (arrayd_i64)min(get_group_id(2) * get_local_size(2) + get_local_size(2), get_global_size(2)) - 1};
    if (arrayd_ok_matmul(arrayd_lo, arrayd_hi, p_a, p_b, p_c, p_m, p_n, p_k, arrayd_ext)) {
        const int arrayd_ok = 1;
        const arrayd_i64 v_row = ((arrayd_i64)get_global_id(1));
        const arrayd_i64 v_col = ((arrayd_i64)get_global_id(0));
        if (arrayd_ok || (((arrayd_i32)(v_row < ((arrayd_i64)p_m))) && ((arrayd_i32)(v_col < ((arrayd_i64)p_n))))) {
            float v_acc = (0x0.0p0f);
            for (arrayd_i64 v_kk = ((arrayd_i64)0); v_kk < ((arrayd_i64)p_k); v_kk += 1) {
                v_acc = (v_acc + (p_a[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_k))) + (arrayd_u64)v_kk))] * p_b[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_kk * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)v_col))]));
            }
            p_c[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)v_col))] = v_acc;
        }
    } else {
        const int arrayd_ok = 0;
        const arrayd_i64 v_row = ((arrayd_i64)get_global_id(1));
        const arrayd_i64 v_col = ((arrayd_i64)get_global_id(0));
        if (arrayd_ok || (((arrayd_i32)(v_row < ((arrayd_i64)p_m))) && ((arrayd_i32)(v_col < ((arrayd_i64)p_n))))) {
            float v_acc = (0x0.0p0f);
            for (arrayd_i64 v_kk = ((arrayd_i64)0); v_kk < ((arrayd_i64)p_k); v_kk += 1) {
                v_acc = (v_acc + (p_a[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_k))) + (arrayd_u64)v_kk))] * p_b[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_kk * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)v_col))]));
            }
            p_c[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)v_col))] = v_acc;
        }
    }
}
