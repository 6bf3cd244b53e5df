//! Typed guest input and output: the encoding the guest runtimes' helpers read and write
//! (`zkrv_read_u64`/`zkrv_write_u64`/`zkrv_read_bytes`/`zkrv_write_bytes` in C, `read_u64`/`write_u64`/
//! `read_bytes`/`write_bytes` in `zkrv-guest`): integers little-endian, fixed width; a byte string is a
//! `u32` LE length, then the bytes.
//!
//! ```
//! use zkrv_sdk::io::{Input, Output};
//! let input = Input::new().u64(90).bytes(b"abc").into_bytes();
//! assert_eq!(input.len(), 8 + 4 + 3);
//! let mut out = Output::new(&input);
//! assert_eq!(out.u64().unwrap(), 90);
//! assert_eq!(out.bytes().unwrap(), b"abc");
//! assert!(out.finish().is_ok());
//! ```

/// Builds a private input.
#[derive(Clone, Debug, Default)]
pub struct Input(Vec<u8>);

impl Input {
    pub fn new() -> Input {
        Input::default()
    }
    pub fn u32(mut self, v: u32) -> Input {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(mut self, v: u64) -> Input {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A byte string: `u32` LE length, then the bytes. Panics if `b` is 4 GiB or longer (inputs are capped
    /// far below that).
    pub fn bytes(self, b: &[u8]) -> Input {
        let len = u32::try_from(b.len()).expect("a byte string shorter than 4 GiB");
        let mut s = self.u32(len);
        s.0.extend_from_slice(b);
        s
    }
    /// Raw bytes, no length.
    pub fn raw(mut self, b: &[u8]) -> Input {
        self.0.extend_from_slice(b);
        self
    }
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Why a public output does not decode.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the output ends at byte {at}: {want} more bytes expected")]
    Short { at: usize, want: usize },
    #[error("{0} bytes left after the last value")]
    Trailing(usize),
}

/// Reads values from a public output (or any byte string in this encoding), front to back.
#[derive(Clone, Debug)]
pub struct Output<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Output<'a> {
    pub fn new(bytes: &'a [u8]) -> Output<'a> {
        Output { bytes, at: 0 }
    }
    /// The next `n` raw bytes.
    pub fn raw(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let rest = &self.bytes[self.at..];
        if rest.len() < n {
            return Err(DecodeError::Short {
                at: self.bytes.len(),
                want: n - rest.len(),
            });
        }
        self.at += n;
        Ok(&rest[..n])
    }
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.raw(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.raw(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    /// A byte string (`u32` LE length, then the bytes).
    pub fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.u32()? as usize;
        self.raw(n)
    }
    /// `Ok` if every byte was read.
    pub fn finish(self) -> Result<(), DecodeError> {
        match self.bytes.len() - self.at {
            0 => Ok(()),
            n => Err(DecodeError::Trailing(n)),
        }
    }
}
