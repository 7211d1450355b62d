//! Parameters kept on a device across proofs.
//!
//! A circuit's five queries are uploaded once (one sppark MSM object each, holding its bases
//! and buckets) and reused by every later proof with the same [`ParameterSource::source_id`].
//! The memory is reserved against the device's budget for as long as the copy lives.

use std::ptr::NonNull;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_groth16::{Device, DeviceGuard, G1Query, ParameterSource, VramReservation};

use crate::buffer::DeviceBuffer;
use crate::device::{CudaDevice, Held};
use crate::error::CudaError;
use crate::ffi;
use crate::vram;

/// Bases of one query on one device.
#[derive(Debug)]
pub(crate) struct ResidentBases {
    ptr: NonNull<ffi::Resident>,
    n: usize,
    /// The device the bases live on: every use checks its guard against it.
    hw: Arc<Device>,
}

// SAFETY: the C++ object is not tied to the thread that made it; every use goes through
// `msm`, which takes the guard of the device it lives on (checked), so no two threads touch
// it at once.
unsafe impl Send for ResidentBases {}
// SAFETY: as above: shared references only reach the object under the device's lock.
unsafe impl Sync for ResidentBases {}

impl ResidentBases {
    fn upload<T>(held: Held<'_>, bases: &[T], g2: bool) -> Result<Self, CudaError> {
        let mut out: *mut ffi::Resident = std::ptr::null_mut();
        let f = if g2 {
            ffi::cuzk_cuda_resident_g2
        } else {
            ffi::cuzk_cuda_resident_g1
        };
        // SAFETY: `bases` is a live slice of blst affine points (the layout the C side
        // static_asserts) of the length passed; `out` receives the new object or stays null.
        let status = unsafe { f(held.index(), bases.as_ptr().cast(), bases.len(), &mut out) };
        ffi::check(status, "upload bases")?;
        let ptr = NonNull::new(out).ok_or_else(|| CudaError::Cuda {
            code: 3,
            message: "upload returned no object".into(),
        })?;
        Ok(ResidentBases {
            ptr,
            n: bases.len(),
            hw: held.device().hardware().clone(),
        })
    }

    /// An error unless `guard` is the guard of the device these bases live on.
    pub(crate) fn check(&self, guard: &DeviceGuard<'_>) -> Result<(), CudaError> {
        Ok(guard.check(&self.hw)?)
    }

    /// `sum scalars[i] * bases[i]` over the first `scalars.len()` bases; `out` is a blst
    /// Jacobian point of this group.
    pub(crate) fn msm<P>(
        &self,
        guard: &DeviceGuard<'_>,
        scalars: &[blstrs::Scalar],
        out: &mut P,
    ) -> Result<(), CudaError> {
        self.check(guard)?;
        if scalars.len() > self.n {
            return Err(CudaError::BadArgument(format!(
                "{} scalars for {} resident bases",
                scalars.len(),
                self.n
            )));
        }
        // SAFETY: the object is live (owned by self); the scalars are Montgomery-form Fr
        // (blstrs::Scalar is a transparent blst_fr); `out` is the Jacobian point type of this
        // group (checked by the caller through ResidentSrs); the guard serialises use.
        ffi::check(
            unsafe {
                ffi::cuzk_cuda_resident_msm(
                    self.ptr.as_ptr(),
                    scalars.as_ptr().cast(),
                    scalars.len(),
                    (out as *mut P).cast(),
                )
            },
            "resident MSM",
        )
    }
}

impl ResidentBases {
    /// As [`msm`](Self::msm), with the scalars uploaded to device memory first; returns the
    /// MSM's own wall time, without the upload.
    fn msm_device_scalars<P>(
        &self,
        guard: &DeviceGuard<'_>,
        scalars: &[blstrs::Scalar],
        out: &mut P,
    ) -> Result<Duration, CudaError> {
        self.check(guard)?;
        if scalars.is_empty() || scalars.len() > self.n {
            return Err(CudaError::BadArgument(format!(
                "{} scalars for {} resident bases",
                scalars.len(),
                self.n
            )));
        }
        let mut ms = 0f64;
        // SAFETY: as in `msm`; `ms` is a live f64 the call writes.
        let status = unsafe {
            ffi::cuzk_cuda_resident_msm_device_scalars(
                self.ptr.as_ptr(),
                scalars.as_ptr().cast(),
                scalars.len(),
                (out as *mut P).cast(),
                &mut ms,
            )
        };
        ffi::check(status, "resident MSM over device scalars")?;
        Ok(Duration::from_secs_f64(ms / 1e3))
    }
}

