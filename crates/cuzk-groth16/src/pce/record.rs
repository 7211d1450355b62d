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
//!
//! Host memory: a recording made with [`RecordingCs::within`] tells its [`Grow`] callback,
//! before every allocation of a matrix buffer, how many bytes it will hold at once while that
//! allocation happens (its buffers, and the old copy of the one growing), so a budget sees
//! the recording's memory before it exists. A refusal stops the recording: the next variable
//! allocation fails and the extraction returns the refusal. Child systems that an extensible
//! circuit builds on its own (WindowPoSt builds its sector groups in parallel, then extends
//! the parent with them) could not be asked for: so a budgeted recording is made through
//! [`SequentialRecordingCs`], which is not extensible, and such a circuit synthesizes into it
//! directly, one thread, every matrix buffer asked for. The variables, constraints and
//! densities are the same either way (children are merged in order, their inputs after the
//! parent's), which a test checks on WindowPoSt.

use std::collections::HashMap;

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::matrix::{CoeffIndices, Matrix, COEFF_MINUS_ONE, COEFF_ONE, INPUT_BIT, MAX_ROW_LEN};
use crate::assignment::Density;
use crate::bits::DensityBits;

/// Asked before the recording allocates, with the most bytes it will hold at once while the
/// allocation happens; an error refuses them and stops the recording.
pub type Grow<'g> = dyn FnMut(u64) -> Result<(), String> + Send + 'g;

/// The recording's memory callback, if it has one, its first refusal, and the bytes its
/// matrix buffers hold.
struct Growth<'g> {
    grow: Option<&'g mut Grow<'g>>,
    refused: Option<String>,
    held: u64,
}

impl std::fmt::Debug for Growth<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Growth")
            .field("budgeted", &self.grow.is_some())
            .field("refused", &self.refused)
            .finish()
    }
}

impl Growth<'_> {
    /// Makes room in `v` for `extra` more entries, asking for the new buffer's bytes first.
    /// False (nothing allocated) once a request was refused.
    fn room<T>(&mut self, v: &mut Vec<T>, extra: usize) -> bool {
        if self.refused.is_some() {
            return false;
        }
        if v.len() + extra <= v.capacity() || self.grow.is_none() {
            return true;
        }
        let cap = (v.capacity() * 2).max(v.len() + extra).max(1 << 12);
        let (old, new) = (
            (v.capacity() * size_of::<T>()) as u64,
            (cap * size_of::<T>()) as u64,
        );
        // While the buffer moves, its old copy and the new one are both alive.
        if self.ask(new).is_err() {
            return false;
        }
        v.reserve_exact(cap - v.len());
        self.held += new - old;
        true
    }

    /// Asks for `bytes` about to be allocated beside what the matrix buffers hold; the first
    /// refusal is kept and returned by every later request.
    fn ask(&mut self, bytes: u64) -> Result<(), String> {
        if let Some(e) = &self.refused {
            return Err(e.clone());
        }
        if let Some(grow) = self.grow.as_deref_mut() {
            if let Err(e) = grow(self.held + bytes) {
                self.refused = Some(e.clone());
                return Err(e);
            }
        }
        Ok(())
    }
}

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

    /// Room for `rows` more rows holding `entries` more nonzeros, asked of `growth` first.
    fn room(&mut self, growth: &mut Growth<'_>, rows: usize, entries: usize) -> bool {
        growth.room(&mut self.row_ptr, rows)
            && growth.room(&mut self.cols, entries)
            && growth.room(&mut self.idx, entries)
    }

    /// Bytes [`MatrixBuilder::finish`] allocates beside the buffers: the row lengths and
    /// index, and the narrowed coefficient indices.
    fn finish_bytes(&self) -> u64 {
        let rows = (self.row_ptr.len() - 1) as u64;
        rows * 2 + Matrix::index_bytes(rows) + self.idx.len() as u64 * 4
    }

    fn finish(self, table_len: usize) -> Result<Matrix, String> {
        let mut lens = Vec::with_capacity(self.row_ptr.len() - 1);
        for (r, w) in self.row_ptr.windows(2).enumerate() {
            let len = w[1] - w[0];
            if len > MAX_ROW_LEN as u64 {
                return Err(format!(
                    "constraint {r} has {len} nonzeros in one matrix; the PCE format holds at \
                     most {MAX_ROW_LEN} per row"
                ));
            }
            lens.push(len as u16);
        }
        drop(self.row_ptr);
        Matrix::new(
            lens,
            self.cols,
            CoeffIndices::from_wide(self.idx, table_len),
        )
    }
}

