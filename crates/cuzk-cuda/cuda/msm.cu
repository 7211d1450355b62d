// G1 and G2 MSMs in one translation unit: sppark's sort kernel is not a template, so two
// units including its Pippenger would define it twice under relocatable device code.
//
// sppark's header instantiates its kernels for the global typedefs below (G1); the G2 kernels
// are instantiated explicitly after it. The host code that launches them is compiled in the
// host pass only, so nothing would instantiate them for the device otherwise ("invalid device
// function" at launch).
#include "common.cuh"
#include <algorithm>
#include <chrono>
#include <ff/bls12-381-fp2.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef fr_t scalar_t;

typedef jacobian_t<fp2_t> g2_point_t;
typedef xyzz_t<fp2_t> g2_bucket_t;
typedef g2_bucket_t::affine_t g2_affine_t;

#include <msm/pippenger.cuh>

template __global__
void accumulate<g2_bucket_t, g2_affine_t::mem_t>(g2_bucket_t::mem_t buckets_[],
                                                 uint32_t nwins, uint32_t wbits,
                                                 /*const*/ g2_affine_t::mem_t points_[],
                                                 const vec2d_t<uint32_t> digits,
                                                 const vec2d_t<uint32_t> histogram,
                                                 uint32_t sid);
template __global__
void batch_addition<g2_bucket_t>(g2_bucket_t::mem_t buckets[],
                                 const g2_affine_t::mem_t points[], size_t npoints,
                                 const uint32_t digits[], const uint32_t& ndigits);
template __global__
void integrate<g2_bucket_t>(g2_bucket_t::mem_t buckets_[], uint32_t nwins, uint32_t wbits,
                            uint32_t nbits);

// sppark's batch addition over a bitmap (the split MSM's sum of ones), for both groups.
template __global__
void batch_addition<bucket_t, affine_t::mem_t>(bucket_t::mem_t ret[],
                                              const affine_t::mem_t points[],
                                              uint32_t npoints, const uint32_t bitmap[],
                                              bool accumulate, uint32_t sid);
template __global__
void batch_addition<g2_bucket_t, g2_affine_t::mem_t>(g2_bucket_t::mem_t ret[],
                                                    const g2_affine_t::mem_t points[],
                                                    uint32_t npoints, const uint32_t bitmap[],
                                                    bool accumulate, uint32_t sid);

// out[k] = bases[idx[k] - lo] for k < m, points of BYTES bytes moved as 16-byte words (one
// thread a word); an index under lo or at or past lo + n sets *bad and gathers point 0.
template<size_t BYTES>
__global__ void cuzk_gather(uint4* out, const uint4* bases, const uint32_t* idx, size_t m,
                            uint32_t lo, uint32_t n, uint32_t* bad)
{
    constexpr size_t W = BYTES / 16;
    size_t t = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    if (t >= m * W)
        return;
    size_t k = t / W, w = t % W;
    uint32_t i = idx[k] - lo;  // wraps past n when under lo
    if (i >= n) {
        *bad = 1;
        i = 0;
    }
    out[t] = bases[(size_t)i * W + w];
}
template __global__ void cuzk_gather<96>(uint4*, const uint4*, const uint32_t*, size_t, uint32_t,
                                         uint32_t, uint32_t*);
template __global__ void cuzk_gather<192>(uint4*, const uint4*, const uint32_t*, size_t,
                                          uint32_t, uint32_t, uint32_t*);

#ifndef __CUDA_ARCH__
template<class affine_h>
static void cuzk_gather_points(stream_t& s, affine_h* out, const affine_h* bases,
                               const uint32_t* idx, size_t m, uint32_t lo, uint32_t n,
                               uint32_t* bad)
{
    static_assert(sizeof(affine_h) == 96 || sizeof(affine_h) == 192, "affine layout");
    size_t threads = m * (sizeof(affine_h) / 16);
    const unsigned block = 256;
    cuzk_gather<sizeof(affine_h)><<<(unsigned)((threads + block - 1) / block), block, 0, s>>>(
        reinterpret_cast<uint4*>(out), reinterpret_cast<const uint4*>(bases), idx, m, lo, n, bad);
    CUDA_OK(cudaGetLastError());
}
#endif

#ifndef __CUDA_ARCH__
static_assert(sizeof(affine_t) == 96, "G1 affine layout differs from blst_p1_affine");
static_assert(sizeof(point_t) == 144, "G1 Jacobian layout differs from blst_p1");
static_assert(sizeof(scalar_t) == 32, "Fr layout differs from blst_fr");
static_assert(sizeof(g2_affine_t) == 192, "G2 affine layout differs from blst_p2_affine");
static_assert(sizeof(g2_point_t) == 288, "G2 Jacobian layout differs from blst_p2");
#endif

#define CUZK_GROUP g1
#define CUZK_POINT ::point_t
#define CUZK_BUCKET ::bucket_t
#define CUZK_AFFINE ::affine_t
#include "msm_impl.cuh"
#undef CUZK_GROUP
#undef CUZK_POINT
#undef CUZK_BUCKET
#undef CUZK_AFFINE

#define CUZK_GROUP g2
#define CUZK_POINT g2_point_t
#define CUZK_BUCKET g2_bucket_t
#define CUZK_AFFINE g2_affine_t
#include "msm_impl.cuh"

#ifndef __CUDA_ARCH__

extern "C" cuzk_status_t cuzk_cuda_resident_msm_device_scalars(cuzk_resident_t* resident,
                                                               const void* scalars, size_t n,
                                                               void* out, double* msm_ms)
{
    return cuzk::guarded([&] {
        cuzk::require(resident != nullptr && out != nullptr && msm_ms != nullptr,
                      "null argument");
        cuzk::require(n > 0 && scalars != nullptr, "no scalars");
        cuzk::require(n <= resident->n, "more scalars than resident bases");
        const gpu_t& gpu = cuzk::select(resident->device);
        stream_t& s = gpu;
        dev_ptr_t<fr_t> d{n, s};
        s.HtoD(&d[0], static_cast<const fr_t*>(scalars), n);
        // The MSM runs on sppark's own streams: the upload must be complete first, and is
        // not part of the time.
        s.sync();
        auto t0 = std::chrono::steady_clock::now();
        resident->msm_device(&d[0], n, out);
        *msm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count();
    });
}

void cuzk::g1_msm_host_bases(uint32_t device, const void* bases, const void* d_scalars, size_t n,
                             void* out)
{
    point_t* res = static_cast<point_t*>(out);
    if (n == 0) {
        res->inf();
        return;
    }
    // On the heap, destroyed only while the device works (see destroy_if_device_ok).
    std::unique_ptr<g1::cuzk_msm_t, cuzk::destroy_if_device_ok> msm{
        new g1::cuzk_msm_t{nullptr, n, sizeof(affine_t), (int)device}};
    dev_ptr_t<fr_t> s{const_cast<fr_t*>(static_cast<const fr_t*>(d_scalars)), n};
    cuzk::check(msm->invoke(*res, slice_t<affine_t>{static_cast<const affine_t*>(bases), n}, n, s,
                            true, sizeof(affine_t)),
                "MSM over host bases and device scalars");
}
#endif
