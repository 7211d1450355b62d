//! A proof's MSMs with the bases read from host memory: for parameters that are not resident
//! on the device (a budget too small for them, or residency off).
//!
//! L, A and B run as split MSMs (the ones summed, Pippenger over the tail) with their bases
//! uploaded once, a window at a time, beside the sums over the window before; H is computed on
//! the device and its MSM reads it there, with only its bases streamed. Bases that the
//! parameters pinned ([`cuzk_groth16::ParameterSource::pin_host`]) upload at the bus's speed.

use crate::timeline::Recorder;

use blstrs::{G1Projective, G2Projective, Scalar};
use cuzk_groth16::{
    DeviceSpan, DeviceTimeline, G1Base, G1Query, G2Base, ParameterSource, QueryMsm, SplitScalars,
};
use group::Group;

use crate::backend::h_domain;
use crate::device::Held;
use crate::error::CudaError;
use crate::ffi;
use crate::vram;

/// A proof's MSMs over `params` in host memory, each operation's device timeline recorded.
pub(crate) struct StreamedMsm<'a> {
    pub backend: &'a crate::backend::CudaBackend,
    pub held: Held<'a>,
    pub params: &'a dyn ParameterSource,
    pub timeline: Recorder,
}

impl StreamedMsm<'_> {
    fn g1_bases(&self, query: G1Query, n: usize) -> cuzk_groth16::Result<&[G1Base]> {
        let bases = match query {
            G1Query::H => self.params.h(),
            G1Query::L => self.params.l(),
            G1Query::A => self.params.a(),
            G1Query::BG1 => self.params.b_g1(),
        };
        bases.get(..n).ok_or_else(|| {
            cuzk_groth16::Error::ParamsMismatch(format!(
                "{query:?} has {} points, {n} scalars",
                bases.len()
            ))
        })
    }
}

impl QueryMsm for StreamedMsm<'_> {
    fn g1(&self, query: G1Query, scalars: &[Scalar]) -> cuzk_groth16::Result<G1Projective> {
        let bases = self.g1_bases(query, scalars.len())?;
        Ok(self.backend.msm_g1_held(self.held, bases, scalars)?)
    }
    fn b_g2(&self, scalars: &[Scalar]) -> cuzk_groth16::Result<G2Projective> {
        Ok(self
            .backend
            .msm_g2_held(self.held, self.params.b_g2(), scalars)?)
    }
    fn takes_split(&self) -> bool {
        true
    }
    fn g1_split(
        &self,
        query: G1Query,
        scalars: &SplitScalars,
    ) -> cuzk_groth16::Result<G1Projective> {
        let bases = self.g1_bases(query, scalars.len())?;
        let (p, span) = split_g1(self.held, bases, scalars, Pieces::Largest)?;
        self.timeline.g1(query, span);
        Ok(p)
    }
    fn b_g2_split(&self, scalars: &SplitScalars) -> cuzk_groth16::Result<G2Projective> {
        let bases = self.params.b_g2().get(..scalars.len()).ok_or_else(|| {
            cuzk_groth16::Error::ParamsMismatch(format!(
                "B in G2 has {} points, {} scalars",
                self.params.b_g2().len(),
                scalars.len()
            ))
        })?;
        let (p, span) = split_g2(self.held, bases, scalars, Pieces::Largest)?;
        self.timeline.b_g2(span);
        Ok(p)
    }
    fn device_timeline(&self) -> Option<DeviceTimeline> {
        Some(self.timeline.get())
    }
    fn h_from_abc(
        &self,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> Option<cuzk_groth16::Result<G1Projective>> {
        let run = || -> Result<G1Projective, CudaError> {
            let (p, span) = h_msm(self.held, self.params.h(), [a, b, c])?;
            self.timeline.g1(G1Query::H, span);
            Ok(p)
        };
        Some(run().map_err(Into::into))
    }
}

