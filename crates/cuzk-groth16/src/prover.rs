//! The split Groth16 API: synthesize circuits into assignments, then prove assignments.
//!
//! ```text
//! synthesize(&pce, circuits) -> Vec<ProvingAssignment>      (CPU: witness + PCE mat-vec)
//! prove(&backend, &params, &assignment, r, s) -> Proof       (backend: NTT + MSMs)
//! ```
//!
//! `r` and `s` are the proof's blinding factors; tests inject them to get deterministic
//! proofs, [`prove_random`] draws them from an RNG.

use std::time::{Duration, Instant};

use bellpepper_core::Circuit;
use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;

use crate::assignment::ProvingAssignment;
use crate::backend::ProvingBackend;
use crate::device::DeviceGuard;
use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::pce::Pce;
use crate::proof::Proof;
use crate::split::SplitScalars;
use crate::srs::ParameterSource;
use crate::witness::synthesize_witness;

/// Synthesizes circuits of the shape `pce` records: witnesses in parallel, then a, b, c by the
/// PCE's sparse products.
pub fn synthesize<C: Circuit<Scalar> + Send>(
    pce: &Pce,
    circuits: Vec<C>,
) -> Result<Vec<ProvingAssignment>> {
    circuits
        .into_par_iter()
        .map(|c| pce.evaluate(synthesize_witness(c)?))
        .collect()
}

/// Where a proof's time went on the backend.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProveTimings {
    /// Computing H (the NTTs and the pointwise step; where the backend computes H where its
    /// bases are, H's MSM too).
    pub ntt: Duration,
    /// The multi-scalar multiplications (the other four where H's is fused with H).
    pub msm: Duration,
    /// The device's own timeline of the proof, where the backend measures one.
    pub device: Option<DeviceTimeline>,
}

/// One device operation's timeline: intervals in milliseconds from its first command,
/// measured on the device (CUDA events); a stage that did not run is `(0, 0)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceSpan {
    /// Host-to-device copies.
    pub upload: (f32, f32),
    /// Kernels other than Pippenger: H's NTTs and pointwise step; a split MSM's sum of ones.
    pub compute: (f32, f32),
    /// Pippenger: H's MSM; a split MSM's tail.
    pub msm: (f32, f32),
    /// The operation on the device, first command to last.
    pub wall: f32,
}

/// A proof's device timeline: H (copies, NTTs and, fused, its MSM) and the other four MSMs,
/// each one device operation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceTimeline {
    /// H and its MSM.
    pub h: DeviceSpan,
    /// L.
    pub l: DeviceSpan,
    /// A.
    pub a: DeviceSpan,
    /// B in G2.
    pub b_g2: DeviceSpan,
    /// B in G1.
    pub b_g1: DeviceSpan,
}

impl DeviceTimeline {
    /// The operations in proof order, named.
    pub fn spans(&self) -> [(&'static str, &DeviceSpan); 5] {
        [
            ("H", &self.h),
            ("L", &self.l),
            ("A", &self.a),
            ("B G2", &self.b_g2),
            ("B G1", &self.b_g1),
        ]
    }

    /// The device's busy time: the operations' walls added up.
    pub fn busy(&self) -> Duration {
        let ms: f32 = self.spans().iter().map(|(_, s)| s.wall).sum();
        Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3)
    }
}

/// Proves one assignment with the given blinding factors, under the lock of the backend's
/// device (these free functions are for callers that schedule nothing; a scheduler holds the
/// guard itself and calls the [`ProvingBackend`] methods).
pub fn prove<B: ProvingBackend + ?Sized>(
    backend: &B,
    params: &dyn ParameterSource,
    assignment: &ProvingAssignment,
    r: Scalar,
    s: Scalar,
) -> Result<Proof> {
    Ok(backend
        .prove(&backend.device().lock(), params, assignment, r, s)?
        .0)
}

