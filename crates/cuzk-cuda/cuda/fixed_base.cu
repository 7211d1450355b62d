// Fixed-base multiplication for parameter generation: out[i] = scalars[i] * G for one base G,
// in G1 or G2, through a table of window multiples built on the host (entry
// w * (2^c - 1) + d - 1 is d * 2^(c*w) * G, affine). About 255 / c mixed additions a point in
// XYZZ coordinates, then one inversion to affine; no doublings unless two summands coincide,
// which the addition handles.
//
// A G1 point is one thread's. A G2 point is two adjacent lanes' (sppark's device Fp2 keeps
// one component a lane and multiplies through warp shuffles), so every branch is taken by
// both lanes of a pair alike, and every lane runs to the end (the inversion shuffles too).
#include "common.cuh"
#include <ff/bls12-381-fp2.hpp>

namespace {

// blst_p1_affine / blst_p2_affine in device memory: x and y in Montgomery form; all zero is
// the point at infinity.
template<class F> struct affine_mem {
    typename F::mem_t X, Y;
};

// x = X / ZZ, y = Y / ZZZ with ZZ^3 = ZZZ^2; ZZ = ZZZ = 0 is the point at infinity.
template<class F> struct xyzz {
    F X, Y, ZZ, ZZZ;
};

#ifdef __CUDA_ARCH__
// p += (qx, qy), an affine point that is not infinity (EFD: madd-2008-s, and mdbl-2008-s when
// p == q; a = 0). Every product is taken between values of type F: for Fp2 a product of the
// base type would multiply the lanes' components separately.
template<class F> __device__ __forceinline__ void add_affine(xyzz<F>& p, const F& qx, const F& qy)
{
    if (p.ZZ.is_zero()) {
        p.X = qx;
        p.Y = qy;
        p.ZZ = F::one();
        p.ZZZ = F::one();
        return;
    }
    F P = qx * p.ZZ;
    P = P - p.X;
    F R = qy * p.ZZZ;
    R = R - p.Y;
    if (P.is_zero()) {
        if (!R.is_zero()) {  // p == -q
            p.ZZ.zero();
            p.ZZZ.zero();
            return;
        }
        F U = qy + qy;
        F V = U * U;
        F W = U * V;
        F S = qx * V;
        F M = qx * qx;
        M = M + M + M;
        F X3 = M * M;
        X3 = X3 - S - S;
        F T = S - X3;
        F Y3 = M * T;
        F WY = W * qy;
        p.X = X3;
        p.Y = Y3 - WY;
        p.ZZ = V;
        p.ZZZ = W;
        return;
    }
    F PP = P * P;
    F PPP = P * PP;
    F Q = p.X * PP;
    F X3 = R * R;
    X3 = X3 - PPP - Q - Q;
    F T = Q - X3;
    F Y3 = R * T;
    F YP = p.Y * PPP;
    p.X = X3;
    p.Y = Y3 - YP;
    p.ZZ = p.ZZ * PP;
    p.ZZZ = p.ZZZ * PPP;
}

// Bits [bit, bit + c) of a canonical scalar (8 little-endian 32-bit limbs), c <= 16.
__device__ __forceinline__ uint32_t window(const fr_t& s, uint32_t bit, uint32_t c)
{
    uint32_t limb = bit / 32, off = bit % 32;
    uint64_t v = s[limb];
    if (limb + 1 < 8)
        v |= (uint64_t)s[limb + 1] << 32;
    return (uint32_t)(v >> off) & ((1u << c) - 1);
}
#endif

// LANES threads a point: 1 for G1 (F = fp_t), 2 for G2 (F = fp2_t).
template<class F, unsigned LANES>
__global__ void cuzk_fixed_base(const void* table_, uint32_t c, uint32_t windows,
                                const fr_t* scalars, size_t n, void* out_)
{
#ifdef __CUDA_ARCH__
    const affine_mem<F>* table = static_cast<const affine_mem<F>*>(table_);
    affine_mem<F>* out = static_cast<affine_mem<F>*>(out_);
    size_t i = (threadIdx.x + (size_t)blockIdx.x * blockDim.x) / LANES;
    bool live = i < n;
    fr_t s = scalars[live ? i : 0];
    s.from();
    uint32_t per = (1u << c) - 1;
    xyzz<F> acc;
    acc.ZZ.zero();
    acc.ZZZ.zero();
    for (uint32_t w = 0; w < windows; w++) {
        uint32_t d = window(s, w * c, c);
        if (d != 0) {
            const affine_mem<F>& q = table[w * per + d - 1];
            F qx = q.X, qy = q.Y;
            add_affine(acc, qx, qy);
        }
    }
    bool inf = acc.ZZZ.is_zero();
    F zzz = acc.ZZZ;
    if (inf)
        zzz = F::one();  // the inversion is not asked to invert 0; the result is zeroed below
    F inv = zzz.reciprocal();  // 1/ZZZ
    F z = inv * acc.ZZ;        // 1/Z
    z = z * z;                 // 1/ZZ
    F x = acc.X * z;
    F y = acc.Y * inv;
    if (inf) {
        x.zero();
        y.zero();
    }
    if (live) {
        out[i].X = x;
        out[i].Y = y;
    }
#endif
}

// The launches are compiled in the host pass only: instantiate the kernels for the device.
template __global__ void cuzk_fixed_base<fp_t, 1>(const void*, uint32_t, uint32_t, const fr_t*,
                                                  size_t, void*);
template __global__ void cuzk_fixed_base<fp2_t, 2>(const void*, uint32_t, uint32_t,
                                                   const fr_t*, size_t, void*);

} // namespace