/// The window and tail chunk of a streamed split MSM over `n` points with `ntail` tail
/// scalars: the window at most 2^24 points and the chunk at most 2^23, each halved (down to
/// 2^16) until the call fits in `available` bytes.
pub(crate) fn streamed_split_sizes(
    n: u64,
    ntail: u64,
    g: vram::Group,
    sm: u64,
    available: u64,
) -> (u64, u64) {
    let mut window = n.div_ceil(1024).clamp(1, 1 << 14) * 1024;
    let mut chunk = ntail.clamp(1, 1 << 23);
    while vram::streamed_split(n, window, chunk, g, sm) > available {
        if window > 1 << 16 && (window >= chunk || chunk <= 1 << 16) {
            window /= 2;
        } else if chunk > 1 << 16 {
            chunk /= 2;
        } else {
            break;
        }
    }
    (window, chunk)
}

type SplitFn = unsafe extern "C" fn(
    u32,
    *const std::ffi::c_void,
    usize,
    *const u32,
    *const u32,
    *const std::ffi::c_void,
    usize,
    usize,
    usize,
    *mut std::ffi::c_void,
    *mut ffi::Timing,
) -> ffi::Status;

/// How a streamed split MSM cuts its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pieces {
    /// The largest window and tail chunk the budget has room for (a proof's MSMs).
    Largest,
    /// At least four windows and three tail chunks where the points allow (standalone MSMs:
    /// conformance checks exercise the double buffer and the chunked tail at any size).
    Several,
}

fn split_call<B, P>(
    held: Held<'_>,
    bases: &[B],
    s: &SplitScalars,
    pieces: Pieces,
    g: vram::Group,
    f: SplitFn,
    out: &mut P,
) -> Result<DeviceSpan, CudaError> {
    if s.len() != bases.len() {
        return Err(CudaError::BadArgument(format!(
            "split MSM over {} bases with {} scalars",
            bases.len(),
            s.len()
        )));
    }
    let sm = held.device().info().sm_count as u64;
    let (n, ntail) = (s.len() as u64, s.tail_scalars().len() as u64);
    let (mut window, mut chunk) = streamed_split_sizes(n, ntail, g, sm, held.available());
    if pieces == Pieces::Several {
        window = window.min((n / 4).max(1024));
        chunk = chunk.min(ntail.div_ceil(3).max(1));
    }
    let _mem = held.alloc(
        "streamed split MSM",
        vram::streamed_split(n, window, chunk, g, sm),
    )?;
    let mut timing = ffi::Timing::default();
    // SAFETY: `bases` is a live slice of n blst affine points of the group `f` is for (the
    // caller's pairing); the bitmap has n.div_ceil(32) words and the tail's indices and
    // Montgomery-form scalars have equal lengths (SplitScalars keeps both; the C side checks
    // the indices); `out` is that group's Jacobian point; timing is a live struct.
    let status = unsafe {
        f(
            held.index(),
            bases.as_ptr().cast(),
            bases.len(),
            s.ones_bitmap().as_ptr(),
            s.tail_indices().as_ptr(),
            s.tail_scalars().as_ptr().cast(),
            s.tail_scalars().len(),
            window as usize,
            chunk as usize,
            (out as *mut P).cast(),
            &mut timing,
        )
    };
    ffi::check(status, "streamed split MSM")?;
    Ok(timing.span())
}

/// The split MSM of G1 `bases` in host memory, and its device timeline.
pub(crate) fn split_g1(
    held: Held<'_>,
    bases: &[G1Base],
    s: &SplitScalars,
    pieces: Pieces,
) -> Result<(G1Projective, DeviceSpan), CudaError> {
    let mut out = G1Projective::identity();
    if s.is_empty() {
        return Ok((out, DeviceSpan::default()));
    }
    let span = split_call(
        held,
        bases,
        s,
        pieces,
        vram::G1,
        ffi::cuzk_cuda_streamed_split_msm_g1,
        AsMut::<blst::blst_p1>::as_mut(&mut out),
    )?;
    Ok((out, span))
}

