//! Typed n-dimensional values: what the reference evaluator computes with and what io files hold.
//!
//! A [`Literal`] is either an [`Array`] (element type, dimensions, row-major data) or a tuple of
//! literals. Layouts are not modelled: every array is dense and row-major (the last dimension
//! varies fastest), which is also the order of the `data` lists in io files.
//!
//! Conversions follow XLA's `convert`:
//! - float → float rounds to nearest, ties to even (`f16`/`bf16` through the `half` crate);
//! - float → integer uses Rust `as` semantics: truncation toward zero, saturation at the bounds,
//!   NaN → 0 (XLA leaves out-of-range conversions implementation-defined; this is the choice);
//! - integer → integer wraps (two's complement truncation / sign extension);
//! - anything → `pred` is `x != 0` (NaN → true); `pred` → number is 0 or 1.
use thiserror::Error;

mod data;
mod dtype;

pub use data::{bf16_from_f64, f16_from_f64, Data, Wide};
pub use dtype::{DType, NoHostValues, ALL_DTYPES};

/// Errors building or reading literals.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum LiteralError {
    /// The data length is not the product of the dimensions.
    #[error("{dtype}{dims:?} needs {expected} elements, got {got}")]
    ElementCount {
        /// Element type.
        dtype: DType,
        /// Dimensions.
        dims: Vec<usize>,
        /// Product of the dimensions.
        expected: usize,
        /// Length of the data.
        got: usize,
    },
    /// The literal is a tuple where an array was needed, or the other way round.
    #[error("expected {expected}, got {got}")]
    Kind {
        /// What was needed.
        expected: &'static str,
        /// What was there.
        got: String,
    },
    /// A multi-index has the wrong rank or is out of bounds.
    #[error("index {index:?} out of bounds for dimensions {dims:?}")]
    Index {
        /// The offending index.
        index: Vec<usize>,
        /// The array's dimensions.
        dims: Vec<usize>,
    },
    /// A bitcast between element types of different widths.
    #[error("bitcast-convert from {from} to {to} changes the element width")]
    BitcastWidth {
        /// Source type.
        from: DType,
        /// Target type.
        to: DType,
    },
}

/// A dense row-major array: element type, dimensions and data.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    dims: Vec<usize>,
    data: Data,
}

/// Row-major strides (in elements) of `dims`.
pub fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(dims[i + 1]);
    }
    s
}

/// Product of the dimensions (1 for a scalar); `usize::MAX` when the product overflows.
pub fn element_count(dims: &[usize]) -> usize {
    dims.iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(*d))
        .unwrap_or(usize::MAX)
}

/// Advances a row-major multi-index within `dims`; false once it wraps around to all zeros.
pub fn next_index(index: &mut [usize], dims: &[usize]) -> bool {
    for d in (0..index.len()).rev() {
        index[d] += 1;
        if index[d] < dims[d] {
            return true;
        }
        index[d] = 0;
    }
    false
}

impl Array {
    /// An array, checking that `data` has exactly `product(dims)` elements.
    pub fn new(dims: Vec<usize>, data: Data) -> Result<Array, LiteralError> {
        let expected = element_count(&dims);
        if expected != data.len() {
            return Err(LiteralError::ElementCount {
                dtype: data.dtype(),
                dims,
                expected,
                got: data.len(),
            });
        }
        Ok(Array { dims, data })
    }

    /// A rank-0 array holding `data` (which must have one element).
    pub fn scalar(data: Data) -> Result<Array, LiteralError> {
        Array::new(vec![], data)
    }

