// G1 and G2 MSMs in one translation unit: sppark's sort kernel is not a template, so two
// units including its Pippenger would define it twice under relocatable device code.
//
// sppark's header instantiates its kernels for the global typedefs below (G1); the G2
// instantiations follow implicitly from msm_t's use with the Fp2 types.
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
