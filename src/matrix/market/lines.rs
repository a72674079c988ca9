//! The line reader: a reusable buffer, a 1-based line counter, comment and blank lines
//! skipped, over-long lines and bad UTF-8 rejected, read failures told apart from bad input.

use std::io::{self, BufRead, Read};

use super::{invalid, market_err};
use crate::base::error::{KrylovError, Result};

/// Longest accepted line, newline included.
const MAX_LINE_BYTES: usize = 1 << 20;

/// A line reader with a reusable buffer and a 1-based line counter.
pub(super) struct Lines<R> {
    reader: R,
    pub(super) buf: Vec<u8>,
    /// Number of lines read so far (= the number of the line in `buf`).
    pub(super) line: usize,
}

impl<R: BufRead> Lines<R> {
    pub(super) fn new(reader: R) -> Self {
        Lines {
            reader,
            buf: Vec::with_capacity(256),
            line: 0,
        }
    }

    /// Reads the next physical line into `buf`, newline stripped; `false` at end of input.
    pub(super) fn read_raw(&mut self, name: &str) -> Result<bool> {
        self.buf.clear();
        let n = (&mut self.reader)
            .take(MAX_LINE_BYTES as u64)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| read_error(name, self.line + 1, e))?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if n >= MAX_LINE_BYTES {
            return Err(market_err(
                name,
                self.line,
                invalid(format!("line longer than {MAX_LINE_BYTES} bytes")),
            ));
        }
        Ok(true)
    }

    /// The next line that is neither blank nor a comment, with its number; `None` at the end.
    pub(super) fn next_data(&mut self, name: &str) -> Result<Option<(usize, &str)>> {
        loop {
            if !self.read_raw(name)? {
                return Ok(None);
            }
            match self.buf.iter().find(|b| !b.is_ascii_whitespace()) {
                None | Some(b'%') => continue,
                Some(_) => break,
            }
        }
        let line = self.line;
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((line, s))),
            Err(e) => {
                let at = e.valid_up_to();
                Err(market_err(
                    name,
                    line,
                    invalid(format!(
                        "line is not valid UTF-8 (byte 0x{:02x} at column {})",
                        self.buf[at],
                        at + 1
                    )),
                ))
            }
        }
    }
}

/// Corrupt or truncated compressed data is a problem of the input, reported on its line;
/// anything else is an I/O failure.
fn read_error(name: &str, line: usize, e: io::Error) -> KrylovError {
    match e.kind() {
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::UnexpectedEof => {
            market_err(
                name,
                line,
                invalid(format!(
                    "cannot read the input (corrupt or truncated compressed data?): {e}"
                )),
            )
        }
        _ => KrylovError::io(name, e),
    }
}
