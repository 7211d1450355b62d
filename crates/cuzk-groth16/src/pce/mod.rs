//! The pre-compiled constraint evaluator (PCE).
//!
//! A circuit's R1CS matrices depend only on its shape, not on its witness. Recording them once
//! ([`Pce::extract`]) lets every later proof of that shape skip building linear combinations:
//! synthesis only computes the witness ([`WitnessCs`](crate::WitnessCs)) and a, b, c come
//! from three parallel sparse matrix-vector products ([`Pce::evaluate`]).
//!
//! The recorded system is exactly the one bellperson's prover builds: the constant one is
//! input 0, every input gets a constraint `input * 0 = 0` after the circuit's own, and the
//! density bitmaps mark variables with a nonzero coefficient in A (aux) and B (inputs, aux).

mod file;
pub(crate) mod matrix;
mod record;

use std::sync::Arc;

use bellpepper_core::{Circuit, ConstraintSystem};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

pub use file::{PceHeader, PCE_FORMAT_VERSION};
pub use matrix::{CoeffIndices, Matrix};
pub use record::{Grow, RecordingCs, SequentialRecordingCs};

use crate::assignment::{Density, ProvingAssignment, Witness};
use crate::error::{Error, Result};
use crate::split::SplitQueries;

/// A circuit shape's recorded constraint matrices.
#[derive(Clone, Debug)]
pub struct Pce {
    circuit_id: String,
    num_inputs: usize,
    num_aux: usize,
    coeffs: Vec<Scalar>,
    a: Matrix,
    b: Matrix,
    c: Matrix,
    density: Arc<Density>,
    fingerprint: [u8; 32],
}

/// Sizes of a PCE, for logs, status pages and benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PceStats {
    /// Public inputs, the constant one included.
    pub num_inputs: usize,
    /// Auxiliary variables.
    pub num_aux: usize,
    /// Constraints, input-consistency constraints included.
    pub num_constraints: usize,
    /// Nonzeros of A, B and C together.
    pub nnz: usize,
    /// Distinct coefficient values.
    pub num_coeffs: usize,
    /// Bytes the matrices, coefficient table and densities take (in memory and on disk).
    pub bytes: usize,
}

impl PceStats {
    /// Average bytes per nonzero.
    pub fn bytes_per_nonzero(&self) -> f64 {
        self.bytes as f64 / self.nnz.max(1) as f64
    }
}

impl Pce {
    /// Records the constraint structure of `circuit` under the name `circuit_id`.
    ///
    /// The circuit's assignment closures are not called, so a circuit without witness values
    /// records the same matrices as one with them. Circuits that synthesize through child
    /// systems build them in parallel.
    pub fn extract<C: Circuit<Scalar>>(circuit_id: &str, circuit: C) -> Result<Self> {
        let mut cs = RecordingCs::new();
        let done = synthesize_into(&mut cs, circuit);
        Self::sealed(circuit_id, cs, done)
    }

    /// [`Pce::extract`], asking `grow` for the recording's host memory before it is allocated
    /// (see [`RecordingCs::within`]); a refusal ends the extraction with [`Error::TooLarge`]
    /// naming it. The recording is sequential ([`SequentialRecordingCs`]) so that all of it
    /// is asked for: one thread, also for circuits [`Pce::extract`] builds in parallel.
    pub fn extract_within<C: Circuit<Scalar>>(
        circuit_id: &str,
        circuit: C,
        grow: &mut Grow<'_>,
    ) -> Result<Self> {
        let mut cs = SequentialRecordingCs(RecordingCs::within(grow));
        let done = synthesize_into(&mut cs, circuit);
        Self::sealed(circuit_id, cs.0, done)
    }

    fn sealed(
        circuit_id: &str,
        cs: RecordingCs<'_>,
        done: std::result::Result<(), bellpepper_core::SynthesisError>,
    ) -> Result<Self> {
        if let Some(e) = cs.refused() {
            return Err(Error::TooLarge(format!(
                "extracting {circuit_id}: host memory refused: {e}"
            )));
        }
        done?;
        let rec = cs.finish().map_err(Error::TooLarge)?;
        Ok(Self::from_parts(
            circuit_id.to_owned(),
            rec.num_inputs,
            rec.num_aux,
            rec.coeffs,
            [rec.a, rec.b, rec.c],
            rec.density,
        ))
    }

