//! Bounded capture of a child's merged stdout and stderr.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes kept from the end of the output. Far more than the 4000 chars the
/// record keeps (4 bytes each at most), so the tail is always complete.
pub(crate) const RING_BYTES: usize = 64 * 1024;

/// The last `cap` bytes of everything pushed, in arrival order.
#[derive(Debug)]
pub(crate) struct OutputRing {
    buf: VecDeque<u8>,
    cap: usize,
    total: u64,
}

impl OutputRing {
    pub(crate) fn new(cap: usize) -> OutputRing {
        OutputRing {
            buf: VecDeque::with_capacity(cap.min(8192)),
            cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let keep = &bytes[bytes.len().saturating_sub(self.cap)..];
        let overflow = (self.buf.len() + keep.len()).saturating_sub(self.cap);
        self.buf.drain(..overflow);
        self.buf.extend(keep);
    }

    /// Everything kept, decoded lossily. A character cut at the ring's start
    /// becomes U+FFFD, which the 4000-char tail never reaches.
    pub(crate) fn text(&self) -> String {
        let (a, b) = self.buf.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    pub(crate) fn total_bytes(&self) -> u64 {
        self.total
    }
}

pub(crate) type SharedRing = Arc<Mutex<OutputRing>>;

/// Copy a pipe into the shared ring until EOF or a read error.
pub(crate) async fn pump<R: AsyncRead + Unpin>(mut pipe: R, ring: SharedRing) {
    let mut chunk = [0u8; 8192];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => ring
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(&chunk[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_last_bytes_in_order() {
        let mut r = OutputRing::new(5);
        r.push(b"abc");
        r.push(b"def");
        assert_eq!(r.text(), "bcdef");
        r.push(b"0123456789");
        assert_eq!(r.text(), "56789");
        assert_eq!(r.total_bytes(), 16);
    }
}
