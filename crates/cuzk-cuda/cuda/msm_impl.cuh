// MSM entry points for one group, included once per group by msm.cu with CUZK_GROUP (g1 or
// g2) naming the exported functions and CUZK_POINT/CUZK_BUCKET/CUZK_AFFINE its types.
#ifndef __CUDA_ARCH__

#define CUZK_CAT2(a, b) a##b
#define CUZK_CAT(a, b) CUZK_CAT2(a, b)

namespace CUZK_GROUP {

typedef CUZK_POINT point_t;
typedef CUZK_AFFINE affine_t;
typedef msm_t<CUZK_BUCKET, point_t, affine_t, fr_t> cuzk_msm_t;
typedef fr_t scalar_t;

struct resident_t : cuzk_resident {
    cuzk_msm_t msm_;
    resident_t(uint32_t device, const affine_t* bases, size_t n)
        : cuzk_resident(device, n), msm_(bases, n, sizeof(affine_t), (int)device) {}
    void msm(const void* scalars, size_t n, void* out) override
    {
        point_t* res = static_cast<point_t*>(out);
        if (n == 0) {
            res->inf();
            return;
        }
        // Null bases: the ones uploaded at construction.
        cuzk::check(msm_.invoke(*res, static_cast<const affine_t*>(nullptr), n,
                                static_cast<const scalar_t*>(scalars), true),
                    "resident MSM");
    }
    void msm_device(const void* d_scalars, size_t n, void* out) override
    {
        point_t* res = static_cast<point_t*>(out);
        if (n == 0) {
            res->inf();
            return;
        }
        // A non-owning device pointer: sppark reads the scalars in place instead of copying
        // them from the host.
        dev_ptr_t<scalar_t> s{const_cast<scalar_t*>(static_cast<const scalar_t*>(d_scalars)),
                              n};
        cuzk::check(msm_.invoke(*res, static_cast<const affine_t*>(nullptr), n, s, true),
                    "resident MSM over device scalars");
    }
};

} // namespace CUZK_GROUP

extern "C" cuzk_status_t CUZK_CAT(cuzk_cuda_msm_, CUZK_GROUP)(
    uint32_t device, const void* bases, const void* scalars, size_t n, void* out)
{
    return cuzk::guarded([&] {
        cuzk::require(out != nullptr, "null output");
        cuzk::require(n == 0 || (bases != nullptr && scalars != nullptr), "null input");
        cuzk::select(device);
        CUZK_GROUP::point_t* res = static_cast<CUZK_GROUP::point_t*>(out);
        if (n == 0) {
            res->inf();
            return;
        }
        // On the heap, destroyed only while the device works (see destroy_if_device_ok).
        std::unique_ptr<CUZK_GROUP::cuzk_msm_t, cuzk::destroy_if_device_ok> msm{
            new CUZK_GROUP::cuzk_msm_t{nullptr, n, sizeof(CUZK_GROUP::affine_t), (int)device}};
        cuzk::check(msm->invoke(*res, slice_t<CUZK_GROUP::affine_t>{static_cast<const CUZK_GROUP::affine_t*>(bases), n},
                                static_cast<const fr_t*>(scalars), true,
                                sizeof(CUZK_GROUP::affine_t)),
                    "MSM");
    });
}

extern "C" cuzk_status_t CUZK_CAT(cuzk_cuda_resident_, CUZK_GROUP)(
    uint32_t device, const void* bases, size_t n, cuzk_resident_t** out)
{
    return cuzk::guarded([&] {
        cuzk::require(out != nullptr, "null output");
        cuzk::require(n > 0 && bases != nullptr, "no bases to upload");
        *out = nullptr;
        cuzk::select(device);
        *out = new CUZK_GROUP::resident_t(device, static_cast<const CUZK_GROUP::affine_t*>(bases), n);
    });
}

#undef CUZK_CAT
#undef CUZK_CAT2

#endif
