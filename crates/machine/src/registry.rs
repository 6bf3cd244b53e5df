//! The table registry: the one list of the machine's tables, in proof order. Everything indexed by table
//! (the AIRs, the witness traces, [`TABLE_NAMES`], [`table_id`], [`TableSet`], [`PerTable`]) derives from it.

macro_rules! tables {
    ($($(#[$doc:meta])* $var:ident = $id:ident),* $(,)?) => {
        /// A machine table; the discriminant is its index in proof order (the order of the AIRs, of
        /// [`crate::Witness::traces`] and of the proof's per-table data).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Table {
            $($(#[$doc])* $var),*
        }

        impl Table {
            /// Every table in proof order (`ALL[t].index() == t`).
            pub const ALL: [Table; [$(Table::$var),*].len()] = [$(Table::$var),*];
            /// The number of tables.
            pub const COUNT: usize = Self::ALL.len();

            /// The table's name (its AIR's name, e.g. `"MEMW_A"`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Table::$var => stringify!($id)),*
                }
            }
        }

        /// Table names in proof order (the AIRs' names): `TABLE_NAMES[t]` is table `t` of
        /// [`crate::Witness::traces`].
        pub const TABLE_NAMES: [&str; Table::COUNT] = [$(stringify!($id)),*];

        /// Indices of the tables in proof order (`table_id::CPU == Table::Cpu.index()`).
        pub mod table_id {
            $(#[doc = concat!("Index of ", stringify!($id), ".")]
            pub const $id: usize = super::Table::$var as usize;)*
        }
    };
}

tables! {
    /// The RV64IM CPU with its MEMW_R register-access group.
    Cpu = CPU,
    /// Decoded instructions of the program (preprocessed) and their multiplicities.
    Decode = DECODE,
    /// Byte/16-bit lookup tables (preprocessed) and their multiplicities.
    Bitwise = BITWISE,
    Regfile = REGFILE,
    Eq = EQ,
    Lt = LT,
    Load = LOAD,
    Store = STORE,
    MemwA = MEMW_A,
    Page = PAGE,
    Bytewise = BYTEWISE,
    Syscall = SYSCALL,
    Sysio = SYSIO,
    Input = INPUT,
    Cpu32 = CPU32,
    Dvrm = DVRM,
    Shift = SHIFT,
    Pow2 = POW2,
    Mul = MUL,
    Memw = MEMW,
    /// The Poseidon2 precompile (width 8 over Goldilocks), one row per call.
    Poseidon2 = POSEIDON2,
}

impl Table {
    /// Index in proof order.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The table of index `t`, if any.
    pub fn from_index(t: usize) -> Option<Table> {
        Self::ALL.get(t).copied()
    }

    /// The table named `name` (an AIR name), if any.
    pub fn from_name(name: &str) -> Option<Table> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of tables (a bit per [`Table`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableSet(u32);

const _: () = assert!(Table::COUNT <= 32);

impl TableSet {
    /// No table.
    pub const EMPTY: TableSet = TableSet(0);
    /// Every table of the registry.
    pub const ALL: TableSet = TableSet::of(&Table::ALL);

    /// The set of `tables`.
    pub const fn of(tables: &[Table]) -> TableSet {
        let mut bits = 0;
        let mut i = 0;
        while i < tables.len() {
            bits |= 1 << tables[i] as u32;
            i += 1;
        }
        TableSet(bits)
    }

    pub const fn contains(self, t: Table) -> bool {
        self.0 & (1 << t as u32) != 0
    }

    pub const fn with(self, t: Table) -> TableSet {
        TableSet(self.0 | 1 << t as u32)
    }

    pub const fn without(self, t: Table) -> TableSet {
        TableSet(self.0 & !(1 << t as u32))
    }

    /// The tables of `self` not in `other`.
    pub const fn minus(self, other: TableSet) -> TableSet {
        TableSet(self.0 & !other.0)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The number of tables in the set.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The tables of the set, in proof order.
    pub fn iter(self) -> impl Iterator<Item = Table> {
        Table::ALL.into_iter().filter(move |&t| self.contains(t))
    }
}

/// The names of the tables, in proof order, separated by `", "` (`"CPU, LT"`; `"no table"` when empty).
impl std::fmt::Display for TableSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_empty() {
            return f.write_str("no table");
        }
        for (k, t) in self.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            f.write_str(t.name())?;
        }
        Ok(())
    }
}

/// One `T` per table, indexed by [`Table`] (`v[Table::Lt]`), in proof order: the typed replacement of a
/// hand-written list of per-table fields or a `Vec` indexed by `table_id`. A new table in the registry gets
/// its slot everywhere a `PerTable` is built with [`PerTable::from_fn`] (a `match` with a default arm there
/// covers it without an edit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PerTable<T>(pub [T; Table::COUNT]);

impl<T> PerTable<T> {
    /// `f(t)` for every table `t`, called in proof order.
    pub fn from_fn(mut f: impl FnMut(Table) -> T) -> Self {
        PerTable(std::array::from_fn(|i| f(Table::ALL[i])))
    }

    /// `(table, &value)` in proof order.
    pub fn iter(&self) -> impl Iterator<Item = (Table, &T)> {
        Table::ALL.into_iter().zip(self.0.iter())
    }

    /// `(table, &mut value)` in proof order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Table, &mut T)> {
        Table::ALL.into_iter().zip(self.0.iter_mut())
    }

    /// The values in proof order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter()
    }

    /// `f(table, value)` for every table, in proof order.
    pub fn map<U>(self, mut f: impl FnMut(Table, T) -> U) -> PerTable<U> {
        let mut it = Table::ALL.into_iter().zip(self.0);
        PerTable(std::array::from_fn(|_| {
            let (t, v) = it.next().expect("one value per table");
            f(t, v)
        }))
    }

    /// The tables whose value satisfies `pred`.
    pub fn tables_where(&self, mut pred: impl FnMut(&T) -> bool) -> TableSet {
        self.iter()
            .filter(|(_, v)| pred(v))
            .fold(TableSet::EMPTY, |s, (t, _)| s.with(t))
    }

    /// The values in proof order, as a `Vec` (index `t` = table `t`, e.g. the prover's per-table inputs).
    pub fn into_vec(self) -> Vec<T> {
        self.0.into()
    }
}

