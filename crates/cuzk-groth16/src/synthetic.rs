//! Synthetic circuits: deterministic, satisfiable R1CS of any size, for tests and benchmarks.
//!
//! A [`SyntheticCircuit`] mixes the constraint shapes real Filecoin circuits are made of:
//! booleanity checks (`b * (1 - b) = 0`), products of short linear combinations with
//! coefficients mostly 1 and -1 (sometimes small, sometimes arbitrary), and linear
//! constraints. Half the public inputs are allocated after some constraints, and the circuit
//! can be split into parts that extensible constraint systems synthesize as child systems and
//! `extend` into the parent, as Filecoin's PoSt circuits do. Structure and witness both follow
//! from the seed.

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};

/// A deterministic satisfiable circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyntheticCircuit {
    /// Constraints the circuit enforces (the prover adds one per input on top).
    pub constraints: usize,
    /// Public inputs allocated by the circuit (the constant one not counted), per part.
    pub inputs: usize,
    /// Parts synthesized as child systems where the constraint system is extensible.
    pub parts: usize,
    /// Seed of structure and witness.
    pub seed: u64,
}

impl SyntheticCircuit {
    /// A circuit whose constraints, input constraints included, fill a domain of `2^log_n`.
    pub fn filling_domain(log_n: u32, seed: u64) -> Self {
        let inputs = 4;
        SyntheticCircuit {
            constraints: (1usize << log_n) - inputs - 1,
            inputs,
            parts: 1,
            seed,
        }
    }

    /// Total public inputs the circuit allocates (the constant one not counted).
    pub fn num_public_inputs(&self) -> usize {
        self.inputs * self.parts.max(1)
    }
}

type Lc = LinearCombination<Scalar>;

struct Pool {
    vars: Vec<(Variable, Scalar)>,
}

impl Pool {
    fn pick<R: Rng>(&self, rng: &mut R) -> (Variable, Scalar) {
        let n = self.vars.len();
        // Mostly recent variables, sometimes any: the locality real gadgets have.
        let i = if rng.gen_bool(0.8) {
            n - 1 - rng.gen_range(0..n.min(16))
        } else {
            rng.gen_range(0..n)
        };
        self.vars[i]
    }
}

fn coeff<R: Rng>(rng: &mut R) -> Scalar {
    match rng.gen_range(0..20) {
        0..=9 => Scalar::ONE,
        10..=14 => -Scalar::ONE,
        15..=18 => Scalar::from(rng.gen_range(2u64..16)),
        _ => Scalar::random(&mut *rng),
    }
}

fn random_lc<R: Rng>(rng: &mut R, pool: &Pool) -> (Lc, Scalar) {
    let terms = rng.gen_range(1..=3);
    let mut lc = Lc::zero();
    let mut val = Scalar::ZERO;
    for _ in 0..terms {
        let (v, x) = pool.pick(rng);
        let c = coeff(rng);
        lc = lc + (c, v);
        val += c * x;
    }
    (lc, val)
}

/// Synthesizes one part: `constraints` constraints over its own variables and `one`.
fn synthesize_part<CS: ConstraintSystem<Scalar>, R: Rng>(
    cs: &mut CS,
    rng: &mut R,
    constraints: usize,
    inputs: usize,
) -> Result<(), SynthesisError> {
    let one = CS::one();
    let mut pool = Pool {
        vars: vec![(one, Scalar::ONE)],
    };
    let alloc_inputs = |cs: &mut CS, rng: &mut R, pool: &mut Pool, k: usize| {
        for i in 0..k {
            let x = Scalar::from(rng.gen::<u64>());
            let v = cs.alloc_input(|| format!("input {i}"), || Ok(x))?;
            pool.vars.push((v, x));
        }
        Ok::<_, SynthesisError>(())
    };
    let early = inputs / 2;
    alloc_inputs(cs, rng, &mut pool, early)?;
    for k in 0..constraints {
        if k == constraints / 2 {
            // Inputs allocated after constraints were enforced.
            alloc_inputs(cs, rng, &mut pool, inputs - early)?;
        }
        let mut cs = cs.namespace(|| format!("constraint {k}"));
        // The first constraints bring in free witness values (`x * 1 = x`); every variable
        // appears in some constraint, as parameter generation requires.
        let kind = if k < 4 { 10 } else { rng.gen_range(0..10) };
        match kind {
            10 => {
                let x = Scalar::random(&mut *rng);
                let v = cs.alloc(|| "free", || Ok(x))?;
                cs.enforce(|| "free", |lc| lc + v, |lc| lc + one, |lc| lc + v);
                pool.vars.push((v, x));
            }
            0..=3 => {
                let bit = rng.gen_bool(0.5);
                let x = if bit { Scalar::ONE } else { Scalar::ZERO };
                let b = cs.alloc(|| "bit", || Ok(x))?;
                cs.enforce(|| "boolean", |lc| lc + b, |lc| lc + one - b, |lc| lc);
                pool.vars.push((b, x));
            }
            4..=7 => {
                let (la, xa) = random_lc(rng, &pool);
                let (lb, xb) = random_lc(rng, &pool);
                let z = xa * xb;
                let v = cs.alloc(|| "product", || Ok(z))?;
                cs.enforce(|| "mul", |_| la, |_| lb, |lc| lc + v);
                pool.vars.push((v, z));
            }
            _ => {
                let (la, xa) = random_lc(rng, &pool);
                let v = cs.alloc(|| "sum", || Ok(xa))?;
                cs.enforce(|| "linear", |_| la, |lc| lc + one, |lc| lc + v);
                pool.vars.push((v, xa));
            }
        }
    }
    if constraints == 0 {
        alloc_inputs(cs, rng, &mut pool, inputs - early)?;
    }
    Ok(())
}

impl Circuit<Scalar> for SyntheticCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let parts = self.parts.max(1);
        for p in 0..parts {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.seed ^ ((p as u64) << 32));
            let n = self.constraints / parts + usize::from(p < self.constraints % parts);
            if parts > 1 && CS::is_extensible() {
                let mut child = CS::new();
                child.alloc_input(|| "temp one", || Ok(Scalar::ONE))?;
                synthesize_part(
                    &mut child.namespace(|| format!("part {p}")),
                    &mut rng,
                    n,
                    self.inputs,
                )?;
                cs.extend(&child);
            } else {
                synthesize_part(
                    &mut cs.namespace(|| format!("part {p}")),
                    &mut rng,
                    n,
                    self.inputs,
                )?;
            }
        }
        Ok(())
    }
}
