//! Typed input and output, the codec (docs/abi.md "Typed I/O"; feature `serde`).
//!
//! A value is one **frame**: a `u32` little-endian length `len`, then `len` bytes, the value's
//! [postcard](https://postcard.jamesmunns.com/wire-format) 1.x encoding (varint integers, length-prefixed
//! sequences and strings, no self-description). The frame is the same as a byte string of
//! `write_bytes`/`read_bytes`, so a guest may mix typed values, fixed-width integers and byte strings in one
//! stream. The host writes frames with `zkrv_sdk::io::Input::write` and reads them with
//! `zkrv_sdk::io::OutputReader::read`.
//!
//! This file makes no system call (the reader is a closure), so that the host can compile it: zkrv-sdk's
//! tests include it to check that the host's encoder and this decoder agree.

use alloc::vec::Vec;
use core::fmt;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Bytes of a frame's length prefix.
pub const FRAME_HEADER_BYTES: usize = 4;

/// Why a typed value could not be read (the guest's `read` prints it to fd 2 and exits
/// `READ_ERROR_EXIT_CODE`, 103).
#[derive(Debug)]
pub enum ReadError {
    /// The input ended inside a frame: `want` more bytes were needed (of the 4-byte length when `header`,
    /// else of the frame's body), only `got` were left.
    Truncated { header: bool, want: u64, got: u64 },
    /// The frame's bytes are not a postcard encoding of the type.
    Decode(postcard::Error),
    /// The value ends before its frame does: `left` bytes of the frame are unused.
    Trailing { left: usize },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Truncated {
                header: true,
                want,
                got,
            } => {
                write!(f, "the input ends before the value's frame: {want} length bytes expected, {got} left")
            }
            ReadError::Truncated {
                header: false,
                want,
                got,
            } => {
                write!(
                    f,
                    "the input ends inside the value's frame: {want} bytes expected, {got} left"
                )
            }
            ReadError::Decode(e) => {
                write!(f, "the frame does not decode as the type (postcard): {e}")
            }
            ReadError::Trailing { left } => {
                write!(f, "the value leaves {left} bytes of its frame unread")
            }
        }
    }
}

/// Encodes `value` as one frame (length, then postcard bytes). Errors: what postcard refuses (a sequence
/// of unknown length, a custom `Serialize` error), or a body of 4 GiB or more (`SerializeBufferFull`).
pub fn encode_frame<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, postcard::Error> {
    let mut frame = postcard::to_extend(value, alloc::vec![0u8; FRAME_HEADER_BYTES])?;
    let len = u32::try_from(frame.len() - FRAME_HEADER_BYTES)
        .map_err(|_| postcard::Error::SerializeBufferFull)?;
    frame[..FRAME_HEADER_BYTES].copy_from_slice(&len.to_le_bytes());
    Ok(frame)
}

/// Decodes a frame's body (the bytes after the length) as a `T`, which must use every byte.
pub fn decode_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ReadError> {
    let (value, rest) = postcard::take_from_bytes(body).map_err(ReadError::Decode)?;
    if !rest.is_empty() {
        return Err(ReadError::Trailing { left: rest.len() });
    }
    Ok(value)
}

/// Reads one frame's body through `read`, which fills its buffer unless the input ends and returns the
/// count (the guest's `read_input`). The body is read in chunks of at most 4 KiB, so a corrupt length
/// larger than the input is reported as [`ReadError::Truncated`] after reading what is there, not as a
/// failed allocation of `len` bytes.
pub fn read_frame(mut read: impl FnMut(&mut [u8]) -> usize) -> Result<Vec<u8>, ReadError> {
    let mut header = [0u8; FRAME_HEADER_BYTES];
    let got = read(&mut header);
    if got < FRAME_HEADER_BYTES {
        return Err(ReadError::Truncated {
            header: true,
            want: FRAME_HEADER_BYTES as u64,
            got: got as u64,
        });
    }
    let len = u32::from_le_bytes(header) as usize;
    let mut body = Vec::new();
    let mut chunk = [0u8; 4096];
    while body.len() < len {
        let want = (len - body.len()).min(chunk.len());
        let got = read(&mut chunk[..want]);
        body.extend_from_slice(&chunk[..got]);
        if got < want {
            return Err(ReadError::Truncated {
                header: false,
                want: len as u64,
                got: body.len() as u64,
            });
        }
    }
    Ok(body)
}

/// Reads one frame through `read` (as [`read_frame`]) and decodes it as a `T` (as [`decode_body`]).
pub fn read_value<T: DeserializeOwned>(
    read: impl FnMut(&mut [u8]) -> usize,
) -> Result<T, ReadError> {
    decode_body(&read_frame(read)?)
}