impl<T: Default> Default for PerTable<T> {
    fn default() -> Self {
        Self::from_fn(|_| T::default())
    }
}

impl<T> std::ops::Index<Table> for PerTable<T> {
    type Output = T;
    fn index(&self, t: Table) -> &T {
        &self.0[t.index()]
    }
}

impl<T> std::ops::IndexMut<Table> for PerTable<T> {
    fn index_mut(&mut self, t: Table) -> &mut T {
        &mut self.0[t.index()]
    }
}

impl<T> IntoIterator for PerTable<T> {
    type Item = (Table, T);
    type IntoIter = std::iter::Zip<
        std::array::IntoIter<Table, { Table::COUNT }>,
        std::array::IntoIter<T, { Table::COUNT }>,
    >;
    fn into_iter(self) -> Self::IntoIter {
        Table::ALL.into_iter().zip(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_consistent() {
        for (t, table) in Table::ALL.into_iter().enumerate() {
            assert_eq!(table.index(), t);
            assert_eq!(TABLE_NAMES[t], table.name());
            assert_eq!(Table::from_index(t), Some(table));
            assert_eq!(Table::from_name(table.name()), Some(table));
        }
        assert_eq!(Table::COUNT, 21);
        assert_eq!(table_id::MEMW_A, Table::MemwA.index());
        assert_eq!(Table::from_index(Table::COUNT), None);
        let s = TableSet::of(&[Table::Shift, Table::Cpu]);
        assert!(s.contains(Table::Cpu) && !s.contains(Table::Lt));
        assert_eq!(s.iter().collect::<Vec<_>>(), [Table::Cpu, Table::Shift]);
        assert_eq!(TableSet::EMPTY.with(Table::Lt), TableSet::of(&[Table::Lt]));
        assert_eq!(s.without(Table::Cpu), TableSet::of(&[Table::Shift]));
        assert_eq!(
            s.minus(TableSet::of(&[Table::Shift, Table::Lt])),
            TableSet::of(&[Table::Cpu])
        );
        assert_eq!((s.len(), TableSet::ALL.len()), (2, Table::COUNT));
        assert_eq!(s.to_string(), "CPU, SHIFT");
        assert_eq!(TableSet::EMPTY.to_string(), "no table");
    }

    #[test]
    fn per_table_is_indexed_by_table_in_proof_order() {
        let mut v = PerTable::from_fn(|t| t.index() * 10);
        assert_eq!(v[Table::Cpu], 0);
        assert_eq!(v[Table::Memw], 10 * table_id::MEMW);
        v[Table::Lt] = 7;
        assert_eq!(v.0[table_id::LT], 7);
        let names = v.map(|t, _| t.name());
        assert_eq!(names.0, TABLE_NAMES);
        assert!(names.iter().all(|(t, n)| *n == t.name()));
        let order: Vec<Table> = names.into_iter().map(|(t, _)| t).collect();
        assert_eq!(order, Table::ALL);
        let odd = PerTable::from_fn(|t| t.index() % 2 == 1);
        assert_eq!(
            odd.tables_where(|&b| b).iter().collect::<Vec<_>>(),
            Table::ALL
                .into_iter()
                .filter(|t| t.index() % 2 == 1)
                .collect::<Vec<_>>()
        );
        assert_eq!(PerTable::<u8>::default().into_vec(), vec![0; Table::COUNT]);
    }
}