/// Proves one assignment and reports where the time went, under the lock of the backend's
/// device.
pub fn prove_timed<B: ProvingBackend + ?Sized>(
    backend: &B,
    params: &dyn ParameterSource,
    assignment: &ProvingAssignment,
    r: Scalar,
    s: Scalar,
) -> Result<(Proof, ProveTimings)> {
    backend.prove(&backend.device().lock(), params, assignment, r, s)
}

/// Proves one assignment with blinding factors drawn from `rng`, under the lock of the
/// backend's device.
pub fn prove_random<B: ProvingBackend + ?Sized, R: RngCore>(
    backend: &B,
    params: &dyn ParameterSource,
    assignment: &ProvingAssignment,
    rng: &mut R,
) -> Result<Proof> {
    let r = Scalar::random(&mut *rng);
    let s = Scalar::random(&mut *rng);
    Ok(backend
        .prove(&backend.device().lock(), params, assignment, r, s)?
        .0)
}

/// Checks that `params` were generated for the circuit `assignment` belongs to.
pub fn check_params(params: &dyn ParameterSource, pa: &ProvingAssignment) -> Result<()> {
    let w = &pa.witness;
    let d = &pa.density;
    let n = 1usize << Domain::log_size_for(pa.a.len())?;
    let checks = [
        ("vk.ic", params.vk().ic.len(), w.inputs.len()),
        ("h", params.h().len(), n - 1),
        ("l", params.l().len(), w.aux.len()),
        ("a", params.a().len(), w.inputs.len() + d.a_aux.count()),
        (
            "b_g1",
            params.b_g1().len(),
            d.b_input.count() + d.b_aux.count(),
        ),
        (
            "b_g2",
            params.b_g2().len(),
            d.b_input.count() + d.b_aux.count(),
        ),
    ];
    for (what, have, want) in checks {
        if have != want {
            return Err(Error::ParamsMismatch(format!(
                "{what} holds {have} points, the circuit needs {want}"
            )));
        }
    }
    if d.a_aux.len() != w.aux.len()
        || d.b_aux.len() != w.aux.len()
        || d.b_input.len() != w.inputs.len()
    {
        return Err(Error::LayoutMismatch(
            "densities do not cover the witness".into(),
        ));
    }
    if bool::from(params.vk().delta_g1.is_identity() | params.vk().delta_g2.is_identity()) {
        return Err(Error::ParamsMismatch(
            "delta is the identity (subverted parameters)".into(),
        ));
    }
    Ok(())
}

/// Which G1 query an MSM runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum G1Query {
    /// H: one point per power of x below `n - 1`.
    H,
    /// L: one point per aux variable.
    L,
    /// A: inputs, then aux present in A.
    A,
    /// B in G1: inputs present in B, then aux present in B.
    BG1,
}

/// The MSMs of one proof, named by query. A backend that keeps copies of the bases (on a
/// device) implements this over its copies; [`SourceMsm`] runs them over a
/// [`ParameterSource`].
pub trait QueryMsm {
    /// `sum scalars[i] * query[i]`, over the first `scalars.len()` points of `query`.
    fn g1(&self, query: G1Query, scalars: &[Scalar]) -> Result<G1Projective>;
    /// `sum scalars[i] * b_g2[i]`.
    fn b_g2(&self, scalars: &[Scalar]) -> Result<G2Projective>;
    /// Whether the L, A and B MSMs take their scalars split by value
    /// ([`g1_split`](Self::g1_split), [`b_g2_split`](Self::b_g2_split)): the prover then
    /// hands over the assignment's [`SplitQueries`](crate::SplitQueries) and gathers no dense A and B scalars.
    fn takes_split(&self) -> bool {
        false
    }
    /// `sum scalars[i] * query[i]` over split scalars; the default runs [`Self::g1`] on the
    /// dense scalars they stand for.
    fn g1_split(&self, query: G1Query, scalars: &SplitScalars) -> Result<G1Projective> {
        self.g1(query, &scalars.to_dense())
    }
    /// `sum scalars[i] * b_g2[i]` over split scalars; the default runs [`Self::b_g2`].
    fn b_g2_split(&self, scalars: &SplitScalars) -> Result<G2Projective> {
        self.b_g2(&scalars.to_dense())
    }
    /// The device timeline of the operations run so far, for a backend that measures one.
    fn device_timeline(&self) -> Option<DeviceTimeline> {
        None
    }
    /// H's MSM computed straight from a, b and c, for a backend that computes H where its
    /// H bases are; `None` (the default): the prover computes H, then calls [`Self::g1`].
    fn h_from_abc(
        &self,
        _a: &[Scalar],
        _b: &[Scalar],
        _c: &[Scalar],
    ) -> Option<Result<G1Projective>> {
        None
    }
}

