// NTTs and the H polynomial, on sppark's NTT kernels plus one pointwise kernel of ours.
#include "common.cuh"
#include <ff/bls12-381.hpp>
#include <ntt/ntt.cuh>

// a[i] = (a[i] * b[i] - c[i]) * z_inv: the quotient by Z on the coset, where Z is constant.
__global__ void cuzk_h_pointwise(fr_t* a, const fr_t* b, const fr_t* c, const fr_t* z_inv,
                                 size_t n)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    if (i < n) {
        fr_t x = a[i] * b[i];
        x = x - c[i];
        a[i] = x * *z_inv;
    }
}

#ifndef __CUDA_ARCH__

namespace {

void check_lg(uint32_t lg_n)
{
    cuzk::require(lg_n >= 1 && lg_n <= MAX_LG_DOMAIN_SIZE, "NTT size out of range");
}

} // namespace

extern "C" cuzk_status_t cuzk_cuda_ntt(uint32_t device, void* inout, uint32_t lg_n, int inverse,
                                       float* gpu_ms)
{
    return cuzk::guarded([&] {
        cuzk::require(inout != nullptr, "null data");
        check_lg(lg_n);
        const gpu_t& gpu = cuzk::select(device);
        stream_t& s = gpu;
        size_t n = (size_t)1 << lg_n;
        dev_ptr_t<fr_t> d{n, s};
        s.HtoD(&d[0], inout, n);
        cuzk::call_clock clk;
        clk.mark(s);
        NTT::Base_dev_ptr(s, &d[0], lg_n, NTT::InputOutputOrder::NN,
                          inverse ? NTT::Direction::inverse : NTT::Direction::forward,
                          NTT::Type::standard);
        cudaEvent_t done = clk.mark(s);
        s.DtoH(static_cast<fr_t*>(inout), &d[0], n);
        s.sync();
        if (gpu_ms) *gpu_ms = clk.at(done);
    });
}

namespace {

// H into dst[0] (n elements each of dst; H is the first n - 1; z_inv is copied to d_z) on
// sppark's three streams
// of `gpu`: a, b and c are each copied and transformed on a stream of their own, so one's
// NTTs run while the next is copied; the pointwise step and the last inverse NTT run on the
// first stream once the other two are done. `clk` must be fresh: its origin is marked here,
// on the first stream. Fills timing's upload and compute intervals and returns the mark after
// the last kernel, on the first stream.
cudaEvent_t compute_h_on_device(const gpu_t& gpu, cuzk::call_clock& clk, fr_t* const dst[3],
                                fr_t* d_z, const void* a, const void* b, const void* c,
                                size_t len, uint32_t lg_n, const void* z_inv,
                                cuzk_timing_t& timing)
{
    size_t n = (size_t)1 << lg_n;
    const void* src[3] = {a, b, c};
    cudaEvent_t origin = clk.mark(gpu[0]);
    CUDA_OK(cudaStreamWaitEvent(gpu[1], origin, 0));
    CUDA_OK(cudaStreamWaitEvent(gpu[2], origin, 0));
    gpu[0].HtoD(d_z, z_inv, 1);
    cudaEvent_t copying[3], copied[3], ready[3];
    for (int k = 0; k < 3; k++) {
        stream_t& s = gpu[k];
        copying[k] = clk.mark(s);
        if (len) s.HtoD(dst[k], src[k], len);
        if (len < n) s.bzero(dst[k] + len, n - len);
        copied[k] = clk.mark(s);
        // Evaluations over the domain -> coefficients (bit-reversed) -> evaluations over the
        // coset (natural order).
        NTT::Base_dev_ptr(s, dst[k], lg_n, NTT::InputOutputOrder::NR, NTT::Direction::inverse,
                          NTT::Type::standard);
        NTT::Base_dev_ptr(s, dst[k], lg_n, NTT::InputOutputOrder::RN, NTT::Direction::forward,
                          NTT::Type::coset);
        ready[k] = clk.mark(s);
    }
    stream_t& s = gpu[0];
    CUDA_OK(cudaStreamWaitEvent(s, ready[1], 0));
    CUDA_OK(cudaStreamWaitEvent(s, ready[2], 0));
    const unsigned threads = 256;
    cuzk_h_pointwise<<<(unsigned)((n + threads - 1) / threads), threads, 0, s>>>(
        dst[0], dst[1], dst[2], d_z, n);
    CUDA_OK(cudaGetLastError());
    // Back to coefficients over the coset, natural order.
    NTT::Base_dev_ptr(s, dst[0], lg_n, NTT::InputOutputOrder::NN, NTT::Direction::inverse,
                      NTT::Type::coset);
    cudaEvent_t done = clk.mark(s);
    timing.upload_start = clk.at(copying[0]);
    timing.upload_end = 0;
    timing.compute_start = clk.at(copied[0]);
    for (int k = 0; k < 3; k++) {
        timing.upload_start = std::min(timing.upload_start, clk.at(copying[k]));
        timing.upload_end = std::max(timing.upload_end, clk.at(copied[k]));
        timing.compute_start = std::min(timing.compute_start, clk.at(copied[k]));
    }
    timing.compute_end = clk.at(done);
    timing.wall = timing.compute_end;
    return done;
}

void check_h_args(const void* a, const void* b, const void* c, size_t len, uint32_t lg_n,
                  const void* z_inv)
{
    check_lg(lg_n);
    cuzk::require(len <= ((size_t)1 << lg_n), "more evaluations than the domain holds");
    cuzk::require(z_inv != nullptr, "null argument");
    cuzk::require(len == 0 || (a && b && c), "null evaluations");
}

} // namespace

