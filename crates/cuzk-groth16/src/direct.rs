//! Direct synthesis: evaluating every linear combination as the circuit builds it.
//!
//! This is the path without a [`Pce`](crate::Pce): slower (each constraint allocates and
//! walks its linear combinations), but it needs no recording. It is kept as the reference the
//! PCE is tested against and as the fallback when the PCE is switched off.

use std::sync::Arc;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;

use crate::assignment::{Density, ProvingAssignment, Witness};
use crate::bits::DensityBits;

/// A constraint system that computes the witness and a, b, c together.
#[derive(Debug, Default)]
pub struct EvaluatingCs {
    inputs: Vec<Scalar>,
    aux: Vec<Scalar>,
    a: Vec<Scalar>,
    b: Vec<Scalar>,
    c: Vec<Scalar>,
    density: Density,
}

/// Synthesizes `circuit` directly: constant one first, the circuit, then one constraint
/// `input * 0 = 0` per input.
pub fn synthesize_direct<C: Circuit<Scalar>>(
    circuit: C,
) -> Result<ProvingAssignment, SynthesisError> {
    let mut cs = EvaluatingCs::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    for i in 0..cs.inputs.len() {
        cs.a.push(cs.inputs[i]);
        cs.b.push(Scalar::ZERO);
        cs.c.push(Scalar::ZERO);
    }
    let d = &mut cs.density;
    d.a_aux.grow_to(cs.aux.len());
    d.b_input.grow_to(cs.inputs.len());
    d.b_aux.grow_to(cs.aux.len());
    Ok(ProvingAssignment::new(
        Witness {
            inputs: cs.inputs,
            aux: cs.aux,
        },
        cs.a,
        cs.b,
        cs.c,
        Arc::new(cs.density),
    ))
}

/// Evaluates `lc`, marking the variables with nonzero coefficients in the given densities.
fn eval(
    lc: &LinearCombination<Scalar>,
    inputs: &[Scalar],
    aux: &[Scalar],
    mut input_density: Option<&mut DensityBits>,
    mut aux_density: Option<&mut DensityBits>,
) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (&i, coeff) in lc.iter_inputs() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += inputs[i] * coeff;
        if let Some(d) = input_density.as_deref_mut() {
            d.set(i);
        }
    }
    for (&i, coeff) in lc.iter_aux() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += aux[i] * coeff;
        if let Some(d) = aux_density.as_deref_mut() {
            d.set(i);
        }
    }
    acc
}

impl ConstraintSystem<Scalar> for EvaluatingCs {
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

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let (la, lb, lc) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        let (i, x, d) = (&self.inputs, &self.aux, &mut self.density);
        self.a.push(eval(&la, i, x, None, Some(&mut d.a_aux)));
        self.b
            .push(eval(&lb, i, x, Some(&mut d.b_input), Some(&mut d.b_aux)));
        self.c.push(eval(&lc, i, x, None, None));
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
        let (input_base, aux_base) = (self.inputs.len(), self.aux.len());
        self.density.extend(&other.density, input_base, aux_base);
        self.a.extend_from_slice(&other.a);
        self.b.extend_from_slice(&other.b);
        self.c.extend_from_slice(&other.c);
        self.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or(&[]));
        self.aux.extend_from_slice(&other.aux);
    }
}
