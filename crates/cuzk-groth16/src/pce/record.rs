//! Recording a circuit's constraints into a [`Pce`](super::Pce).
//!
//! `RecordingCs` never calls the assignment closures: it only learns the structure, exactly as
//! a parameter generator does. Variables are numbered as bellperson numbers them (inputs and
//! aux in allocation order, the constant one as input 0), so a witness from
//! [`WitnessCs`](crate::WitnessCs) lines up with the recorded columns.
//!
//! Extensible synthesis: a child system made by `new()` starts empty; the circuit allocates a
//! temporary ONE as the child's input 0. `extend` maps the child's input 0 onto the parent's
//! input 0, its other inputs after the parent's inputs and its aux after the parent's aux, the
//! same mapping bellperson's prover and our witness system apply.

use std::collections::HashMap;

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::matrix::{CoeffIndices, Matrix, COEFF_MINUS_ONE, COEFF_ONE, INPUT_BIT};
use crate::assignment::Density;
use crate::bits::DensityBits;

/// Largest variable count per kind that the column encoding can address.
const MAX_VARS: usize = (INPUT_BIT - 1) as usize;

/// Interned coefficient values. Index 0 is 1, index 1 is -1.
#[derive(Clone, Debug)]
pub(crate) struct CoeffTable {
    values: Vec<Scalar>,
    index: HashMap<[u64; 4], u32>,
}

impl CoeffTable {
    fn new() -> Self {
        let mut t = CoeffTable {
            values: Vec::new(),
            index: HashMap::new(),
        };
        t.insert(Scalar::ONE);
        t.insert(-Scalar::ONE);
        t
    }

    fn key(v: &Scalar) -> [u64; 4] {
        // Montgomery limbs: a unique representation per field element.
        blst::blst_fr::from(*v).l
    }

    fn insert(&mut self, v: Scalar) -> u32 {
        let next = self.values.len() as u32;
        let i = *self.index.entry(Self::key(&v)).or_insert(next);
        if i == next {
            self.values.push(v);
        }
        i
    }

    fn intern(&mut self, v: &Scalar) -> u32 {
        if *v == Scalar::ONE {
            COEFF_ONE
        } else if *v == -Scalar::ONE {
            COEFF_MINUS_ONE
        } else {
            self.insert(*v)
        }
    }

    pub(crate) fn into_values(self) -> Vec<Scalar> {
        self.values
    }
}

#[derive(Clone, Debug)]
struct MatrixBuilder {
    row_ptr: Vec<u64>,
    cols: Vec<u32>,
    idx: Vec<u32>,
}

impl MatrixBuilder {
    fn new() -> Self {
        MatrixBuilder {
            row_ptr: vec![0],
            cols: Vec::new(),
            idx: Vec::new(),
        }
    }

    fn end_row(&mut self) {
        self.row_ptr.push(self.cols.len() as u64);
    }

    fn finish(self, table_len: usize) -> Result<Matrix, String> {
        if self.cols.len() > u32::MAX as usize {
            return Err(format!(
                "{} nonzeros in one matrix; the PCE format holds at most {}",
                self.cols.len(),
                u32::MAX
            ));
        }
        Ok(Matrix {
            row_ptr: self.row_ptr.into_iter().map(|x| x as u32).collect(),
            cols: self.cols,
            coeffs: CoeffIndices::from_wide(self.idx, table_len),
        })
    }
}

/// A constraint system that records the structure of a circuit.
#[derive(Debug)]
pub struct RecordingCs {
    num_inputs: usize,
    num_aux: usize,
    a: MatrixBuilder,
    b: MatrixBuilder,
    c: MatrixBuilder,
    table: CoeffTable,
    density: Density,
}

/// What a finished recording holds, before it is sealed into a [`Pce`](super::Pce).
pub(crate) struct Recorded {
    pub num_inputs: usize,
    pub num_aux: usize,
    pub coeffs: Vec<Scalar>,
    pub a: Matrix,
    pub b: Matrix,
    pub c: Matrix,
    pub density: Density,
}