/// The MSMs of a backend over a parameter source's points.
#[derive(Clone, Copy)]
pub struct SourceMsm<'a, B: ProvingBackend + ?Sized> {
    /// Computes the MSMs.
    pub backend: &'a B,
    /// The lock of the backend's device, held for the proof.
    pub guard: &'a DeviceGuard<'a>,
    /// Holds the bases.
    pub params: &'a dyn ParameterSource,
}

impl<B: ProvingBackend + ?Sized> std::fmt::Debug for SourceMsm<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceMsm")
            .field("backend", &self.backend.name())
            .finish_non_exhaustive()
    }
}

impl<B: ProvingBackend + ?Sized> QueryMsm for SourceMsm<'_, B> {
    fn g1(&self, query: G1Query, scalars: &[Scalar]) -> Result<G1Projective> {
        let bases = match query {
            G1Query::H => self.params.h(),
            G1Query::L => self.params.l(),
            G1Query::A => self.params.a(),
            G1Query::BG1 => self.params.b_g1(),
        };
        let bases = bases.get(..scalars.len()).ok_or_else(|| {
            Error::ParamsMismatch(format!(
                "{query:?} query has {} points, {} scalars",
                bases.len(),
                scalars.len()
            ))
        })?;
        self.backend.msm_g1(self.guard, bases, scalars)
    }
    fn b_g2(&self, scalars: &[Scalar]) -> Result<G2Projective> {
        self.backend.msm_g2(self.guard, self.params.b_g2(), scalars)
    }
}

/// A proof through the backend's individual operations (`compute_h`, `msm_g1`, `msm_g2`),
/// calling `yield_point` between them: the default [`ProvingBackend::prove_yielding`].
pub fn prove_composed<B: ProvingBackend + ?Sized>(
    backend: &B,
    guard: &DeviceGuard<'_>,
    params: &dyn ParameterSource,
    pa: &ProvingAssignment,
    r: Scalar,
    s: Scalar,
    yield_point: &YieldPoint<'_>,
) -> Result<(Proof, ProveTimings)> {
    prove_with(
        &|a, b, c| backend.compute_h(guard, a, b, c),
        &SourceMsm {
            backend,
            guard,
            params,
        },
        params,
        pa,
        r,
        s,
        yield_point,
    )
}

/// Called by a proof between its operations (after H, after each MSM but the last), where
/// the proof holds no device working memory: a scheduler may run more urgent work on the same
/// device there, under the same guard, before the proof goes on. An error stops the proof
/// there and is its result (a cancelled job's proof ends at its next yield point).
pub type YieldPoint<'a> = dyn Fn() -> Result<()> + 'a;

/// A yield point that yields to nothing.
pub fn no_yield() -> Result<()> {
    Ok(())
}

fn timed(f: &YieldPoint<'_>) -> Result<Duration> {
    let t = Instant::now();
    f()?;
    Ok(t.elapsed())
}