    /// An array of zeros.
    pub fn zeros(dtype: DType, dims: Vec<usize>) -> Array {
        let n = element_count(&dims);
        Array {
            dims,
            data: Data::zeros(dtype, n),
        }
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// Dimensions (empty for a scalar).
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Number of dimensions: 0 for a scalar.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The row-major data.
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when some dimension is 0.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Splits into dimensions and data.
    pub fn into_parts(self) -> (Vec<usize>, Data) {
        (self.dims, self.data)
    }

    /// Linear (row-major) position of a multi-index, checked.
    pub fn linear_index(&self, index: &[usize]) -> Result<usize, LiteralError> {
        if index.len() != self.dims.len() || index.iter().zip(&self.dims).any(|(i, d)| i >= d) {
            return Err(LiteralError::Index {
                index: index.to_vec(),
                dims: self.dims.clone(),
            });
        }
        Ok(index
            .iter()
            .zip(strides(&self.dims))
            .map(|(i, s)| i * s)
            .sum())
    }

    /// Element at a multi-index as `f64`.
    pub fn get_f64(&self, index: &[usize]) -> Result<f64, LiteralError> {
        let i = self.linear_index(index)?;
        self.data.get_f64(i).ok_or(LiteralError::Index {
            index: index.to_vec(),
            dims: self.dims.clone(),
        })
    }

    /// Element at a multi-index as `i64`.
    pub fn get_i64(&self, index: &[usize]) -> Result<i64, LiteralError> {
        let i = self.linear_index(index)?;
        self.data.get_i64(i).ok_or(LiteralError::Index {
            index: index.to_vec(),
            dims: self.dims.clone(),
        })
    }

    /// Same data, new dimensions with the same element count.
    pub fn reshape(&self, dims: Vec<usize>) -> Result<Array, LiteralError> {
        Array::new(dims, self.data.clone())
    }

    /// Converts to another element type (XLA `convert`).
    pub fn convert(&self, to: DType) -> Array {
        Array {
            dims: self.dims.clone(),
            data: self.data.convert(to),
        }
    }

    /// Reinterprets the bits as another element type of the same width.
    pub fn bitcast_convert(&self, to: DType) -> Result<Array, LiteralError> {
        let (from_bits, to_bits) = (
            u64::from(self.dtype().bit_width()),
            u64::from(to.bit_width()),
        );
        // A complex element is two values, and pred has no defined bit layout: reinterpreting
        // either as something else (or back) is not a bitcast this models.
        let refused = self.dtype().is_complex() != to.is_complex()
            || (from_bits != to_bits
                && (self.dtype().is_complex() || self.dtype() == DType::Pred || to == DType::Pred));
        if refused
            || from_bits % to_bits.min(from_bits) != 0
            || to_bits % from_bits.min(to_bits) != 0
        {
            return Err(LiteralError::BitcastWidth {
                from: self.dtype(),
                to,
            });
        }
        let bits = self.data.to_bits();
        if from_bits == to_bits {
            return Ok(Array {
                dims: self.dims.clone(),
                data: Data::from_bits(to, &bits),
            });
        }
        // XLA's rule: to a narrower type, each element becomes a new minor dimension of
        // `from / to` parts, least significant first (little-endian); to a wider type, the minor
        // dimension (which must be `to / from`) is joined the same way.
        let mut dims = self.dims.clone();
        let parts: Vec<u64> = if from_bits > to_bits {
            let ratio = (from_bits / to_bits) as usize;
            dims.push(ratio);
            let mask = if to_bits == 64 {
                u64::MAX
            } else {
                (1u64 << to_bits) - 1
            };
            bits.iter()
                .flat_map(|&w| (0..ratio).map(move |k| (w >> (k as u64 * to_bits)) & mask))
                .collect()
        } else {
            let ratio = (to_bits / from_bits) as usize;
            if dims.last() != Some(&ratio) {
                return Err(LiteralError::BitcastWidth {
                    from: self.dtype(),
                    to,
                });
            }
            dims.pop();
            bits.chunks(ratio)
                .map(|c| {
                    c.iter()
                        .enumerate()
                        .fold(0u64, |acc, (k, &p)| acc | (p << (k as u64 * from_bits)))
                })
                .collect()
        };
        Ok(Array {
            dims,
            data: Data::from_bits(to, &parts),
        })
    }

    /// `dtype[dims]` as HLO prints it, e.g. `f32[4,5]`.
    pub fn shape_string(&self) -> String {
        let dims: Vec<String> = self.dims.iter().map(|d| d.to_string()).collect();
        format!("{}[{}]", self.dtype(), dims.join(","))
    }
}

/// A value: an array or a tuple of values.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// A dense array.
    Array(Array),
    /// A tuple (possibly nested, possibly empty).
    Tuple(Vec<Literal>),
}

impl From<Array> for Literal {
    fn from(a: Array) -> Literal {
        Literal::Array(a)
    }
}

impl Literal {
    /// An array literal, checking the element count.
    pub fn array(dims: Vec<usize>, data: Data) -> Result<Literal, LiteralError> {
        Ok(Literal::Array(Array::new(dims, data)?))
    }

    /// Scalar `f32`.
    pub fn f32(x: f32) -> Literal {
        Literal::Array(Array {
            dims: vec![],
            data: Data::F32(vec![x]),
        })
    }

    /// Scalar `s32`.
    pub fn s32(x: i32) -> Literal {
        Literal::Array(Array {
            dims: vec![],
            data: Data::S32(vec![x]),
        })
    }

    /// Scalar `pred`.
    pub fn pred(x: bool) -> Literal {
        Literal::Array(Array {
            dims: vec![],
            data: Data::Pred(vec![x]),
        })
    }

    /// The array, or a [`LiteralError::Kind`] for a tuple.
    pub fn as_array(&self) -> Result<&Array, LiteralError> {
        match self {
            Literal::Array(a) => Ok(a),
            Literal::Tuple(t) => Err(LiteralError::Kind {
                expected: "an array",
                got: format!("a tuple of {}", t.len()),
            }),
        }
    }

    /// Consumes into the array, or a [`LiteralError::Kind`] for a tuple.
    pub fn into_array(self) -> Result<Array, LiteralError> {
        match self {
            Literal::Array(a) => Ok(a),
            Literal::Tuple(t) => Err(LiteralError::Kind {
                expected: "an array",
                got: format!("a tuple of {}", t.len()),
            }),
        }
    }

    /// The tuple elements, or a [`LiteralError::Kind`] for an array.
    pub fn as_tuple(&self) -> Result<&[Literal], LiteralError> {
        match self {
            Literal::Tuple(t) => Ok(t),
            Literal::Array(a) => Err(LiteralError::Kind {
                expected: "a tuple",
                got: a.shape_string(),
            }),
        }
    }

    /// The array leaves in order (depth first), as io files list a result's outputs.
    pub fn leaves(&self) -> Vec<&Array> {
        let mut out = Vec::new();
        fn walk<'a>(l: &'a Literal, out: &mut Vec<&'a Array>) {
            match l {
                Literal::Array(a) => out.push(a),
                Literal::Tuple(t) => t.iter().for_each(|e| walk(e, out)),
            }
        }
        walk(self, &mut out);
        out
    }

    /// Consumes into the array leaves in order.
    pub fn into_leaves(self) -> Vec<Array> {
        let mut out = Vec::new();
        fn walk(l: Literal, out: &mut Vec<Array>) {
            match l {
                Literal::Array(a) => out.push(a),
                Literal::Tuple(t) => t.into_iter().for_each(|e| walk(e, out)),
            }
        }
        walk(self, &mut out);
        out
    }

    /// HLO-style shape string: `f32[2,3]` or `(f32[], s32[4])`.
    pub fn shape_string(&self) -> String {
        match self {
            Literal::Array(a) => a.shape_string(),
            Literal::Tuple(t) => {
                let parts: Vec<String> = t.iter().map(|e| e.shape_string()).collect();
                format!("({})", parts.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests;
