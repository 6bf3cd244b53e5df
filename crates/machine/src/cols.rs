//! Column structs: every table's row is a `#[repr(C)]` struct whose fields are all `T` or `[T; N]`, so a
//! row slice `&[T]` of the table's width can be viewed as the struct and back (Plonky3 `keccak-air` style).
//! The width of a table is `size_of::<XCols<u8>>()`.

/// Implements, for a `#[repr(C)]` struct `$name<T>` made only of `T` and arrays of `T`:
/// - `pub const $width: usize`, the number of columns;
/// - `$name::<T>::from_row(&[T]) -> &$name<T>` and `from_row_mut`;
/// - `$name::<usize>::indices()`: the struct holding each field's column index;
/// - `$name::<usize>::column_names()`: each column's field path (`pc`, `r1.old_ts`, `abs_r[0]`), read from
///   the struct's `Debug` form, so the struct stays the one list of columns.
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

            /// `column_names()[c]` is the field path of column `c` (see [`crate::cols::field_paths`]).
            pub fn column_names() -> Vec<String> {
                crate::cols::field_paths(&format!("{:?}", Self::indices()), $width)
            }
        }
    };
}

pub(crate) use columns;

/// Field paths of a column struct from the `Debug` form of its `indices()` (`Cols { a: 0, b: [1, 2],
/// c: Sub { d: 3 } }` gives `["a", "b[0]", "b[1]", "c.d"]`): the result has `width` entries, entry `i`
/// naming the field whose index is `i`.
///
/// # Panics
/// If the text is not such a form or the indices are not exactly `0..width` (a column struct outside
/// the `columns!` contract: a bug in trusted code).
pub(crate) fn field_paths(debug: &str, width: usize) -> Vec<String> {
    let spaced: String = debug
        .chars()
        .flat_map(|c| match c {
            '{' | '}' | '[' | ']' | ':' | ',' => vec![' ', c, ' '],
            _ => vec![c],
        })
        .collect();
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut names = vec![String::new(); width];
    let mut pos = 0;
    parse_value(&tokens, &mut pos, String::new(), &mut names);
    assert_eq!(pos, tokens.len(), "trailing tokens in {debug}");
    for (i, n) in names.iter().enumerate() {
        assert!(!n.is_empty(), "column {i} unnamed in {debug}");
    }
    names
}

/// One value at `tokens[*pos..]`: an index, `[v, ...]` or `Name { field: v, ... }`.
fn parse_value(tokens: &[&str], pos: &mut usize, path: String, names: &mut [String]) {
    let tok = tokens[*pos];
    *pos += 1;
    if tok == "[" {
        let mut k = 0;
        while tokens[*pos] != "]" {
            parse_value(tokens, pos, format!("{path}[{k}]"), names);
            k += 1;
            if tokens[*pos] == "," {
                *pos += 1;
            }
        }
        *pos += 1;
    } else if let Ok(i) = tok.parse::<usize>() {
        assert!(names[i].is_empty(), "column {i} named twice");
        names[i] = path;
    } else {
        assert_eq!(tokens[*pos], "{", "struct {tok}");
        *pos += 1;
        while tokens[*pos] != "}" {
            let field = tokens[*pos];
            assert_eq!(tokens[*pos + 1], ":", "field {field}");
            *pos += 2;
            let p = if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            parse_value(tokens, pos, p, names);
            if tokens[*pos] == "," {
                *pos += 1;
            }
        }
        *pos += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::field_paths;
    use crate::tables::cpu::CpuCols;
    use crate::tables::dvrm::DvrmCols;

    #[test]
    fn field_paths_of_nested_structs_and_arrays() {
        assert_eq!(
            field_paths(
                "Cols { a: 0, b: [1, 2], c: Sub { d: 3, e: [S { f: 4 }, S { f: 5 }] } }",
                6
            ),
            ["a", "b[0]", "b[1]", "c.d", "c.e[0].f", "c.e[1].f"]
        );
    }

    #[test]
    fn column_names_of_the_tables() {
        let dvrm = DvrmCols::<usize>::column_names();
        let i = DvrmCols::<usize>::indices();
        assert_eq!(dvrm[i.inv_r], "inv_r");
        assert_eq!(dvrm[i.abs_r[1]], "abs_r[1]");
        assert_eq!(dvrm[26], "inv_r");
        let cpu = CpuCols::<usize>::column_names();
        assert_eq!(cpu[CpuCols::<usize>::indices().r1.old_ts], "r1.old_ts");
        let mut unique = cpu.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), cpu.len());
    }
}
