//! What synthesis hands to the prover: the witness, the A/B/C evaluations and the densities.

use std::sync::{Arc, OnceLock};

use blstrs::Scalar;

use crate::bits::DensityBits;
use crate::error::Result;
use crate::pin::{HostPinner, PinnedRegion, PIN_MIN_BYTES};
use crate::split::SplitQueries;

/// Which variables appear in the A and B queries. Shared by every circuit of one shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    /// Aux variables with a nonzero coefficient in some A combination.
    pub a_aux: DensityBits,
    /// Input variables with a nonzero coefficient in some B combination.
    pub b_input: DensityBits,
    /// Aux variables with a nonzero coefficient in some B combination.
    pub b_aux: DensityBits,
}

impl Density {
    /// Merges the densities of a child system appended at `input_base` / `aux_base`: the
    /// child's input 0 is its temporary ONE and maps onto input 0.
    pub fn extend(&mut self, child: &Density, input_base: usize, aux_base: usize) {
        for i in child.a_aux.iter_ones() {
            self.a_aux.set(aux_base + i);
        }
        for i in child.b_aux.iter_ones() {
            self.b_aux.set(aux_base + i);
        }
        for i in child.b_input.iter_ones() {
            self.b_input
                .set(if i == 0 { 0 } else { input_base + i - 1 });
        }
    }
}

/// A full assignment of a circuit's variables. `inputs[0]` is the constant one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    /// Public inputs, the constant one first.
    pub inputs: Vec<Scalar>,
    /// Auxiliary (private) variables.
    pub aux: Vec<Scalar>,
}

/// One circuit ready to prove: its witness and the evaluations a = A.w, b = B.w, c = C.w, one
/// entry per constraint (input-consistency constraints included).
///
/// While a, b and c are pinned ([`ProvingAssignment::pin_evaluations`]) they are not resized;
/// the pins are declared first, so they are dropped (unpinned) before the vectors are freed.
#[derive(Debug)]
pub struct ProvingAssignment {
    /// Pinned ranges of a, b and c (empty when unpinned).
    pins: Vec<Box<dyn PinnedRegion>>,
    /// The witness.
    pub witness: Witness,
    /// A.w
    pub a: Vec<Scalar>,
    /// B.w
    pub b: Vec<Scalar>,
    /// C.w
    pub c: Vec<Scalar>,
    /// Query densities of the circuit's shape.
    pub density: Arc<Density>,
    /// The L, A and B scalars split by value, made once (see [`ProvingAssignment::split`]).
    split: OnceLock<SplitQueries>,
}

impl Clone for ProvingAssignment {
    /// A copy with its own (unpinned) vectors.
    fn clone(&self) -> Self {
        ProvingAssignment {
            pins: Vec::new(),
            witness: self.witness.clone(),
            a: self.a.clone(),
            b: self.b.clone(),
            c: self.c.clone(),
            density: self.density.clone(),
            split: self.split.clone(),
        }
    }
}

impl ProvingAssignment {
    /// An assignment from its parts; the split scalars are made on first use.
    pub fn new(
        witness: Witness,
        a: Vec<Scalar>,
        b: Vec<Scalar>,
        c: Vec<Scalar>,
        density: Arc<Density>,
    ) -> Self {
        ProvingAssignment {
            pins: Vec::new(),
            witness,
            a,
            b,
            c,
            density,
            split: OnceLock::new(),
        }
    }

    /// As [`new`](Self::new), with the split scalars already made.
    pub(crate) fn with_split(
        witness: Witness,
        abc: [Vec<Scalar>; 3],
        density: Arc<Density>,
        split: SplitQueries,
    ) -> Self {
        let [a, b, c] = abc;
        ProvingAssignment {
            pins: Vec::new(),
            witness,
            a,
            b,
            c,
            density,
            split: OnceLock::from(split),
        }
    }

    /// Pins a, b and c through `pinner` (those of at least [`PIN_MIN_BYTES`]; once), so that
    /// a device copies them at full speed; they are unpinned when the assignment is dropped.
    /// Returns how many of the three are pinned; one the pinner refuses stays pageable.
    pub fn pin_evaluations(&mut self, pinner: &dyn HostPinner) -> usize {
        if self.pins.is_empty() {
            for v in [&self.a, &self.b, &self.c] {
                let bytes = size_of_val(v.as_slice());
                if bytes >= PIN_MIN_BYTES {
                    self.pins.extend(pinner.pin(v.as_ptr() as usize, bytes));
                }
            }
        }
        self.pins.len()
    }

    /// Whether a, b or c is pinned.
    pub fn is_pinned(&self) -> bool {
        !self.pins.is_empty()
    }

    /// The L, A and B scalars split by value, for MSMs that sum the ones apart: made on
    /// first use ([`crate::Pce::evaluate`] makes them beside a, b and c, in the synthesis
    /// lane) and kept. The witness and densities must not change afterwards.
    pub fn split(&self) -> Result<&SplitQueries> {
        if let Some(s) = self.split.get() {
            return Ok(s);
        }
        let s = SplitQueries::new(&self.witness, &self.density)?;
        Ok(self.split.get_or_init(|| s))
    }

    /// The public inputs without the leading constant one, as a verifier takes them.
    pub fn public_inputs(&self) -> &[Scalar] {
        self.witness.inputs.get(1..).unwrap_or(&[])
    }
}