/// Computes H from a, b, c (as [`ProvingBackend::compute_h`]).
pub type ComputeH<'a> = dyn Fn(&[Scalar], &[Scalar], &[Scalar]) -> Result<Vec<Scalar>> + 'a;

/// A proof from an H computation and the five MSMs by query, combined with the verifying
/// key's points: the composition every backend shares. `yield_point` runs between the
/// operations; the time spent in it is not counted in the timings.
pub fn prove_with(
    compute_h: &ComputeH<'_>,
    msm: &dyn QueryMsm,
    params: &dyn ParameterSource,
    pa: &ProvingAssignment,
    r: Scalar,
    s: Scalar,
    yield_point: &YieldPoint<'_>,
) -> Result<(Proof, ProveTimings)> {
    check_params(params, pa)?;
    let w = &pa.witness;
    let d = &pa.density;

    // `ntt` is H alone, or H with its MSM where the backend fuses them.
    let t0 = Instant::now();
    let (h_acc, ntt, t1) = match msm.h_from_abc(&pa.a, &pa.b, &pa.c) {
        Some(h_acc) => (h_acc?, t0.elapsed(), Instant::now()),
        None => {
            let h = compute_h(&pa.a, &pa.b, &pa.c)?;
            let ntt = t0.elapsed();
            yield_point()?;
            let t1 = Instant::now();
            (msm.g1(G1Query::H, &h)?, ntt, t1)
        }
    };
    let mut yielded = timed(yield_point)?;
    let (l_acc, a_acc, b_g2_acc, b_g1_acc);
    if msm.takes_split() {
        let split = pa.split()?;
        l_acc = msm.g1_split(G1Query::L, &split.l)?;
        yielded += timed(yield_point)?;
        a_acc = msm.g1_split(G1Query::A, &split.a)?;
        yielded += timed(yield_point)?;
        b_g2_acc = msm.b_g2_split(&split.b)?;
        yielded += timed(yield_point)?;
        b_g1_acc = if bool::from(r.is_zero()) {
            G1Projective::identity()
        } else {
            msm.g1_split(G1Query::BG1, &split.b)?
        };
    } else {
        l_acc = msm.g1(G1Query::L, &w.aux)?;
        yielded += timed(yield_point)?;

        // A: every input, then the aux present in A (the query's layout).
        let mut a_scalars = w.inputs.clone();
        a_scalars.extend(d.a_aux.iter_ones().map(|i| w.aux[i]));
        a_acc = msm.g1(G1Query::A, &a_scalars)?;
        drop(a_scalars);
        yielded += timed(yield_point)?;

        // B: inputs present in B, then aux present in B.
        let mut b_scalars: Vec<Scalar> = d.b_input.iter_ones().map(|i| w.inputs[i]).collect();
        b_scalars.extend(d.b_aux.iter_ones().map(|i| w.aux[i]));
        b_g2_acc = msm.b_g2(&b_scalars)?;
        yielded += timed(yield_point)?;
        b_g1_acc = if bool::from(r.is_zero()) {
            G1Projective::identity()
        } else {
            msm.g1(G1Query::BG1, &b_scalars)?
        };
    }

    let msm_device = msm.device_timeline();
    let msm = t1.elapsed().saturating_sub(yielded);

    let vk = params.vk();
    let g_a = vk.delta_g1 * r + vk.alpha_g1 + a_acc;
    let g_b = vk.delta_g2 * s + G2Projective::from(vk.beta_g2) + b_g2_acc;
    let g_c = a_acc * s
        + b_g1_acc * r
        + vk.delta_g1 * (r * s)
        + vk.alpha_g1 * s
        + vk.beta_g1 * r
        + h_acc
        + l_acc;
    let proof = Proof {
        a: g_a.to_affine(),
        b: g_b.to_affine(),
        c: g_c.to_affine(),
    };
    Ok((
        proof,
        ProveTimings {
            ntt,
            msm,
            device: msm_device,
        },
    ))
}