impl Drop for ResidentBases {
    fn drop(&mut self) {
        // SAFETY: the pointer came from an upload and is freed exactly once, here.
        unsafe { ffi::cuzk_cuda_resident_free(self.ptr.as_ptr()) }
    }
}

impl ResidentBases {
    /// The MSM of the first `s.len()` bases with split scalars (see
    /// [`cuzk_groth16::SplitScalars`]); `out` is a blst Jacobian point of this group. The tail
    /// runs `chunk` points at a time.
    fn split_msm<P>(
        &self,
        guard: &DeviceGuard<'_>,
        s: &cuzk_groth16::SplitScalars,
        chunk: u64,
        out: &mut P,
    ) -> Result<ffi::Timing, CudaError> {
        self.check(guard)?;
        if s.is_empty() || s.len() > self.n {
            return Err(CudaError::BadArgument(format!(
                "{} split scalars for {} resident bases",
                s.len(),
                self.n
            )));
        }
        let mut timing = ffi::Timing::default();
        // SAFETY: the object is live (owned by self) and used under its device's guard; the
        // bitmap has s.len().div_ceil(32) words and the tail's indices and scalars
        // (Montgomery-form Fr) have equal lengths, as SplitScalars keeps them; `out` is the
        // Jacobian point type of this group (the caller's); timing is a live struct.
        let status = unsafe {
            ffi::cuzk_cuda_resident_split_msm(
                self.ptr.as_ptr(),
                s.ones_bitmap().as_ptr(),
                s.len(),
                s.tail_indices().as_ptr(),
                s.tail_scalars().as_ptr().cast(),
                s.tail_scalars().len(),
                chunk as usize,
                (out as *mut P).cast(),
                &mut timing,
            )
        };
        ffi::check(status, "split MSM")?;
        Ok(timing)
    }
}

/// One circuit's parameters on one device.
#[derive(Debug)]
pub(crate) struct ResidentSrs {
    pub source_id: u64,
    h: ResidentBases,
    l: ResidentBases,
    a: ResidentBases,
    b_g1: ResidentBases,
    b_g2: ResidentBases,
    /// H's a, b and c on the device (`3n + 1` scalars for the domain of `n = h.len() + 1`).
    h_work: DeviceBuffer,
    pub upload_time: Duration,
    // Dropped after the bases (field order): the budget is returned once the memory is freed.
    reservation: VramReservation,
}

impl ResidentSrs {
    /// Device memory the resident copy of `params` takes.
    pub(crate) fn bytes_needed(params: &dyn ParameterSource, sm_count: u64) -> u64 {
        let g1 = |n: usize| vram::msm_persistent(n as u64, vram::G1, sm_count, true);
        g1(params.h().len())
            + vram::compute_h(params.h().len() as u64 + 1)
            + g1(params.l().len())
            + g1(params.a().len())
            + g1(params.b_g1().len())
            + vram::msm_persistent(params.b_g2().len() as u64, vram::G2, sm_count, true)
    }

    /// Uploads `params` under `reservation` (which must cover [`Self::bytes_needed`]).
    pub(crate) fn upload(
        held: Held<'_>,
        source_id: u64,
        params: &dyn ParameterSource,
        reservation: VramReservation,
    ) -> Result<Self, CudaError> {
        let t = Instant::now();
        let nonempty = |n: usize, what: &str| {
            if n == 0 {
                Err(CudaError::BadArgument(format!("{what} query is empty")))
            } else {
                Ok(())
            }
        };
        nonempty(params.h().len(), "H")?;
        nonempty(params.a().len(), "A")?;
        nonempty(params.b_g1().len(), "B")?;
        nonempty(params.l().len(), "L")?;
        let n = params.h().len() as u64 + 1;
        if !n.is_power_of_two() {
            return Err(CudaError::BadArgument(format!(
                "H query of {} points: not one short of a power of two",
                n - 1
            )));
        }
        Ok(ResidentSrs {
            h_work: DeviceBuffer::new(held, (3 * n + 1) * vram::FR_BYTES)?,
            source_id,
            h: ResidentBases::upload(held, params.h(), false)?,
            l: ResidentBases::upload(held, params.l(), false)?,
            a: ResidentBases::upload(held, params.a(), false)?,
            b_g1: ResidentBases::upload(held, params.b_g1(), false)?,
            b_g2: ResidentBases::upload(held, params.b_g2(), true)?,
            upload_time: t.elapsed(),
            reservation,
        })
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.reservation.bytes()
    }