impl RecordingCs {
    /// Appends one linear combination as the current row of `m`, marking densities.
    fn push_lc(
        m: &mut MatrixBuilder,
        table: &mut CoeffTable,
        lc: &LinearCombination<Scalar>,
        mut input_density: Option<&mut DensityBits>,
        mut aux_density: Option<&mut DensityBits>,
    ) {
        for (&i, coeff) in lc.iter_inputs() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            m.cols.push(i as u32 | INPUT_BIT);
            m.idx.push(table.intern(coeff));
            if let Some(d) = input_density.as_deref_mut() {
                d.set(i);
            }
        }
        for (&i, coeff) in lc.iter_aux() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            m.cols.push(i as u32);
            m.idx.push(table.intern(coeff));
            if let Some(d) = aux_density.as_deref_mut() {
                d.set(i);
            }
        }
        m.end_row();
    }

    /// Adds the constraints `input_i * 0 = 0` that make the input polynomials independent,
    /// then seals the recording.
    pub(crate) fn finish(mut self) -> Result<Recorded, String> {
        if self.num_inputs > MAX_VARS || self.num_aux > MAX_VARS {
            return Err(format!(
                "{} inputs and {} aux variables; the PCE format addresses at most {MAX_VARS} of each",
                self.num_inputs, self.num_aux
            ));
        }
        for i in 0..self.num_inputs {
            self.a.cols.push(i as u32 | INPUT_BIT);
            self.a.idx.push(COEFF_ONE);
            self.a.end_row();
            self.b.end_row();
            self.c.end_row();
        }
        self.density.a_aux.grow_to(self.num_aux);
        self.density.b_input.grow_to(self.num_inputs);
        self.density.b_aux.grow_to(self.num_aux);
        let coeffs = self.table.into_values();
        Ok(Recorded {
            num_inputs: self.num_inputs,
            num_aux: self.num_aux,
            a: self.a.finish(coeffs.len())?,
            b: self.b.finish(coeffs.len())?,
            c: self.c.finish(coeffs.len())?,
            coeffs,
            density: self.density,
        })
    }

    /// Number of constraints recorded so far (input-consistency constraints not included).
    pub fn num_constraints(&self) -> usize {
        self.a.row_ptr.len() - 1
    }
}

fn remap_var(c: u32, input_base: usize, aux_base: usize) -> u32 {
    if c & INPUT_BIT != 0 {
        match (c ^ INPUT_BIT) as usize {
            0 => INPUT_BIT,
            i => (input_base + i - 1) as u32 | INPUT_BIT,
        }
    } else {
        (aux_base + c as usize) as u32
    }
}

fn extend_matrix(
    dst: &mut MatrixBuilder,
    src: &MatrixBuilder,
    coeff_map: &[u32],
    input_base: usize,
    aux_base: usize,
) {
    let base = dst.cols.len() as u64;
    dst.cols
        .extend(src.cols.iter().map(|&c| remap_var(c, input_base, aux_base)));
    dst.idx
        .extend(src.idx.iter().map(|&k| coeff_map[k as usize]));
    dst.row_ptr
        .extend(src.row_ptr[1..].iter().map(|&p| p + base));
}

impl ConstraintSystem<Scalar> for RecordingCs {
    type Root = Self;

    fn new() -> Self {
        RecordingCs {
            num_inputs: 0,
            num_aux: 0,
            a: MatrixBuilder::new(),
            b: MatrixBuilder::new(),
            c: MatrixBuilder::new(),
            table: CoeffTable::new(),
            density: Density::default(),
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.num_aux >= MAX_VARS {
            return Err(SynthesisError::PolynomialDegreeTooLarge);
        }
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.num_inputs >= MAX_VARS {
            return Err(SynthesisError::PolynomialDegreeTooLarge);
        }
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        let d = &mut self.density;
        // Inputs have full density in A through the input-consistency constraints.
        Self::push_lc(&mut self.a, &mut self.table, &a, None, Some(&mut d.a_aux));
        Self::push_lc(
            &mut self.b,
            &mut self.table,
            &b,
            Some(&mut d.b_input),
            Some(&mut d.b_aux),
        );
        Self::push_lc(&mut self.c, &mut self.table, &c, None, None);
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
        let input_base = self.num_inputs;
        let aux_base = self.num_aux;
        let coeff_map: Vec<u32> = other
            .table
            .values
            .iter()
            .map(|v| self.table.intern(v))
            .collect();
        extend_matrix(&mut self.a, &other.a, &coeff_map, input_base, aux_base);
        extend_matrix(&mut self.b, &other.b, &coeff_map, input_base, aux_base);
        extend_matrix(&mut self.c, &other.c, &coeff_map, input_base, aux_base);

        self.density.extend(&other.density, input_base, aux_base);
        self.num_inputs += other.num_inputs.saturating_sub(1);
        self.num_aux += other.num_aux;
    }
}