    fn from_parts(
        circuit_id: String,
        num_inputs: usize,
        num_aux: usize,
        coeffs: Vec<Scalar>,
        [a, b, c]: [Matrix; 3],
        density: Density,
    ) -> Self {
        let mut pce = Pce {
            circuit_id,
            num_inputs,
            num_aux,
            coeffs,
            a,
            b,
            c,
            density: Arc::new(density),
            fingerprint: [0; 32],
        };
        pce.fingerprint = file::fingerprint(&pce);
        pce
    }

    /// The name this PCE was recorded under.
    pub fn circuit_id(&self) -> &str {
        &self.circuit_id
    }

    /// A hash of the recorded structure (counts, coefficients, matrices, densities). Two PCEs
    /// with equal fingerprints describe the same constraint system.
    pub fn fingerprint(&self) -> [u8; 32] {
        self.fingerprint
    }

    /// Public inputs, the constant one included.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Auxiliary variables.
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }

    /// Constraints, input-consistency constraints included.
    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }

    /// The A, B and C matrices.
    pub fn matrices(&self) -> [&Matrix; 3] {
        [&self.a, &self.b, &self.c]
    }

    /// The coefficient table (index 0 is 1, index 1 is -1).
    pub fn coefficients(&self) -> &[Scalar] {
        &self.coeffs
    }

    /// The query densities.
    pub fn density(&self) -> &Arc<Density> {
        &self.density
    }

    /// Sizes, for logs and benchmarks.
    pub fn stats(&self) -> PceStats {
        PceStats {
            num_inputs: self.num_inputs,
            num_aux: self.num_aux,
            num_constraints: self.num_constraints(),
            nnz: self.a.nnz() + self.b.nnz() + self.c.nnz(),
            num_coeffs: self.coeffs.len(),
            bytes: file::memory_len(&file::Counts::of(self)) as usize,
        }
    }

    /// Checks that `witness` has the layout this PCE records.
    pub fn check_witness(&self, witness: &Witness) -> Result<()> {
        if witness.inputs.len() != self.num_inputs || witness.aux.len() != self.num_aux {
            return Err(Error::LayoutMismatch(format!(
                "circuit '{}' records {} inputs and {} aux variables, the witness has {} and {}",
                self.circuit_id,
                self.num_inputs,
                self.num_aux,
                witness.inputs.len(),
                witness.aux.len()
            )));
        }
        Ok(())
    }

    /// Computes a = A.w, b = B.w, c = C.w for a witness of this shape.
    pub fn evaluate(&self, witness: Witness) -> Result<ProvingAssignment> {
        self.check_witness(&witness)?;
        let n = self.num_constraints();
        // Filled in parallel: a serial fill of three 4 GiB vectors (32 GiB sectors) costs
        // seconds on one core, its page faults included.
        let zeroed = || {
            let mut v = Vec::with_capacity(n);
            v.par_extend(rayon::iter::repeat_n(Scalar::ZERO, n));
            v
        };
        let mut abc = [zeroed(), zeroed(), zeroed()];
        let [a, b, c] = &mut abc;
        let w = &witness;
        let (split, _) = rayon::join(
            || SplitQueries::new(w, &self.density),
            || {
                rayon::join(
                    || self.a.mul_vec(&self.coeffs, &w.inputs, &w.aux, a),
                    || {
                        rayon::join(
                            || self.b.mul_vec(&self.coeffs, &w.inputs, &w.aux, b),
                            || self.c.mul_vec(&self.coeffs, &w.inputs, &w.aux, c),
                        )
                    },
                )
            },
        );
        Ok(ProvingAssignment::with_split(
            witness,
            abc,
            self.density.clone(),
            split?,
        ))
    }
}

/// Allocates the constant ONE as input 0, then synthesizes `circuit` into `cs`.
fn synthesize_into<CS: ConstraintSystem<Scalar>, C: Circuit<Scalar>>(
    cs: &mut CS,
    circuit: C,
) -> std::result::Result<(), bellpepper_core::SynthesisError> {
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(cs)
}
