//! Insecure Groth16 parameter generation from a recorded circuit, for tests and fixtures.
//!
//! **Never use these parameters for anything of value.** The trapdoor (tau, alpha, beta,
//! gamma, delta) comes from the caller's RNG; whoever knows the RNG's seed can forge proofs.
//!
//! The output is the same as bellperson's `generate_random_parameters` would produce for the
//! same trapdoor: QAP polynomials interpolated over the evaluation domain and evaluated at tau
//! through the Lagrange basis (`L_j(tau) = (tau^n - 1) / n * omega^j / (tau - omega^j)`), the
//! queries laid out and filtered by the recorded densities, written in the same file format.
//! Working from the PCE's matrices and fixed-base window tables makes it much faster than
//! re-synthesizing the circuit.

use std::time::{Duration, Instant};

use blstrs::{G1Projective, G2Projective, Scalar};
use ff::{BatchInvert, Field};
use group::Group;
use rand_core::RngCore;
use rayon::prelude::*;

use crate::backend::{CpuBackend, ProvingBackend};
use crate::device::DeviceGuard;
use crate::domain::{powers_into, Domain};
use crate::error::{Error, Result};
use crate::msm::{g1_affine, G1Base};
use crate::pce::matrix::INPUT_BIT;
use crate::pce::Pce;
use crate::srs::{Parameters, VerifyingKey};

/// Evaluations at tau of the QAP polynomials of every variable (inputs first, then aux).
struct QapAtTau {
    u: Vec<Scalar>,
    v: Vec<Scalar>,
    w: Vec<Scalar>,
}

fn lagrange_at(domain: &Domain, tau: Scalar) -> Result<Vec<Scalar>> {
    let n = domain.size();
    let z = tau.pow_vartime([n as u64]) - Scalar::ONE;
    if bool::from(z.is_zero()) {
        return Err(Error::Encoding(
            "tau fell on the evaluation domain; use another seed".into(),
        ));
    }
    let mut omega_pows = vec![Scalar::ZERO; n];
    powers_into(&mut omega_pows, domain.omega(), 0, Scalar::ONE);
    let mut denom: Vec<Scalar> = omega_pows.par_iter().map(|w| tau - w).collect();
    denom.par_chunks_mut(1 << 14).for_each(|c| {
        c.batch_invert();
    });
    let scale = z * domain.n_inv();
    Ok(omega_pows
        .par_iter()
        .zip(denom.par_iter())
        .map(|(w, d)| scale * w * d)
        .collect())
}

fn qap_at(pce: &Pce, lagrange: &[Scalar]) -> QapAtTau {
    let ni = pce.num_inputs();
    let nvars = ni + pce.num_aux();
    let table = pce.coefficients();
    let eval = |m: &crate::pce::Matrix| {
        let mut acc = vec![Scalar::ZERO; nvars];
        for (row, l) in m.each_row().zip(lagrange) {
            for (c, k) in row {
                let var = if c & INPUT_BIT != 0 {
                    (c ^ INPUT_BIT) as usize
                } else {
                    ni + c as usize
                };
                acc[var] += table[k as usize] * l;
            }
        }
        acc
    };
    let [a, b, c] = pce.matrices();
    let (u, (v, w)) = rayon::join(|| eval(a), || rayon::join(|| eval(b), || eval(c)));
    QapAtTau { u, v, w }
}

/// The secret values of a Groth16 setup. Whoever knows them can forge proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trapdoor {
    /// The evaluation point.
    pub tau: Scalar,
    /// alpha
    pub alpha: Scalar,
    /// beta
    pub beta: Scalar,
    /// gamma
    pub gamma: Scalar,
    /// delta
    pub delta: Scalar,
}

impl Trapdoor {
    /// A trapdoor drawn from `rng`, in the order tau, alpha, beta, gamma, delta.
    pub fn random<R: RngCore>(rng: &mut R) -> Self {
        let [tau, alpha, beta, gamma, delta] = [(); 5].map(|_| Scalar::random(&mut *rng));
        Trapdoor {
            tau,
            alpha,
            beta,
            gamma,
            delta,
        }
    }
}

/// Generates parameters for the circuit `pce` records, with a trapdoor drawn from `rng`.
/// Insecure by construction: for tests and test fixtures only.
pub fn generate_insecure_parameters<R: RngCore>(pce: &Pce, rng: &mut R) -> Result<Parameters> {
    generate_parameters_with(pce, &Trapdoor::random(rng))
}

/// Generates parameters for the circuit `pce` records with the given trapdoor, on the CPU.
pub fn generate_parameters_with(pce: &Pce, t: &Trapdoor) -> Result<Parameters> {
    let cpu = CpuBackend::new();
    let g = cpu.device().lock();
    Ok(generate_parameters_on(&cpu, &g, pce, t)?.0)
}

