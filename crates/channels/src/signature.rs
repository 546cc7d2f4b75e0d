//! The webhook signature both ways: `X-Troupe-Signature: sha256=<hex>`, the hex HMAC-SHA256 of
//! the raw body under the account's secret. Pure: no I/O, no clock.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The header that carries the signature, inbound and outbound.
pub const SIGNATURE_HEADER: &str = "X-Troupe-Signature";

const PREFIX: &str = "sha256=";

/// The header value for `body` under `secret`.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    // An HMAC takes a key of any length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(body);
    let mut out = String::with_capacity(PREFIX.len() + 64);
    out.push_str(PREFIX);
    for b in mac.finalize().into_bytes() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Whether `header` is the signature of `body` under `secret`. The comparison is the MAC's own
/// constant-time check, so timing does not tell how much of a guess was right.
pub fn verify(secret: &[u8], body: &[u8], header: Option<&str>) -> bool {
    let Some(hex) = header.and_then(|h| h.trim().strip_prefix(PREFIX)) else {
        return false;
    };
    let Some(given) = decode_hex(hex) else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(body);
    mac.verify_slice(&given).is_ok()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sig_matches_the_published_hmac_sha256_vector() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        assert_eq!(
            sign(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn sig_verifies_its_own_and_nothing_else() {
        let body = br#"{"chat_id":"c1","text":"hi"}"#;
        let good = sign(b"s3cret", body);
        assert!(verify(b"s3cret", body, Some(&good)));
        assert!(verify(
            b"s3cret",
            body,
            Some(&good.to_uppercase().replace("SHA256=", "sha256="))
        ));
        assert!(!verify(b"other", body, Some(&good)), "another secret");
        assert!(!verify(b"s3cret", b"{}", Some(&good)), "another body");
        assert!(!verify(b"s3cret", body, None), "no header");
        assert!(
            !verify(b"s3cret", body, Some(&good[7..])),
            "no sha256= prefix"
        );
        assert!(
            !verify(b"s3cret", body, Some(&good[..good.len() - 2])),
            "short"
        );
        assert!(!verify(b"s3cret", body, Some("sha256=zz")), "not hex");
        let flipped = format!("{}0", &good[..good.len() - 1]);
        assert!(flipped == good || !verify(b"s3cret", body, Some(&flipped)));
    }
}
