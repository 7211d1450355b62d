//! Witness-only synthesis.
//!
//! `WitnessCs` computes the assignment and ignores `enforce`: with a recorded
//! [`Pce`](crate::Pce) the constraints are already known, so building linear combinations
//! would be wasted work. It also implements bellpepper's witness-generator hooks, so gadgets
//! that can compute their witness directly (neptune's Poseidon, for one) skip their
//! constraint-building path entirely.
//!
//! Every allocation passes a [`gate::checkpoint`](crate::gate::checkpoint): ordinary
//! synthesis stops there while urgent work holds the gate.
//!
//! Layout: the constant one is input 0 (added by [`synthesize_witness`]); `extend` appends a
//! child's inputs after the first (its temporary ONE) and all its aux, the mapping the
//! recording system uses.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;

use rayon::prelude::*;

use crate::assignment::Witness;
use crate::error::{Error, Result};

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

/// The witness of a circuit made of a header followed by independent, equally shaped units
/// (PoRep's challenges, for one), synthesized in parallel.
///
/// `one(u)` returns the witness of the circuit with the same header and unit `u` alone. The
/// full circuit has `inputs` inputs and `aux` aux variables (its recorded sizes), so each unit
/// holds `(aux - one.aux) / (count - 1)` aux and the header the rest of `one(i)`; the result is
/// the first witness followed by the unit part of every later one, which is the order a
/// sequential synthesis allocates in. Sizes that do not divide, and header copies that differ
/// between units, are errors: such a circuit is not separable this way.
pub fn synthesize_witness_units<T, F>(
    units: Vec<T>,
    inputs: usize,
    aux: usize,
    one: F,
) -> Result<Witness>
where
    T: Send,
    F: Fn(T) -> Result<Witness> + Sync,
{
    let count = units.len();
    if count == 0 {
        return Err(Error::LayoutMismatch("a circuit of zero units".into()));
    }
    let parts: Vec<Witness> = units.into_par_iter().map(&one).collect::<Result<_>>()?;
    let (first, rest) = parts.split_first().expect("units > 0");
    if rest.is_empty() {
        return Ok(parts.into_iter().next().expect("one part"));
    }
    let split = |total: usize, one: usize, what: &str| -> Result<(usize, usize)> {
        let extra = total
            .checked_sub(one)
            .filter(|e| e % (count - 1) == 0 && e / (count - 1) <= one)
            .ok_or_else(|| {
                Error::LayoutMismatch(format!(
                    "{count} units do not divide {total} {what} (one unit's circuit has {one})"
                ))
            })?;
        let unit = extra / (count - 1);
        Ok((one - unit, unit))
    };
    let (h_in, _) = split(inputs, first.inputs.len(), "inputs")?;
    let (h_aux, _) = split(aux, first.aux.len(), "aux")?;
    for (i, p) in rest.iter().enumerate() {
        if p.inputs.len() != first.inputs.len()
            || p.aux.len() != first.aux.len()
            || p.inputs[..h_in] != first.inputs[..h_in]
            || p.aux[..h_aux] != first.aux[..h_aux]
        {
            return Err(Error::LayoutMismatch(format!(
                "unit {} does not share unit 0's header and shape",
                i + 1
            )));
        }
    }
    let mut w = Witness {
        inputs: Vec::with_capacity(inputs),
        aux: Vec::with_capacity(aux),
    };
    for (i, p) in parts.into_iter().enumerate() {
        let (si, sa) = if i == 0 { (0, 0) } else { (h_in, h_aux) };
        w.inputs.extend_from_slice(&p.inputs[si..]);
        w.aux.extend_from_slice(&p.aux[sa..]);
    }
    Ok(w)
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
        crate::gate::checkpoint();
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
        crate::gate::checkpoint();
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
        crate::gate::checkpoint();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A header (one input, two aux) and one unit per entry of `units` (one input, three aux
    /// that depend on the header).
    struct Units {
        seed: u64,
        units: Vec<u64>,
    }

    impl Circuit<Scalar> for Units {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let x = Scalar::from(self.seed);
            cs.alloc_input(|| "x", || Ok(x))?;
            cs.alloc(|| "x2", || Ok(x.square()))?;
            cs.alloc(|| "x3", || Ok(x.square() * x))?;
            for u in self.units {
                let v = Scalar::from(u) + x;
                cs.alloc(|| "v", || Ok(v))?;
                cs.alloc_input(|| "u", || Ok(Scalar::from(u)))?;
                cs.alloc(|| "v2", || Ok(v.square()))?;
                cs.alloc(|| "vx", || Ok(v * x))?;
            }
            Ok(())
        }
    }

    fn sequential(seed: u64, units: &[u64]) -> Witness {
        synthesize_witness(Units {
            seed,
            units: units.to_vec(),
        })
        .unwrap()
    }

    #[test]
    fn units_in_parallel_equal_sequential_synthesis() {
        let units = [5u64, 7, 11, 13, 17];
        let full = sequential(3, &units);
        let split =
            synthesize_witness_units(units.to_vec(), full.inputs.len(), full.aux.len(), |i| {
                Ok(sequential(3, &[i]))
            })
            .unwrap();
        assert_eq!(split.inputs, full.inputs);
        assert_eq!(split.aux, full.aux);
        let one = synthesize_witness_units(vec![5u64], 3, 5, |u| Ok(sequential(3, &[u]))).unwrap();
        assert_eq!(one.aux, sequential(3, &units[..1]).aux);
    }

    #[test]
    fn units_that_do_not_share_a_header_are_refused() {
        let units = [5u64, 7, 11];
        let full = sequential(3, &units);
        let err =
            synthesize_witness_units(units.to_vec(), full.inputs.len(), full.aux.len(), |i| {
                Ok(sequential(i, &[i]))
            })
            .unwrap_err();
        assert!(err.to_string().contains("header"), "{err}");
        let err =
            synthesize_witness_units(units.to_vec(), full.inputs.len(), full.aux.len() + 1, |i| {
                Ok(sequential(3, &[i]))
            })
            .unwrap_err();
        assert!(err.to_string().contains("do not divide"), "{err}");
    }
}