    pub(crate) fn g1(
        &self,
        guard: &DeviceGuard<'_>,
        query: G1Query,
        scalars: &[blstrs::Scalar],
    ) -> Result<blstrs::G1Projective, CudaError> {
        let bases = match query {
            G1Query::H => &self.h,
            G1Query::L => &self.l,
            G1Query::A => &self.a,
            G1Query::BG1 => &self.b_g1,
        };
        bases.check(guard)?;
        let _call = guard.alloc(
            "G1 MSM scalars",
            vram::msm_call(scalars.len() as u64, bases.n as u64, vram::G1, false),
        )?;
        let mut out = <blstrs::G1Projective as group::Group>::identity();
        bases.msm(guard, scalars, AsMut::<blst::blst_p1>::as_mut(&mut out))?;
        Ok(out)
    }

    pub(crate) fn b_g2(
        &self,
        guard: &DeviceGuard<'_>,
        scalars: &[blstrs::Scalar],
    ) -> Result<blstrs::G2Projective, CudaError> {
        self.b_g2.check(guard)?;
        let _call = guard.alloc(
            "G2 MSM scalars",
            vram::msm_call(scalars.len() as u64, self.b_g2.n as u64, vram::G2, false),
        )?;
        let mut out = <blstrs::G2Projective as group::Group>::identity();
        self.b_g2
            .msm(guard, scalars, AsMut::<blst::blst_p2>::as_mut(&mut out))?;
        Ok(out)
    }

    /// The MSM of a G1 query over split scalars, and its device timeline.
    pub(crate) fn g1_split(
        &self,
        held: Held<'_>,
        query: G1Query,
        scalars: &cuzk_groth16::SplitScalars,
    ) -> Result<(blstrs::G1Projective, cuzk_groth16::DeviceSpan), CudaError> {
        let bases = match query {
            G1Query::H => &self.h,
            G1Query::L => &self.l,
            G1Query::A => &self.a,
            G1Query::BG1 => &self.b_g1,
        };
        let mut out = <blstrs::G1Projective as group::Group>::identity();
        let t = split_call(held, bases, scalars, vram::G1, |chunk| {
            bases.split_msm(
                held.guard(),
                scalars,
                chunk,
                AsMut::<blst::blst_p1>::as_mut(&mut out),
            )
        })?;
        Ok((out, t))
    }

    /// The MSM of B in G2 over split scalars, and its device timeline.
    pub(crate) fn b_g2_split(
        &self,
        held: Held<'_>,
        scalars: &cuzk_groth16::SplitScalars,
    ) -> Result<(blstrs::G2Projective, cuzk_groth16::DeviceSpan), CudaError> {
        let mut out = <blstrs::G2Projective as group::Group>::identity();
        let t = split_call(held, &self.b_g2, scalars, vram::G2, |chunk| {
            self.b_g2.split_msm(
                held.guard(),
                scalars,
                chunk,
                AsMut::<blst::blst_p2>::as_mut(&mut out),
            )
        })?;
        Ok((out, t))
    }

