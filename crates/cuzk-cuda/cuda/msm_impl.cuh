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

typedef affine_t::mem_t affine_h;
typedef CUZK_BUCKET bucket_t;
typedef bucket_t::mem_t bucket_h;
static_assert(sizeof(bucket_t) == sizeof(bucket_h), "host and device buckets differ");

// Bases kept in a device buffer of their own, so that kernels of ours (the split MSM's sum
// of ones and gather) read them where sppark's Pippenger, set up without points, does too.
struct resident_t : cuzk_resident {
    dev_ptr_t<affine_h> bases;
    cuzk_msm_t msm_;
    resident_t(uint32_t device, const affine_t* host_bases, size_t n)
        : cuzk_resident(device, n), bases(n),
          msm_(static_cast<const affine_t*>(nullptr), n, sizeof(affine_t), (int)device)
    {
        const gpu_t& gpu = select_gpu((int)device);
        gpu.HtoD(&bases[0], host_bases, n);
        gpu.sync();
    }
    // The bases as sppark's MSM takes a device pointer to them (same layout).
    dev_ptr_t<affine_t> points(size_t n) const
    {
        return dev_ptr_t<affine_t>{reinterpret_cast<affine_t*>(bases.data()), n};
    }
    void msm(const void* scalars, size_t n, void* out) override
    {
        point_t* res = static_cast<point_t*>(out);
        if (n == 0) {
            res->inf();
            return;
        }
        cuzk::check(msm_.invoke(*res, points(n), n, static_cast<const scalar_t*>(scalars), true),
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
        cuzk::check(msm_.invoke(*res, points(n), n, s, true), "resident MSM over device scalars");
    }
    void split_msm(const uint32_t* bitmap, size_t n, const uint32_t* tail_idx, const void* tail,
                   size_t ntail, size_t chunk, void* out, cuzk_timing_t* timing) override
    {
        const gpu_t& gpu = select_gpu((int)device);
        stream_t& s = gpu[0];
        cuzk::call_clock clk;
        clk.mark(s);  // the origin
        // The ones: sppark's batch addition reads 32 bitmap words per 1024 points, so the
        // device copy is padded with zero words to a multiple of 32.
        size_t words = (n + 31) / 32;
        size_t padded = (words + WARP_SZ - 1) / WARP_SZ * WARP_SZ;
        uint32_t nparts = (uint32_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
        dev_ptr_t<uint32_t> d_bitmap{padded, s};
        dev_ptr_t<bucket_h> d_parts{nparts, s};
        s.HtoD(&d_bitmap[0], bitmap, words);
        if (padded > words)
            s.bzero(&d_bitmap[words], padded - words);
        cudaEvent_t up = clk.mark(s);
        void (*ones_kernel)(bucket_h*, const affine_h*, uint32_t, const uint32_t*, bool,
                            uint32_t) = batch_addition<bucket_t, affine_h>;
        s.launch_coop(ones_kernel, launch_params_t{gpu.sm_count(), BATCH_ADD_BLOCK_SIZE},
                      &d_parts[0], (const affine_h*)&bases[0], (uint32_t)n,
                      (const uint32_t*)&d_bitmap[0], false, (uint32_t)0);
        cudaEvent_t added = clk.mark(s);
        std::vector<bucket_t> parts(nparts);
        s.DtoH(&parts[0], &d_parts[0], nparts);

        // The tail: bases gathered next to their scalars, then Pippenger over them.
        point_t acc;
        acc.inf();
        const uint32_t* idx = tail_idx;
        const scalar_t* sc = static_cast<const scalar_t*>(tail);
        chunk = std::min(chunk, std::max(ntail, (size_t)1));
        dev_ptr_t<uint32_t> d_idx{ntail ? chunk : 0, s};
        dev_ptr_t<scalar_t> d_sc{ntail ? chunk : 0, s};
        dev_ptr_t<affine_h> d_pts{ntail ? chunk : 0, s};
        dev_ptr_t<uint32_t> d_bad{1, s};
        s.bzero(&d_bad[0], 1);
        for (size_t at = 0; at < ntail; at += chunk) {
            size_t m = std::min(chunk, ntail - at);
            s.HtoD(&d_idx[0], idx + at, m);
            s.HtoD(&d_sc[0], sc + at, m);
            cuzk_gather_points(s, &d_pts[0], &bases[0], &d_idx[0], m, (uint32_t)n, &d_bad[0]);
            uint32_t bad = 0;
            s.DtoH(&bad, &d_bad[0], 1);
            s.sync();
            if (bad)
                throw cuzk::error(CUZK_BAD_ARGUMENT, "a tail index past the scalars");
            // On the heap, destroyed only while the device works (destroy_if_device_ok); set
            // up for this chunk's size, so its windows suit it.
            std::unique_ptr<cuzk_msm_t, cuzk::destroy_if_device_ok> tail_msm{new cuzk_msm_t{
                static_cast<const affine_t*>(nullptr), m, sizeof(affine_t), (int)device}};
            point_t r;
            cuzk::check(tail_msm->invoke(r,
                                         dev_ptr_t<affine_t>{
                                             reinterpret_cast<affine_t*>(&d_pts[0]), m},
                                         m, dev_ptr_t<scalar_t>{&d_sc[0], m}, true),
                        "tail MSM");
            acc.add(r);
        }
        cudaEvent_t done = clk.mark(s);
        s.sync();
        bucket_t ones = sum_up(parts);
        point_t sum = ones;
        sum.add(acc);
        *static_cast<point_t*>(out) = sum;
        timing->upload_start = 0;
        timing->upload_end = clk.at(up);
        timing->compute_start = timing->upload_end;
        timing->compute_end = clk.at(added);
        timing->msm_start = ntail ? timing->compute_end : 0;
        timing->msm_end = ntail ? clk.at(done) : 0;
        timing->wall = clk.at(done);
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
