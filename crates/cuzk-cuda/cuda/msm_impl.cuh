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
            cuzk_gather_points(s, &d_pts[0], &bases[0], &d_idx[0], m, 0, (uint32_t)n,
                               &d_bad[0]);
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


// The MSM of n bases read from host memory with scalars split by value (see
// cuzk_resident::split_msm). The bases cross the bus once, `window` points at a time, into
// two device buffers: one uploads (gpu[1]) while the other's ones are summed and its tail
// bases gathered (gpu[0]). The gathered tail runs through Pippenger `chunk` points at a time.
// Bases in pinned host memory upload at the bus's speed, pageable ones through a staging copy.
static void streamed_split_msm(uint32_t device, const affine_h* host, size_t n,
                               const uint32_t* bitmap, const uint32_t* tail_idx,
                               const scalar_t* tail, size_t ntail, size_t window, size_t chunk,
                               point_t* out, cuzk_timing_t* timing)
{
    const gpu_t& gpu = cuzk::select(device);
    stream_t& cs = gpu[0];
    stream_t& us = gpu[1];
    cuzk::call_clock clk;
    clk.mark(cs);  // the origin
    // Windows start at multiples of 1024 points: batch addition reads the bitmap 32 words per
    // 1024 points from the window's first word, so the device copy is padded to that.
    size_t round = (n + 1023) / 1024 * 1024;
    window = std::min(std::max<size_t>(1024, window / 1024 * 1024), round);
    size_t words = (n + 31) / 32, padded = round / 32;
    size_t nwin = (n + window - 1) / window;
    uint32_t nparts = (uint32_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
    chunk = std::min(chunk, std::max(ntail, (size_t)1));
    dev_ptr_t<uint32_t> d_bitmap{padded, cs};
    dev_ptr_t<bucket_h> d_parts{nparts, cs};
    dev_ptr_t<affine_h> d_win{(nwin > 1 ? 2 : 1) * window, cs};
    dev_ptr_t<uint32_t> d_idx{ntail ? chunk : 0, cs};
    dev_ptr_t<scalar_t> d_sc{ntail ? chunk : 0, cs};
    dev_ptr_t<affine_h> d_pts{ntail ? chunk : 0, cs};
    dev_ptr_t<uint32_t> d_bad{1, cs};
    cs.HtoD(&d_bitmap[0], bitmap, words);
    if (padded > words)
        cs.bzero(&d_bitmap[words], padded - words);
    cs.bzero(&d_bad[0], 1);
    // The uploads start once the buffers exist (stream-ordered allocations on cs).
    event_t allocated{cs};
    allocated.wait(us);
    cudaEvent_t up_start = clk.mark(us);

    point_t acc;
    acc.inf();
    size_t c0 = 0, filled = 0, t = 0;  // tail chunk [c0, c0 + chunk): [c0, c0 + filled) gathered
    float msm_ms = 0;
    auto load_chunk = [&] {
        size_t m = std::min(chunk, ntail - c0);
        cs.HtoD(&d_idx[0], tail_idx + c0, m);
        cs.HtoD(&d_sc[0], tail + c0, m);
    };
    auto check_bad = [&] {
        uint32_t bad = 0;
        cs.DtoH(&bad, &d_bad[0], 1);
        cs.sync();
        if (bad)
            throw cuzk::error(CUZK_BAD_ARGUMENT, "tail indices not increasing or past the scalars");
    };
    // Pippenger over the gathered tail; runs on sppark's streams once cs is idle.
    auto flush = [&] {
        if (filled == 0)
            return;
        check_bad();
        auto t0 = std::chrono::steady_clock::now();
        std::unique_ptr<cuzk_msm_t, cuzk::destroy_if_device_ok> tail_msm{new cuzk_msm_t{
            static_cast<const affine_t*>(nullptr), filled, sizeof(affine_t), (int)device}};
        point_t r;
        cuzk::check(tail_msm->invoke(r,
                                     dev_ptr_t<affine_t>{reinterpret_cast<affine_t*>(&d_pts[0]),
                                                         filled},
                                     filled, dev_ptr_t<scalar_t>{&d_sc[0], filled}, true),
                    "tail MSM");
        acc.add(r);
        msm_ms += std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count();
        c0 += filled;
        filled = 0;
        if (c0 < ntail)
            load_chunk();
    };
    if (ntail)
        load_chunk();

    event_t uploaded[2], consumed[2];
    auto upload = [&](size_t k) {
        size_t lo = k * window, m = std::min(window, n - lo);
        if (k >= 2)
            consumed[k & 1].wait(us);
        us.HtoD(&d_win[(k & 1) * window], host + lo, m);
        uploaded[k & 1].record(us);
    };
    upload(0);
    cudaEvent_t up_end = nullptr, first = nullptr;
    for (size_t k = 0; k < nwin; k++) {
        if (k + 1 < nwin)
            upload(k + 1);
        else
            up_end = clk.mark(us);
        size_t lo = k * window, m = std::min(window, n - lo);
        const affine_h* win = &d_win[(k & 1) * window];
        uploaded[k & 1].wait(cs);
        if (k == 0)
            first = clk.mark(cs);
        void (*ones_kernel)(bucket_h*, const affine_h*, uint32_t, const uint32_t*, bool,
                            uint32_t) = batch_addition<bucket_t, affine_h>;
        cs.launch_coop(ones_kernel, launch_params_t{gpu.sm_count(), BATCH_ADD_BLOCK_SIZE},
                       &d_parts[0], win, (uint32_t)m, (const uint32_t*)&d_bitmap[lo / 32],
                       k > 0, (uint32_t)0);
        // This window's tail: the entries from t with an index under lo + m.
        size_t end = std::lower_bound(tail_idx + t, tail_idx + ntail, (uint32_t)(lo + m)) -
                     tail_idx;
        while (t < end) {
            size_t take = std::min(end - t, chunk - filled);
            cuzk_gather_points(cs, &d_pts[filled], win, &d_idx[t - c0], take, (uint32_t)lo,
                               (uint32_t)m, &d_bad[0]);
            filled += take;
            t += take;
            if (filled == chunk)
                flush();
        }
        consumed[k & 1].record(cs);
    }
    if (t < ntail)
        throw cuzk::error(CUZK_BAD_ARGUMENT, "a tail index past the scalars");
    cudaEvent_t added = clk.mark(cs);
    flush();
    check_bad();
    std::vector<bucket_t> parts(nparts);
    cs.DtoH(&parts[0], &d_parts[0], nparts);
    cudaEvent_t done = clk.mark(cs);
    cs.sync();
    bucket_t ones = sum_up(parts);
    point_t sum = ones;
    sum.add(acc);
    *out = sum;
    timing->upload_start = clk.at(up_start);
    timing->upload_end = clk.at(up_end);
    timing->compute_start = clk.at(first);
    timing->compute_end = clk.at(added);
    // The tail's Pippenger runs on sppark's streams: host time, placed after the ones.
    timing->msm_start = ntail ? timing->compute_end : 0;
    timing->msm_end = ntail ? timing->compute_end + msm_ms : 0;
    timing->wall = clk.at(done);
}

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


extern "C" cuzk_status_t CUZK_CAT(cuzk_cuda_streamed_split_msm_, CUZK_GROUP)(
    uint32_t device, const void* bases, size_t n, const uint32_t* bitmap,
    const uint32_t* tail_idx, const void* tail, size_t ntail, size_t window, size_t chunk,
    void* out, cuzk_timing_t* timing)
{
    return cuzk::guarded([&] {
        cuzk::require(out != nullptr && timing != nullptr, "null output");
        cuzk::require(n > 0 && bases != nullptr && bitmap != nullptr, "no bases or bitmap");
        cuzk::require(ntail == 0 || (tail_idx != nullptr && tail != nullptr), "null tail");
        cuzk::require(n <= 0xffffffffu - 1024, "too many points for 32-bit indices");
        cuzk::require(window > 0 && chunk > 0, "empty window or chunk");
        CUZK_GROUP::streamed_split_msm(
            device, static_cast<const CUZK_GROUP::affine_h*>(bases), n, bitmap, tail_idx,
            static_cast<const CUZK_GROUP::scalar_t*>(tail), ntail, window, chunk,
            static_cast<CUZK_GROUP::point_t*>(out), timing);
    });
}

#undef CUZK_CAT
#undef CUZK_CAT2

#endif