    /// H from a, b, c over the domain of `2^lg_n` and its MSM over the resident H bases, with
    /// H kept on the device in between; also its device timeline.
    pub(crate) fn h_msm(
        &self,
        guard: &DeviceGuard<'_>,
        abc: [&[blstrs::Scalar]; 3],
        lg_n: u32,
        z_inv: &blstrs::Scalar,
    ) -> Result<(blstrs::G1Projective, cuzk_groth16::DeviceSpan), CudaError> {
        self.h.check(guard)?;
        let [a, b, c] = abc;
        if a.len() != b.len() || a.len() != c.len() || a.len() > 1usize << lg_n {
            return Err(CudaError::BadArgument(format!(
                "a, b, c have {}, {}, {} entries for a domain of 2^{lg_n}",
                a.len(),
                b.len(),
                c.len()
            )));
        }
        let n = 1u64 << lg_n;
        if n != self.h.n as u64 + 1 {
            return Err(CudaError::BadArgument(format!(
                "a domain of 2^{lg_n} for {} resident H bases",
                self.h.n
            )));
        }
        let _mem = guard.alloc(
            "H's MSM",
            vram::msm_call(n, self.h.n as u64, vram::G1, false),
        )?;
        let mut out = <blstrs::G1Projective as group::Group>::identity();
        let mut timing = ffi::Timing::default();
        // SAFETY: the resident object and the working buffer are live (owned by self) and
        // used under the device's guard; the buffer holds 3n + 1 Fr for this n (checked
        // above); a, b, c are live slices of a.len() Montgomery-form Fr each; z_inv is one
        // Fr; out is a blst_p1 (G1Projective is transparent over it), the G1 H query's group.
        let status = unsafe {
            ffi::cuzk_cuda_h_msm_resident(
                self.h.ptr.as_ptr(),
                self.h_work.as_ptr(),
                a.as_ptr().cast(),
                b.as_ptr().cast(),
                c.as_ptr().cast(),
                a.len(),
                lg_n,
                (z_inv as *const blstrs::Scalar).cast(),
                (AsMut::<blst::blst_p1>::as_mut(&mut out) as *mut blst::blst_p1).cast(),
                &mut timing,
            )
        };
        ffi::check(status, "H and its MSM")?;
        Ok((out, timing.span()))
    }
}

/// Reserves a split MSM's device memory (its tail chunk sized to what the budget has left)
/// and runs `call` with the chunk.
fn split_call(
    held: Held<'_>,
    bases: &ResidentBases,
    s: &cuzk_groth16::SplitScalars,
    g: vram::Group,
    call: impl FnOnce(u64) -> Result<ffi::Timing, CudaError>,
) -> Result<cuzk_groth16::DeviceSpan, CudaError> {
    bases.check(held.guard())?;
    let sm = held.device().info().sm_count as u64;
    let (n, ntail) = (s.len() as u64, s.tail_scalars().len() as u64);
    let chunk = vram::split_chunk(n, ntail, g, sm, held.available());
    let _mem = held.alloc("split MSM", vram::split_msm(n, chunk, g, sm))?;
    Ok(call(chunk)?.span())
}

/// G1 bases kept on a device, for callers that run their own MSMs (benchmarks, tools).
#[derive(Debug)]
pub struct ResidentG1 {
    bases: ResidentBases,
    _mem: VramReservation,
}

impl ResidentG1 {
    /// Uploads `bases` to `device` (memory reserved through `guard`, checked to be the
    /// device's, first).
    pub fn upload(
        device: &CudaDevice,
        guard: &DeviceGuard<'_>,
        bases: &[cuzk_groth16::G1Base],
    ) -> Result<Self, CudaError> {
        let held = device.held(guard)?;
        let sm = device.info().sm_count as u64;
        let mem = held.alloc(
            "resident G1 bases",
            vram::msm_persistent(bases.len() as u64, vram::G1, sm, true),
        )?;
        Ok(ResidentG1 {
            bases: ResidentBases::upload(held, bases, false)?,
            _mem: mem,
        })
    }

    /// `sum scalars[i] * bases[i]` over the first `scalars.len()` bases.
    pub fn msm(
        &self,
        guard: &DeviceGuard<'_>,
        scalars: &[blstrs::Scalar],
    ) -> Result<blstrs::G1Projective, CudaError> {
        self.bases.check(guard)?;
        let _call = guard.alloc(
            "G1 MSM scalars",
            vram::msm_call(scalars.len() as u64, self.bases.n as u64, vram::G1, false),
        )?;
        let mut out = <blstrs::G1Projective as group::Group>::identity();
        self.bases
            .msm(guard, scalars, AsMut::<blst::blst_p1>::as_mut(&mut out))?;
        Ok(out)
    }
}

