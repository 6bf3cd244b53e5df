//! Column structs: every table's row is a `#[repr(C)]` struct whose fields are all `T` or `[T; N]`, so a
//! row slice `&[T]` of the table's width can be viewed as the struct and back (Plonky3 `keccak-air` style).
//! The width of a table is `size_of::<XCols<u8>>()`.

/// Implements, for a `#[repr(C)]` struct `$name<T>` made only of `T` and arrays of `T`:
/// - `pub const $width: usize`, the number of columns;
/// - `$name::<T>::from_row(&[T]) -> &$name<T>` and `from_row_mut`;
/// - `$name::<usize>::indices()`: the struct holding each field's column index.
macro_rules! columns {
    ($name:ident, $width:ident) => {
        #[doc = concat!("Number of columns of [`", stringify!($name), "`].")]
        pub const $width: usize = core::mem::size_of::<$name<u8>>();

        impl<T> $name<T> {
            /// Views a row (exactly the table's width) as the column struct.
            ///
            /// # Panics
            /// If `row.len()` is not the width (a bug in trusted code, never reachable from proof bytes).
            pub fn from_row(row: &[T]) -> &Self {
                assert_eq!(row.len(), $width, "row length");
                // SAFETY: `Self` is `#[repr(C)]` and made only of `T` and `[T; N]` fields, so it has the
                // size (checked above through the u8 instantiation: one byte per column), alignment and
                // layout of `[T; $width]`; the slice is aligned for `T` and long enough.
                unsafe { &*(row.as_ptr() as *const Self) }
            }

            /// Mutable view of a row as the column struct (see [`Self::from_row`]).
            pub fn from_row_mut(row: &mut [T]) -> &mut Self {
                assert_eq!(row.len(), $width, "row length");
                // SAFETY: as in `from_row`; the borrow is unique.
                unsafe { &mut *(row.as_mut_ptr() as *mut Self) }
            }
        }

        impl $name<usize> {
            /// The column index of every field.
            pub fn indices() -> Self {
                let idx: Vec<usize> = (0..$width).collect();
                $name::from_row(&idx).clone()
            }
        }
    };
}

pub(crate) use columns;