/// The split MSM of G2 `bases` in host memory, and its device timeline.
pub(crate) fn split_g2(
    held: Held<'_>,
    bases: &[G2Base],
    s: &SplitScalars,
    pieces: Pieces,
) -> Result<(G2Projective, DeviceSpan), CudaError> {
    let mut out = G2Projective::identity();
    if s.is_empty() {
        return Ok((out, DeviceSpan::default()));
    }
    let span = split_call(
        held,
        bases,
        s,
        pieces,
        vram::G2,
        ffi::cuzk_cuda_streamed_split_msm_g2,
        AsMut::<blst::blst_p2>::as_mut(&mut out),
    )?;
    Ok((out, span))
}

/// H from a, b and c and its MSM over the H `bases` in host memory, H kept on the device in
/// between; and its device timeline.
pub(crate) fn h_msm(
    held: Held<'_>,
    bases: &[G1Base],
    abc: [&[Scalar]; 3],
) -> Result<(G1Projective, DeviceSpan), CudaError> {
    let [a, b, c] = abc;
    if a.len() != b.len() || a.len() != c.len() {
        return Err(CudaError::BadArgument(format!(
            "a, b, c have {}, {}, {} entries",
            a.len(),
            b.len(),
            c.len()
        )));
    }
    let (lg_n, z_inv) = h_domain(a.len())?;
    let n = 1u64 << lg_n;
    if bases.len() as u64 != n - 1 {
        return Err(CudaError::BadArgument(format!(
            "H query of {} points for a domain of 2^{lg_n}",
            bases.len()
        )));
    }
    let sm = held.device().info().sm_count as u64;
    let _mem = held.alloc("H and its streamed MSM", vram::h_streamed(n, sm))?;
    let mut out = G1Projective::identity();
    let mut timing = ffi::Timing::default();
    // SAFETY: bases is a live slice of n - 1 blst_p1_affine (checked above); a, b, c are live
    // slices of a.len() <= n Montgomery-form Fr; z_inv is one Fr; out is a blst_p1
    // (G1Projective is transparent over it); timing is a live struct.
    let status = unsafe {
        ffi::cuzk_cuda_h_msm_streamed(
            held.index(),
            bases.as_ptr().cast(),
            bases.len(),
            a.as_ptr().cast(),
            b.as_ptr().cast(),
            c.as_ptr().cast(),
            a.len(),
            lg_n,
            (&z_inv as *const Scalar).cast(),
            (AsMut::<blst::blst_p1>::as_mut(&mut out) as *mut blst::blst_p1).cast(),
            &mut timing,
        )
    };
    ffi::check(status, "H and its streamed MSM")?;
    Ok((out, timing.span()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_split_sizes_fit_the_room_they_are_given() {
        let n = 130_000_000;
        let (w, c) = streamed_split_sizes(n, 1_700_000, vram::G1, 132, u64::MAX);
        assert_eq!((w, c), (1 << 24, 1_700_000));
        let room = 3u64 << 30;
        for g in [vram::G1, vram::G2] {
            let (w, c) = streamed_split_sizes(n, 50_000_000, g, 132, room);
            assert!(vram::streamed_split(n, w, c, g, 132) <= room, "{w} {c}");
            assert!(w >= 1 << 16 && c >= 1 << 16 && w % 1024 == 0);
        }
        // Small queries: one window of the points rounded up to 1024.
        assert_eq!(
            streamed_split_sizes(1000, 10, vram::G2, 132, u64::MAX),
            (1024, 10)
        );
        // Nothing fits: the floors.
        assert_eq!(
            streamed_split_sizes(n, 50_000_000, vram::G1, 132, 0),
            (1 << 16, 1 << 16)
        );
    }
}