impl ResidentG1 {
    /// `sum scalars[i] * bases[i]` with the scalars split by value (ones summed by batch
    /// addition, Pippenger over the tail), and the device's timeline of it.
    pub fn split_msm(
        &self,
        device: &CudaDevice,
        guard: &DeviceGuard<'_>,
        scalars: &cuzk_groth16::SplitScalars,
    ) -> Result<(blstrs::G1Projective, cuzk_groth16::DeviceSpan), CudaError> {
        let held = device.held(guard)?;
        let mut out = <blstrs::G1Projective as group::Group>::identity();
        let t = split_call(held, &self.bases, scalars, vram::G1, |chunk| {
            self.bases.split_msm(
                guard,
                scalars,
                chunk,
                AsMut::<blst::blst_p1>::as_mut(&mut out),
            )
        })?;
        Ok((out, t))
    }

    /// As [`msm`](Self::msm) with the scalars copied to device memory first (where H's are
    /// in a proof), and the MSM's own time, without that copy: for benchmarks.
    pub fn msm_scalars_on_device(
        &self,
        guard: &DeviceGuard<'_>,
        scalars: &[blstrs::Scalar],
    ) -> Result<(blstrs::G1Projective, Duration), CudaError> {
        self.bases.check(guard)?;
        let n = scalars.len() as u64;
        let _call = guard.alloc(
            "G1 MSM, scalars on the device",
            n * vram::FR_BYTES + vram::msm_call(n, self.bases.n as u64, vram::G1, false),
        )?;
        let mut out = <blstrs::G1Projective as group::Group>::identity();
        let took = self.bases.msm_device_scalars(
            guard,
            scalars,
            AsMut::<blst::blst_p1>::as_mut(&mut out),
        )?;
        Ok((out, took))
    }
}

/// G2 bases kept on a device.
#[derive(Debug)]
pub struct ResidentG2 {
    bases: ResidentBases,
    _mem: VramReservation,
}

impl ResidentG2 {
    /// Uploads `bases` to `device` (memory reserved through `guard`, checked to be the
    /// device's, first).
    pub fn upload(
        device: &CudaDevice,
        guard: &DeviceGuard<'_>,
        bases: &[cuzk_groth16::G2Base],
    ) -> Result<Self, CudaError> {
        let held = device.held(guard)?;
        let sm = device.info().sm_count as u64;
        let mem = held.alloc(
            "resident G2 bases",
            vram::msm_persistent(bases.len() as u64, vram::G2, sm, true),
        )?;
        Ok(ResidentG2 {
            bases: ResidentBases::upload(held, bases, true)?,
            _mem: mem,
        })
    }

    /// `sum scalars[i] * bases[i]` over the first `scalars.len()` bases.
    pub fn msm(
        &self,
        guard: &DeviceGuard<'_>,
        scalars: &[blstrs::Scalar],
    ) -> Result<blstrs::G2Projective, CudaError> {
        self.bases.check(guard)?;
        let _call = guard.alloc(
            "G2 MSM scalars",
            vram::msm_call(scalars.len() as u64, self.bases.n as u64, vram::G2, false),
        )?;
        let mut out = <blstrs::G2Projective as group::Group>::identity();
        self.bases
            .msm(guard, scalars, AsMut::<blst::blst_p2>::as_mut(&mut out))?;
        Ok(out)
    }

    /// As [`ResidentG1::split_msm`], in G2.
    pub fn split_msm(
        &self,
        device: &CudaDevice,
        guard: &DeviceGuard<'_>,
        scalars: &cuzk_groth16::SplitScalars,
    ) -> Result<(blstrs::G2Projective, cuzk_groth16::DeviceSpan), CudaError> {
        let held = device.held(guard)?;
        let mut out = <blstrs::G2Projective as group::Group>::identity();
        let t = split_call(held, &self.bases, scalars, vram::G2, |chunk| {
            self.bases.split_msm(
                guard,
                scalars,
                chunk,
                AsMut::<blst::blst_p2>::as_mut(&mut out),
            )
        })?;
        Ok((out, t))
    }
}
