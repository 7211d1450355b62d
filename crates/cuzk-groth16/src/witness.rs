//! Witness-only synthesis.
//!
//! `WitnessCs` computes the assignment and ignores `enforce`: with a recorded
//! [`Pce`](crate::Pce) the constraints are already known, so building linear combinations
//! would be wasted work. It also implements bellpepper's witness-generator hooks, so gadgets
//! that can compute their witness directly (neptune's Poseidon, for one) skip their
//! constraint-building path entirely.
//!
//! Layout: the constant one is input 0 (added by [`synthesize_witness`]); `extend` appends a
//! child's inputs after the first (its temporary ONE) and all its aux, the mapping the
//! recording system uses.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;

use crate::assignment::Witness;

/// A constraint system that only computes assignments.
#[derive(Debug, Default)]
pub struct WitnessCs {
    inputs: Vec<Scalar>,
    aux: Vec<Scalar>,
}

impl WitnessCs {
    /// The assignment computed so far.
    pub fn into_witness(self) -> Witness {
        Witness {
            inputs: self.inputs,
            aux: self.aux,
        }
    }
}

/// Runs `circuit` through a [`WitnessCs`] with the constant one allocated first.
pub fn synthesize_witness<C: Circuit<Scalar>>(circuit: C) -> Result<Witness, SynthesisError> {
    let mut cs = WitnessCs::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    Ok(cs.into_witness())
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    fn new() -> Self {
        Self::default()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_extensible() -> bool {
        true
    }

    fn extend(&mut self, other: &Self) {
        self.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or(&[]));
        self.aux.extend_from_slice(&other.aux);
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.inputs.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.aux.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let a0 = self.aux.len();
        let i0 = self.inputs.len();
        self.aux.resize(a0 + aux_n, Scalar::ZERO);
        self.inputs.resize(i0 + inputs_n, Scalar::ZERO);
        (&mut self.aux[a0..], &mut self.inputs[i0..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        let i0 = self.inputs.len();
        self.inputs.resize(i0 + n, Scalar::ZERO);
        &mut self.inputs[i0..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        let a0 = self.aux.len();
        self.aux.resize(a0 + n, Scalar::ZERO);
        &mut self.aux[a0..]
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.inputs
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.aux
    }
}
