// G1 and G2 MSMs in one translation unit: sppark's sort kernel is not a template, so two
// units including its Pippenger would define it twice under relocatable device code.
//
// sppark's header instantiates its kernels for the global typedefs below (G1); the G2 kernels
// are instantiated explicitly after it. The host code that launches them is compiled in the
// host pass only, so nothing would instantiate them for the device otherwise ("invalid device
// function" at launch).
#include "common.cuh"
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
#include <chrono>

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
#endif