extern "C" cuzk_status_t cuzk_cuda_compute_h(uint32_t device, const void* a, const void* b,
                                             const void* c, size_t len, uint32_t lg_n,
                                             const void* z_inv, void* h, float* gpu_ms)
{
    return cuzk::guarded([&] {
        check_h_args(a, b, c, len, lg_n, z_inv);
        cuzk::require(h != nullptr, "null argument");
        size_t n = (size_t)1 << lg_n;
        const gpu_t& gpu = cuzk::select(device);
        dev_ptr_t<fr_t> d{3 * n + 1, gpu[0]};
        cuzk::call_clock clk;
        cuzk_timing_t timing{};
        fr_t* dst[3] = {&d[0], &d[n], &d[2 * n]};
        compute_h_on_device(gpu, clk, dst, &d[3 * n], a, b, c, len, lg_n, z_inv, timing);
        gpu[0].DtoH(static_cast<fr_t*>(h), &d[0], n - 1);
        gpu[0].sync();
        if (gpu_ms) *gpu_ms = timing.compute_end - timing.compute_start;
    });
}

extern "C" cuzk_status_t cuzk_cuda_h_msm_resident(cuzk_resident_t* resident, cuzk_buffer_t* work,
                                                  const void* a, const void* b, const void* c,
                                                  size_t len, uint32_t lg_n, const void* z_inv,
                                                  void* out, cuzk_timing_t* timing)
{
    return cuzk::guarded([&] {
        check_h_args(a, b, c, len, lg_n, z_inv);
        cuzk::require(resident != nullptr && work != nullptr && out != nullptr &&
                          timing != nullptr,
                      "null argument");
        size_t n = (size_t)1 << lg_n;
        cuzk::require(n - 1 <= resident->n, "more H coefficients than resident bases");
        cuzk::require(work->device == resident->device, "working buffer on another device");
        cuzk::require(work->bytes >= (3 * n + 1) * sizeof(fr_t), "working buffer too small");
        const gpu_t& gpu = cuzk::select(resident->device);
        fr_t* d = static_cast<fr_t*>(work->ptr);
        cuzk::call_clock clk;
        cuzk_timing_t t{};
        // The MSM runs on sppark's own streams: H must be complete first, as it is once
        // compute_h_on_device has read its intervals (it waits for its last mark).
        fr_t* dst[3] = {&d[0], &d[n], &d[2 * n]};
        compute_h_on_device(gpu, clk, dst, &d[3 * n], a, b, c, len, lg_n, z_inv, t);
        resident->msm_device(d, n - 1, out);
        cudaEvent_t done = clk.mark(gpu[0]);
        t.msm_start = t.compute_end;
        t.msm_end = clk.at(done);
        t.wall = t.msm_end;
        *timing = t;
    });
}

extern "C" cuzk_status_t cuzk_cuda_h_msm_streamed(uint32_t device, const void* bases,
                                                  size_t nbases, const void* a, const void* b,
                                                  const void* c, size_t len, uint32_t lg_n,
                                                  const void* z_inv, void* out,
                                                  cuzk_timing_t* timing)
{
    return cuzk::guarded([&] {
        check_h_args(a, b, c, len, lg_n, z_inv);
        cuzk::require(bases != nullptr && out != nullptr && timing != nullptr,
                      "null argument");
        size_t n = (size_t)1 << lg_n;
        cuzk::require(nbases == n - 1, "H query is not one short of the domain");
        const gpu_t& gpu = cuzk::select(device);
        // H lands in d_h; b and c's buffer is returned before the MSM, so the device holds
        // 3n scalars while H is computed and n beside the MSM's streamed bases.
        dev_ptr_t<fr_t> d_h{n + 1, gpu[0]};
        cuzk::call_clock clk;
        cuzk_timing_t t{};
        {
            dev_ptr_t<fr_t> d_bc{2 * n, gpu[0]};
            fr_t* dst[3] = {&d_h[0], &d_bc[0], &d_bc[n]};
            compute_h_on_device(gpu, clk, dst, &d_h[n], a, b, c, len, lg_n, z_inv, t);
        }
        gpu[0].sync();
        cuzk::g1_msm_host_bases(device, bases, &d_h[0], n - 1, out);
        cudaEvent_t done = clk.mark(gpu[0]);
        t.msm_start = t.compute_end;
        t.msm_end = clk.at(done);
        t.wall = t.msm_end;
        *timing = t;
    });
}

#endif
