//! Typed guest input and output, the host side of docs/abi.md "Typed I/O": [`Input`] builds a private
//! input, [`OutputReader`] reads a public output ([`crate::Receipt::output_reader`]) back as values.
//!
//! Two encodings, mixed freely in one stream, each read by the guest in the order it was written:
//! * **Typed values** ([`Input::write`], [`OutputReader::read`]; any serde type): one *frame* per value, a
//!   `u32` little-endian length, then that many bytes of the value's
//!   [postcard](https://postcard.jamesmunns.com/wire-format) 1.x encoding. The Rust guest runtime reads
//!   them with `zkrv_guest::read::<T>()` and writes them with `zkrv_guest::commit(&v)` (feature `serde`).
//! * **Fixed width** ([`Input::write_u32`], [`write_u64`](Input::write_u64), [`write_i64`](Input::write_i64),
//!   [`write_bytes`](Input::write_bytes); the `read_*` methods of [`OutputReader`]): integers little-endian,
//!   4 or 8 bytes; a byte string is a `u32` LE length, then the bytes. The C runtime's `zkrv_read_u64`,
//!   `zkrv_read_bytes`, `zkrv_write_u64`, ... and the Rust runtime's `read_u64`, `write_u64`, ... use these
//!   (C guests have no postcard decoder: use these with them).
//!
//! ```
//! use zkrv_sdk::io::{Input, OutputReader};
//! let bytes = Input::new()
//!     .write(&("abc", vec![1u64, 300]))?
//!     .write_u64(90)
//!     .write_bytes(b"xyz")?
//!     .into_bytes();
//! // The frame: length 8, then postcard: "abc" (length 3 + bytes), a Vec of 2 varints (1; 300 = 0xac 0x02).
//! assert_eq!(&bytes[..12], &[8, 0, 0, 0, 3, b'a', b'b', b'c', 2, 1, 0xac, 0x02][..]);
//! let mut out = OutputReader::new(&bytes);
//! let (s, v): (String, Vec<u64>) = out.read()?;
//! assert_eq!((s.as_str(), v), ("abc", vec![1, 300]));
//! assert_eq!(out.read_u64()?, 90);
//! assert_eq!(out.read_bytes()?, b"xyz");
//! out.finish()?;
//! # Ok::<(), zkrv_sdk::Error>(())
//! ```

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Bytes of a frame's (and a byte string's) `u32` length prefix.
pub const FRAME_HEADER_BYTES: usize = 4;

/// Why a value cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// postcard refuses the value (a sequence of unknown length, a custom `Serialize` error).
    #[error("the value does not encode (postcard): {0}")]
    Postcard(#[source] postcard::Error),
    /// A frame or byte string of `len` bytes: the length prefix holds at most 2^32 - 1.
    #[error("a frame or byte string of {len} bytes: at most 4294967295 fit a u32 length")]
    TooLong {
        /// Its length, bytes.
        len: usize,
    },
}

/// Why a public output (or any byte string in these encodings) does not decode. `at` is a byte offset in
/// it: where the value starts.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The bytes end inside the value starting at `at`: `want` more bytes were expected.
    #[error("the output ends inside the value at byte {at}: {want} more bytes expected")]
    Short {
        /// Where the value starts.
        at: usize,
        /// Bytes missing.
        want: usize,
    },
    /// The frame at `at` is not a postcard encoding of `ty`.
    #[error("the frame at byte {at} does not decode as {ty} (postcard): {error}")]
    Postcard {
        /// Where the frame starts.
        at: usize,
        /// The type asked for.
        ty: &'static str,
        /// postcard's error.
        #[source]
        error: postcard::Error,
    },
    /// The `ty` value of the frame at `at` ends `left` bytes before its frame does.
    #[error("the {ty} value of the frame at byte {at} leaves {left} bytes of the frame unread")]
    FrameTrailing {
        /// Where the frame starts.
        at: usize,
        /// The type read.
        ty: &'static str,
        /// Bytes of the frame left unread.
        left: usize,
    },
    /// [`OutputReader::finish`]: bytes are left after the last value read.
    #[error("{0} bytes left after the last value")]
    Trailing(usize),
}

/// Builds a private input, value by value (see the [module docs](self) for the encodings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input(Vec<u8>);

impl Input {
    /// An empty input.
    pub fn new() -> Input {
        Input::default()
    }

