//! How much device memory each operation takes: upper bounds computed from the same formulas
//! sppark's MSM and our NTT code allocate by, so a reservation is made before the CUDA call.

/// Bytes one cudaMallocAsync may round up by (the pool's granularity).
const ALLOC_SLACK: u64 = 4 << 20;

/// Device memory set aside once per backend: the CUDA context's own allocations beyond what
/// was free at enumeration, NTT twiddle tables, sppark's streams.
pub(crate) const RUNTIME_OVERHEAD: u64 = 256 << 20;

pub(crate) const FR_BYTES: u64 = 32;

/// A group's device sizes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Group {
    /// Affine base.
    pub point: u64,
    /// XYZZ bucket.
    pub bucket: u64,
}

pub(crate) const G1: Group = Group {
    point: 96,
    bucket: 4 * 48,
};
pub(crate) const G2: Group = Group {
    point: 192,
    bucket: 4 * 96,
};

fn lg2(n: u64) -> u32 {
    if n == 0 {
        0
    } else {
        63 - n.leading_zeros()
    }
}

fn round_warp(n: u64) -> u64 {
    n.div_ceil(32) * 32
}

/// sppark's window width for an MSM set up for `n` points.
fn wbits(n: u64) -> u32 {
    let np = round_warp(n);
    if np > 192 {
        (lg2(np + np / 2).saturating_sub(8)).clamp(10, 18)
    } else {
        10
    }
}

fn nwins(wbits: u32) -> u64 {
    (255 - 1) / wbits as u64 + 1
}

/// Memory an MSM object holds for its lifetime: buckets, histogram, and the bases when they
/// are resident.
pub(crate) fn msm_persistent(n: u64, g: Group, sm_count: u64, resident: bool) -> u64 {
    let w = wbits(n);
    let row = 1u64 << (w - 1);
    let buckets = (nwins(w) * row + sm_count * 256 / 32) * g.bucket;
    let hist = nwins(w) * row * 4;
    // Resident bases are an allocation of their own.
    let points = if resident {
        n * g.point + ALLOC_SLACK
    } else {
        0
    };
    buckets + hist + points + ALLOC_SLACK
}

/// Memory one MSM call over `n` points adds: scalars, digits and (when the bases stream from
/// the host) a double buffer of bases. `capacity` is the point count the MSM object was set
/// up for: its window width, not the call's, decides the batching, so a call smaller than
/// the object takes more memory than an object sized for the call would.
pub(crate) fn msm_call(n: u64, capacity: u64, g: Group, bases_on_host: bool) -> u64 {
    let w = wbits(capacity.max(n));
    let lg_np = lg2(n + n / 2);
    let batch = ((1u64 << (lg_np.max(w) - w)) >> 6).max(1);
    let stride = round_warp(n.div_ceil(batch));
    let temp = stride * FR_BYTES.max(16);
    let digits = nwins(w) * stride * 4;
    let points = if bases_on_host {
        (if batch > 1 { 2 } else { 1 }) * stride * g.point
    } else {
        0
    };
    temp + digits + points + ALLOC_SLACK
}

/// A whole MSM with bases streamed from the host.
pub(crate) fn msm_streamed(n: u64, g: Group, sm_count: u64) -> u64 {
    msm_persistent(n, g, sm_count, false) + msm_call(n, n, g, true)
}

/// A split MSM over `n` resident points whose tail runs `chunk` points at a time: the bitmap,
/// the sum of ones' partial sums, and per chunk the tail's indices, scalars and gathered
/// bases with a Pippenger set up for the chunk.
pub(crate) fn split_msm(n: u64, chunk: u64, g: Group, sm_count: u64) -> u64 {
    let bitmap = n.div_ceil(32).div_ceil(32) * 32 * 4;
    let parts = sm_count * 256 / 32 * g.bucket;
    let tail = chunk * (4 + FR_BYTES + g.point) + 4;
    let pippenger = if chunk > 0 {
        msm_persistent(chunk, g, sm_count, false) + msm_call(chunk, chunk, g, false)
    } else {
        0
    };
    bitmap + parts + tail + pippenger + 6 * ALLOC_SLACK
}

/// The tail chunk of a split MSM over `n` points with `ntail` tail scalars: all of them, at
/// most 2^23, halved (down to 2^16) until the call fits in `available` bytes.
pub(crate) fn split_chunk(n: u64, ntail: u64, g: Group, sm_count: u64, available: u64) -> u64 {
    let mut chunk = ntail.clamp(1, 1 << 23);
    while chunk > 1 << 16 && split_msm(n, chunk, g, sm_count) > available {
        chunk /= 2;
    }
    chunk
}