#ifndef __CUDA_ARCH__

namespace {

// Host-side sizes of the blst layouts the kernels read and write.
constexpr size_t G1_AFFINE = 96, G2_AFFINE = 192;
static_assert(sizeof(fr_t) == 32, "Fr layout differs from blst_fr");

template<class F, unsigned LANES>
void fixed_base(uint32_t device, size_t point_bytes, const void* table, uint32_t c,
                uint32_t windows, const void* scalars, size_t n, size_t chunk, void* out)
{
    cuzk::require(table != nullptr && out != nullptr && (n == 0 || scalars != nullptr),
                  "null argument");
    cuzk::require(c >= 1 && c <= 16 && windows >= 1 && (size_t)windows * c >= 255 &&
                      (size_t)(windows - 1) * c < 255,
                  "the window table does not match 255-bit scalars");
    cuzk::require(chunk > 0, "chunk of 0 points");
    if (n == 0)
        return;
    const gpu_t& gpu = cuzk::select(device);
    stream_t& s = gpu;
    size_t table_bytes = (size_t)windows * ((1u << c) - 1) * point_bytes;
    chunk = std::min(chunk, n);
    dev_ptr_t<uint8_t> d_table{table_bytes, s};
    dev_ptr_t<fr_t> d_scalars{chunk, s};
    dev_ptr_t<uint8_t> d_out{chunk * point_bytes, s};
    s.HtoD(&d_table[0], table, table_bytes);
    const fr_t* in = static_cast<const fr_t*>(scalars);
    uint8_t* res = static_cast<uint8_t*>(out);
    const unsigned threads = 128;
    for (size_t at = 0; at < n; at += chunk) {
        size_t m = std::min(chunk, n - at);
        s.HtoD(&d_scalars[0], in + at, m);
        unsigned blocks = (unsigned)((m * LANES + threads - 1) / threads);
        cuzk_fixed_base<F, LANES><<<blocks, threads, 0, s>>>(&d_table[0], c, windows,
                                                              &d_scalars[0], m, &d_out[0]);
        CUDA_OK(cudaGetLastError());
        s.DtoH(res + at * point_bytes, &d_out[0], m * point_bytes);
        s.sync();
    }
}

} // namespace

extern "C" cuzk_status_t cuzk_cuda_fixed_base_g1(uint32_t device, const void* table,
                                                 uint32_t c, uint32_t windows,
                                                 const void* scalars, size_t n, size_t chunk,
                                                 void* out)
{
    return cuzk::guarded([&] {
        fixed_base<fp_t, 1>(device, G1_AFFINE, table, c, windows, scalars, n, chunk, out);
    });
}

extern "C" cuzk_status_t cuzk_cuda_fixed_base_g2(uint32_t device, const void* table,
                                                 uint32_t c, uint32_t windows,
                                                 const void* scalars, size_t n, size_t chunk,
                                                 void* out)
{
    return cuzk::guarded([&] {
        fixed_base<fp2_t, 2>(device, G2_AFFINE, table, c, windows, scalars, n, chunk, out);
    });
}

#endif