/// Where the time of a parameter generation went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GenerationTimings {
    /// The Lagrange basis at tau and the QAP polynomials of every variable evaluated there.
    pub qap: Duration,
    /// The G1 fixed-base multiplications (H, L, A, B and the verifying key's IC).
    pub g1: Duration,
    /// The G2 fixed-base multiplications (B).
    pub g2: Duration,
    /// G1 points made.
    pub g1_points: usize,
    /// G2 points made.
    pub g2_points: usize,
}

/// Generates parameters for the circuit `pce` records with the given trapdoor, running the
/// fixed-base multiplications on `backend` under `g` (its device's guard). Each query's
/// scalars are dropped once its points exist, so the scalars held shrink as the points grow.
pub fn generate_parameters_on(
    backend: &dyn ProvingBackend,
    g: &DeviceGuard<'_>,
    pce: &Pce,
    t: &Trapdoor,
) -> Result<(Parameters, GenerationTimings)> {
    g.check(backend.device())?;
    let mut timings = GenerationTimings::default();
    let started = Instant::now();
    let domain = Domain::for_size(pce.num_constraints())?;
    let n = domain.size();
    let ni = pce.num_inputs();
    let d = pce.density();
    let Trapdoor {
        tau,
        alpha,
        beta,
        gamma,
        delta,
    } = *t;
    let gamma_inv = Option::<Scalar>::from(gamma.invert())
        .ok_or_else(|| Error::Encoding("gamma is zero; use another seed".into()))?;
    let delta_inv = Option::<Scalar>::from(delta.invert())
        .ok_or_else(|| Error::Encoding("delta is zero; use another seed".into()))?;

    let lagrange = lagrange_at(&domain, tau)?;
    let qap = qap_at(pce, &lagrange);
    drop(lagrange);

    let combined =
        |i: usize, scale: Scalar| (beta * qap.u[i] + alpha * qap.v[i] + qap.w[i]) * scale;
    let ic_scalars: Vec<Scalar> = (0..ni)
        .into_par_iter()
        .map(|i| combined(i, gamma_inv))
        .collect();
    let l_scalars: Vec<Scalar> = (ni..qap.u.len())
        .into_par_iter()
        .map(|i| combined(i, delta_inv))
        .collect();
    let mut a_scalars: Vec<Scalar> = qap.u[..ni].to_vec();
    a_scalars.extend(d.a_aux.iter_ones().map(|i| qap.u[ni + i]));
    let mut b_scalars: Vec<Scalar> = d.b_input.iter_ones().map(|i| qap.v[i]).collect();
    b_scalars.extend(d.b_aux.iter_ones().map(|i| qap.v[ni + i]));
    drop(qap);
    let mut h_scalars = vec![Scalar::ZERO; n - 1];
    let z_tau = tau.pow_vartime([n as u64]) - Scalar::ONE;
    powers_into(&mut h_scalars, tau, 0, z_tau * delta_inv);
    timings.qap = started.elapsed();

    // A zero query scalar would write the point at infinity, which readers refuse: it means
    // the trapdoor hit a root of some polynomial (negligible) or a variable is unconstrained.
    for (what, v) in [
        ("h", &h_scalars),
        ("l", &l_scalars),
        ("a", &a_scalars),
        ("b", &b_scalars),
        ("ic", &ic_scalars),
    ] {
        if let Some(i) = v.par_iter().position_first(|x| bool::from(x.is_zero())) {
            return Err(Error::ParamsMismatch(format!(
                "query {what} entry {i} is zero: an unconstrained variable, or an unlucky seed"
            )));
        }
    }

    let g2_started = Instant::now();
    let b_g2 = backend.fixed_base_g2(g, &b_scalars)?;
    timings.g2 = g2_started.elapsed();
    timings.g2_points = b_g2.len();
    let g1_started = Instant::now();
    let mut g1_query = |scalars: Vec<Scalar>| -> Result<Vec<G1Base>> {
        timings.g1_points += scalars.len();
        backend.fixed_base_g1(g, &scalars)
    };
    let b_g1 = g1_query(b_scalars)?;
    let h = g1_query(h_scalars)?;
    let l = g1_query(l_scalars)?;
    let a = g1_query(a_scalars)?;
    let ic = g1_query(ic_scalars)?.iter().map(g1_affine).collect();
    timings.g1 = g1_started.elapsed();

    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    let vk = VerifyingKey {
        alpha_g1: (g1 * alpha).into(),
        beta_g1: (g1 * beta).into(),
        beta_g2: (g2 * beta).into(),
        gamma_g2: (g2 * gamma).into(),
        delta_g1: (g1 * delta).into(),
        delta_g2: (g2 * delta).into(),
        ic,
    };
    Ok((Parameters::new(vk, h, l, a, b_g1, b_g2), timings))
}
