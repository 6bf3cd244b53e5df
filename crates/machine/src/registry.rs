//! The table registry: the one list of the machine's tables, in proof order. Everything indexed by table
//! (the AIRs, the witness traces, [`TABLE_NAMES`], [`table_id`], [`TableSet`]) derives from it.

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

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The tables of the set, in proof order.
    pub fn iter(self) -> impl Iterator<Item = Table> {
        Table::ALL.into_iter().filter(move |&t| self.contains(t))
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
    }
}