/// A split MSM over `n` points streamed from the host `window` points at a time (two
/// buffers), its tail gathered and run `chunk` points at a time.
pub(crate) fn streamed_split(n: u64, window: u64, chunk: u64, g: Group, sm_count: u64) -> u64 {
    let windows = if window < n { 2 } else { 1 } * window * g.point;
    split_msm(n, chunk, g, sm_count) + windows + ALLOC_SLACK
}

/// H over a domain of `n` and its MSM over bases streamed from the host: a, b and c while H
/// is computed, then H beside the MSM (its buckets, digits and double buffer of bases).
pub(crate) fn h_streamed(n: u64, sm_count: u64) -> u64 {
    let msm = (n + 1) * FR_BYTES + ALLOC_SLACK + msm_streamed(n - 1, G1, sm_count);
    compute_h(n).max(msm)
}

/// An in-place NTT of `n` elements.
pub(crate) fn ntt(n: u64) -> u64 {
    n * FR_BYTES + ALLOC_SLACK
}

/// The H computation over a domain of `n`: a, b, c and z_inv.
pub(crate) fn compute_h(n: u64) -> u64 {
    (3 * n + 1) * FR_BYTES + ALLOC_SLACK
}

/// A fixed-base multiplication: its window table of `table_points` points, and one chunk of
/// `chunk` scalars with their results (three allocations).
pub(crate) fn fixed_base(table_points: u64, chunk: u64, g: Group) -> u64 {
    table_points * g.point + chunk * (FR_BYTES + g.point) + 3 * ALLOC_SLACK
}

/// The largest chunk (at most `max`) whose fixed-base multiplication fits in `available`
/// bytes; 0 when not even one point does.
pub(crate) fn fixed_base_chunk(table_points: u64, available: u64, max: u64, g: Group) -> u64 {
    let fixed = fixed_base(table_points, 0, g);
    (available.saturating_sub(fixed) / (FR_BYTES + g.point)).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_widths_follow_sppark() {
        assert_eq!(wbits(100), 10);
        assert_eq!(wbits(1 << 20), 12);
        assert_eq!(wbits(1 << 26), 18);
        assert_eq!(wbits(1 << 27), 18);
    }

    #[test]
    fn estimates_grow_with_size() {
        let small = msm_streamed(1 << 10, G1, 132);
        let large = msm_streamed(1 << 24, G1, 132);
        assert!(large > small);
        // Resident bases of 2^24 G1 points alone are 1.5 GiB.
        assert!(msm_persistent(1 << 24, G1, 132, true) > (1 << 24) * 96);
        assert!(compute_h(1 << 22) > 3 * (1 << 22) * 32);
    }

    #[test]
    fn a_call_smaller_than_its_object_is_sized_by_the_objects_window() {
        // A 2^24 call on an object set up for 2^26 runs with 18-bit windows in one batch:
        // 2^24 scalars (512 MiB) and 15 windows of 2^24 digits (960 MiB).
        let call = msm_call(1 << 24, 1 << 26, G1, false);
        assert!(call >= (512 + 960) << 20, "{call}");
        assert!(call > msm_call(1 << 24, 1 << 24, G1, false));
    }

    #[test]
    fn a_split_chunk_shrinks_to_fit_and_never_below_its_floor() {
        let n = 1 << 27;
        let all = split_chunk(n, 5_000_000, G1, 132, u64::MAX);
        assert_eq!(all, 5_000_000);
        assert_eq!(split_chunk(n, 100 << 20, G1, 132, u64::MAX), 1 << 23);
        let room = split_msm(n, 1 << 20, G1, 132);
        let c = split_chunk(n, 100 << 20, G2, 132, room);
        assert!(c <= 1 << 20 && split_msm(n, c, G2, 132) <= room, "{c}");
        assert_eq!(split_chunk(n, 100 << 20, G1, 132, 0), 1 << 16);
        assert_eq!(split_chunk(n, 0, G1, 132, u64::MAX), 1);
        // The tail's gathered bases dominate: about 4 + 32 + 96 bytes a point.
        assert!(split_msm(n, 1 << 23, G1, 132) > (1u64 << 23) * 132);
    }

    #[test]
    fn a_fixed_base_chunk_fits_the_room_it_is_given() {
        let table = 16 * 65535;
        for g in [G1, G2] {
            let room = fixed_base(table, 1 << 20, g);
            assert_eq!(fixed_base_chunk(table, room, 1 << 24, g), 1 << 20);
            let almost = room + FR_BYTES + g.point - 1;
            assert_eq!(fixed_base_chunk(table, almost, 1 << 24, g), 1 << 20);
            assert_eq!(fixed_base_chunk(table, room, 1000, g), 1000);
            assert_eq!(
                fixed_base_chunk(table, fixed_base(table, 0, g) - 1, 1 << 24, g),
                0
            );
        }
    }
}