/// A constraint system that records the structure of a circuit.
#[derive(Debug)]
pub struct RecordingCs<'g> {
    num_inputs: usize,
    num_aux: usize,
    a: MatrixBuilder,
    b: MatrixBuilder,
    c: MatrixBuilder,
    table: CoeffTable,
    density: Density,
    growth: Growth<'g>,
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

impl<'g> RecordingCs<'g> {
    /// A recording that asks `grow` for its matrix memory before allocating it (see the
    /// module docs).
    pub fn within(grow: &'g mut Grow<'g>) -> Self {
        let mut cs = <Self as ConstraintSystem<Scalar>>::new();
        cs.growth.grow = Some(grow);
        cs
    }

    /// The first request for memory that was refused, which stopped the recording.
    pub fn refused(&self) -> Option<&str> {
        self.growth.refused.as_deref()
    }

    /// An error once a request for memory was refused: the circuit stops at its next
    /// allocation.
    fn stopped(&self) -> Result<(), SynthesisError> {
        match &self.growth.refused {
            None => Ok(()),
            Some(e) => Err(SynthesisError::IoError(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                e.clone(),
            ))),
        }
    }

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
        if let Some(e) = &self.growth.refused {
            return Err(e.clone());
        }
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
        self.growth
            .ask(self.a.finish_bytes() + self.b.finish_bytes() + self.c.finish_bytes())
            .map_err(|e| format!("host memory refused: {e}"))?;
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

impl ConstraintSystem<Scalar> for RecordingCs<'_> {
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
            growth: Growth {
                grow: None,
                refused: None,
                held: 0,
            },
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
        self.stopped()?;
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
        self.stopped()?;
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
        let terms =
            |lc: &LinearCombination<Scalar>| lc.iter_inputs().count() + lc.iter_aux().count();
        let g = &mut self.growth;
        if !(self.a.room(g, 1, terms(&a))
            && self.b.room(g, 1, terms(&b))
            && self.c.room(g, 1, terms(&c)))
        {
            return;
        }
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
        if let Some(e) = &other.growth.refused {
            self.growth.refused.get_or_insert_with(|| e.clone());
        }
        let g = &mut self.growth;
        let rows = other.a.row_ptr.len() - 1;
        if !(self.a.room(g, rows, other.a.cols.len())
            && self.b.room(g, rows, other.b.cols.len())
            && self.c.room(g, rows, other.c.cols.len()))
        {
            return;
        }
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

/// A [`RecordingCs`] that is not extensible: a circuit that would build child systems in
/// parallel synthesizes into this one directly instead, so all of its memory goes through the
/// recording's callback (see the module docs). Slower for such circuits (one thread), the
/// same recording.
#[derive(Debug)]
pub struct SequentialRecordingCs<'g>(pub RecordingCs<'g>);

impl ConstraintSystem<Scalar> for SequentialRecordingCs<'_> {
    type Root = Self;

    fn new() -> Self {
        SequentialRecordingCs(RecordingCs::new())
    }

    fn alloc<F, A, AR>(&mut self, a: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.alloc(a, f)
    }

    fn alloc_input<F, A, AR>(&mut self, a: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.alloc_input(a, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, ann: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.0.enforce(ann, a, b, c)
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
}