    /// Appends `value` as one typed frame (`u32` LE length, then its postcard bytes), read in the guest by
    /// `zkrv_guest::read::<T>()` with a `T` that deserializes from the same serde data model.
    pub fn write<T: Serialize + ?Sized>(mut self, value: &T) -> Result<Input, EncodeError> {
        let start = self.0.len();
        self.0.extend_from_slice(&[0; FRAME_HEADER_BYTES]);
        let mut buf = postcard::to_extend(value, self.0).map_err(EncodeError::Postcard)?;
        let len = buf.len() - start - FRAME_HEADER_BYTES;
        let len32 = u32::try_from(len).map_err(|_| EncodeError::TooLong { len })?;
        buf[start..start + FRAME_HEADER_BYTES].copy_from_slice(&len32.to_le_bytes());
        Ok(Input(buf))
    }

    /// Appends `v` as 4 bytes LE (C `zkrv_read_u32`, Rust `read_u32`).
    pub fn write_u32(mut self, v: u32) -> Input {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends `v` as 8 bytes LE (C `zkrv_read_u64`, Rust `read_u64`).
    pub fn write_u64(mut self, v: u64) -> Input {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends `v` as 8 bytes LE, two's complement (C `zkrv_read_i64`; Rust `read_u64(..) as i64`).
    pub fn write_i64(self, v: i64) -> Input {
        self.write_u64(v as u64)
    }

    /// Appends a byte string: `u32` LE length, then the bytes (C `zkrv_read_bytes`, Rust `read_bytes`).
    /// Errors: 4 GiB or longer.
    pub fn write_bytes(self, b: &[u8]) -> Result<Input, EncodeError> {
        let len = u32::try_from(b.len()).map_err(|_| EncodeError::TooLong { len: b.len() })?;
        Ok(self.write_u32(len).write_raw(b))
    }

    /// Appends raw bytes, no length.
    pub fn write_raw(mut self, b: &[u8]) -> Input {
        self.0.extend_from_slice(b);
        self
    }

    /// The input so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The input's bytes (what [`crate::prove`] takes as the private input).
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Reads values from a public output (or any byte string in these encodings), front to back, in the order
/// the guest wrote them.
#[derive(Clone, Debug)]
pub struct OutputReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> OutputReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> OutputReader<'a> {
        OutputReader { bytes, at: 0 }
    }

    /// The byte offset of the next value.
    pub fn position(&self) -> usize {
        self.at
    }

    /// The bytes not read yet.
    pub fn remaining(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }

    /// The next `n` raw bytes.
    pub fn read_raw(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        self.take(n, self.at)
    }

    /// The next `n` bytes, part of the value that starts at `start` (for the error).
    fn take(&mut self, n: usize, start: usize) -> Result<&'a [u8], DecodeError> {
        let rest = &self.bytes[self.at..];
        if rest.len() < n {
            return Err(DecodeError::Short {
                at: start,
                want: n - rest.len(),
            });
        }
        self.at += n;
        Ok(&rest[..n])
    }

    fn read_array<const N: usize>(&mut self, start: usize) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, start)?);
        Ok(a)
    }

    /// One typed frame (`u32` LE length, then postcard bytes) as a `T`, which must use the whole frame
    /// (`zkrv_guest::commit(&v)` in the guest). On an error the reader does not advance.
    pub fn read<T: DeserializeOwned>(&mut self) -> Result<T, DecodeError> {
        let start = self.at;
        let ty = std::any::type_name::<T>();
        let res = (|| {
            let len = u32::from_le_bytes(self.read_array(start)?) as usize;
            let body = self.take(len, start)?;
            let (value, rest) =
                postcard::take_from_bytes(body).map_err(|error| DecodeError::Postcard {
                    at: start,
                    ty,
                    error,
                })?;
            if !rest.is_empty() {
                return Err(DecodeError::FrameTrailing {
                    at: start,
                    ty,
                    left: rest.len(),
                });
            }
            Ok(value)
        })();
        if res.is_err() {
            self.at = start;
        }
        res
    }

    /// 4 bytes LE.
    pub fn read_u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.read_array(self.at)?))
    }

    /// 8 bytes LE.
    pub fn read_u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.read_array(self.at)?))
    }

    /// 8 bytes LE, two's complement.
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.read_array(self.at)?))
    }

    /// A byte string (`u32` LE length, then the bytes). On an error the reader does not advance.
    pub fn read_bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let start = self.at;
        let res = (|| {
            let n = u32::from_le_bytes(self.read_array(start)?) as usize;
            self.take(n, start)
        })();
        if res.is_err() {
            self.at = start;
        }
        res
    }

    /// `Ok` if every byte was read, else [`DecodeError::Trailing`].
    pub fn finish(self) -> Result<(), DecodeError> {
        match self.bytes.len() - self.at {
            0 => Ok(()),
            n => Err(DecodeError::Trailing(n)),
        }
    }
}
