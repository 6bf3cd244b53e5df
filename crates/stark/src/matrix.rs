//! A dense row-major matrix of base-field elements.
//!
//! `values[r * width + c]` is row `r`, column `c`; `height = values.len() / width`. Whether the rows are in
//! natural or bit-reversed order is a property of where the matrix comes from (see the producing function's
//! doc): traces are natural order, LDEs are bit-reversed (docs/architecture.md).

use crate::field::F;

/// Row-major `height x width` matrix over `F`. Invariant (checked by the constructors): `width >= 1` and
/// `values.len()` is a multiple of `width`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RowMajorMatrix {
    /// Row-major values, `height * width` of them.
    pub values: Vec<F>,
    /// Number of columns (>= 1).
    pub width: usize,
}

impl RowMajorMatrix {
    /// Wrap `values` (row-major) as a matrix of `width` columns.
    ///
    /// # Panics
    /// If `width == 0` or `values.len() % width != 0` (a programming error, never input-dependent).
    pub fn new(values: Vec<F>, width: usize) -> Self {
        assert!(width > 0, "RowMajorMatrix width must be >= 1");
        assert_eq!(
            values.len() % width,
            0,
            "values.len() must be a multiple of width"
        );
        Self { values, width }
    }

    /// A `height x width` matrix of zeros.
    pub fn zeros(height: usize, width: usize) -> Self {
        Self::new(vec![F::new(0); height * width], width)
    }

    /// A single-column matrix.
    pub fn new_col(values: Vec<F>) -> Self {
        Self::new(values, 1)
    }

    /// Build from a row generator: `f(r, c)` for `r < height`, `c < width`.
    pub fn from_fn(height: usize, width: usize, mut f: impl FnMut(usize, usize) -> F) -> Self {
        let mut values = Vec::with_capacity(height * width);
        for r in 0..height {
            for c in 0..width {
                values.push(f(r, c));
            }
        }
        Self::new(values, width)
    }

    /// Number of rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.values.len().checked_div(self.width).unwrap_or(0)
    }

    /// `log2(height)`; `None` unless the height is a power of two.
    pub fn log_height(&self) -> Option<usize> {
        let h = self.height();
        h.is_power_of_two().then(|| h.trailing_zeros() as usize)
    }

    /// Row `i` (`width` elements).
    ///
    /// # Panics
    /// If `i >= height`.
    #[inline]
    pub fn row(&self, i: usize) -> &[F] {
        &self.values[i * self.width..(i + 1) * self.width]
    }

    /// Mutable row `i`.
    #[inline]
    pub fn row_mut(&mut self, i: usize) -> &mut [F] {
        let w = self.width;
        &mut self.values[i * w..(i + 1) * w]
    }

    /// Iterator over rows, in storage order.
    pub fn rows(&self) -> impl Iterator<Item = &[F]> {
        self.values.chunks_exact(self.width.max(1))
    }

    /// Column `c` as a vector (storage row order).
    pub fn column(&self, c: usize) -> Vec<F> {
        self.rows().map(|r| r[c]).collect()
    }

    /// Dimensions as (width, height).
    pub fn dims(&self) -> (usize, usize) {
        (self.width, self.height())
    }

    /// Transposed copy (`width x height`).
    pub fn transpose(&self) -> Self {
        let (w, h) = (self.width, self.height());
        Self::from_fn(w, h, |r, c| self.values[c * w + r])
    }
}
