//! Pictures read by `read_file`: which files are pictures (by their first bytes), what a result
//! says about one, and the marker line a stored result keeps so that the engine can read the
//! picture again for a later model call instead of storing its bytes.

use std::fs::{self, File};
use std::io::Read;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::error::ToolError;
use crate::workspace::Workspace;

/// Largest picture `read_file` hands to a model.
pub const MAX_PICTURE_BYTES: u64 = 5 * 1024 * 1024;

const MARKER_START: &str = "[picture: ";
const MARKER_SHA: &str = " sha256=";

/// The extensions `read_file` treats as pictures.
const PICTURE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// A picture file as read for a model.
#[derive(Clone, PartialEq, Eq)]
pub struct Picture {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`, from the file's first bytes.
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
    /// Width and height in pixels, when the header says them plainly.
    pub pixels: Option<(u32, u32)>,
}

impl std::fmt::Debug for Picture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Picture")
            .field("media_type", &self.media_type)
            .field("len", &self.bytes.len())
            .field("sha256", &self.sha256)
            .field("pixels", &self.pixels)
            .finish()
    }
}

impl Picture {
    /// The bytes in standard base64, as the model APIs take them.
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }

    /// `shown: a PNG picture (image/png), 70 bytes, 1x1 pixels`.
    pub fn describe(&self, shown: &str) -> String {
        let name = self
            .media_type
            .trim_start_matches("image/")
            .to_ascii_uppercase();
        let name = if name == "WEBP" { "WebP".into() } else { name };
        let mut s = format!(
            "{shown}: a {name} picture ({}), {} bytes",
            self.media_type,
            self.bytes.len()
        );
        if let Some((w, h)) = self.pixels {
            s.push_str(&format!(", {w}x{h} pixels"));
        }
        s
    }
}

/// Whether `path` names a picture by its extension (png, jpg, jpeg, gif, webp).
pub fn is_picture_path(path: &str) -> bool {
    std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| PICTURE_EXTENSIONS.iter().any(|p| p.eq_ignore_ascii_case(e)))
}

/// The media type the first bytes say, if they start a PNG, JPEG, GIF or WebP picture.
pub fn sniff_media_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The first line of a stored `read_file` result that carries a picture.
pub fn picture_marker(shown: &str, sha256: &str) -> String {
    format!("{MARKER_START}{shown}{MARKER_SHA}{sha256}]")
}

/// The path and SHA-256 of a result that starts with a picture marker.
pub fn parse_picture_marker(content: &str) -> Option<(&str, &str)> {
    let line = content.lines().next()?;
    let inner = line.strip_prefix(MARKER_START)?.strip_suffix(']')?;
    let (path, sha) = inner.rsplit_once(MARKER_SHA)?;
    let hex = sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit());
    (hex && !path.is_empty()).then_some((path, sha))
}

/// Read `shown` as a picture: `Ok(None)` when its first bytes are not a picture's, an error when
/// it cannot be read or is over [`MAX_PICTURE_BYTES`].
pub fn load_picture(ws: &Workspace, shown: &str) -> Result<Option<Picture>, ToolError> {
    let path = ws.resolve(shown)?;
    let meta = fs::metadata(&path).map_err(|e| ToolError::io("read", shown, e))?;
    if !meta.is_file() {
        return Err(ToolError::Refused(format!(
            "'{shown}' is not a regular file"
        )));
    }
    let mut head = [0u8; 16];
    let mut file = File::open(&path).map_err(|e| ToolError::io("read", shown, e))?;
    let n = read_head(&mut file, &mut head).map_err(|e| ToolError::io("read", shown, e))?;
    let Some(media_type) = sniff_media_type(&head[..n]) else {
        return Ok(None);
    };
    if meta.len() > MAX_PICTURE_BYTES {
        return Err(ToolError::Refused(format!(
            "'{shown}' is a picture of {} bytes, over the 5 MiB limit for pictures",
            meta.len()
        )));
    }
    let mut bytes = head[..n].to_vec();
    // Read at most one byte past the limit, in case the file grew since it was measured.
    file.take(MAX_PICTURE_BYTES + 1 - n as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io("read", shown, e))?;
    if bytes.len() as u64 > MAX_PICTURE_BYTES {
        return Err(ToolError::Refused(format!(
            "'{shown}' is a picture over the 5 MiB limit for pictures"
        )));
    }
    let sha256 = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let pixels = pixel_size(media_type, &bytes);
    Ok(Some(Picture {
        media_type,
        bytes,
        sha256,
        pixels,
    }))
}

fn read_head(file: &mut File, head: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Width and height from the picture's header, where they are plainly written.
fn pixel_size(media_type: &str, b: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?]) as u32);
    let le16 = |i: usize| Some(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?]) as u32);
    let be32 = |i: usize| Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let le24 = |i: usize| {
        let s = b.get(i..i + 3)?;
        Some((s[0] as u32) | ((s[1] as u32) << 8) | ((s[2] as u32) << 16))
    };
    match media_type {
        // The IHDR chunk comes first: width and height at 16 and 20.
        "image/png" if b.get(12..16)? == b"IHDR" => Some((be32(16)?, be32(20)?)),
        "image/gif" => Some((le16(6)?, le16(8)?)),
        "image/webp" => match b.get(12..16)? {
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            b"VP8L" if *b.get(20)? == 0x2f => {
                let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
                Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
            }
            b"VP8 " if b.get(23..26)? == [0x9d, 0x01, 0x2a] => {
                Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff))
            }
            _ => None,
        },
        "image/jpeg" => {
            // Walk the segments to the first start-of-frame.
            let mut i = 2;
            loop {
                while *b.get(i)? != 0xff {
                    i += 1;
                }
                while *b.get(i)? == 0xff {
                    i += 1;
                }
                let marker = *b.get(i)?;
                i += 1;
                match marker {
                    0xd0..=0xd7 | 0x01 => continue,
                    0xda | 0xd9 => return None,
                    0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                        return Some((be16(i + 5)?, be16(i + 3)?));
                    }
                    _ => i += be16(i)? as usize,
                }
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1x1 PNG.
    const PNG: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64,
        0x60, 0xf8, 0x5f, 0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];

    #[test]
    fn pictures_are_named_by_extension_and_known_by_their_first_bytes() {
        for p in ["a.png", "b/c.JPG", "d.jpeg", "e.gif", "f.WebP"] {
            assert!(is_picture_path(p), "{p}");
        }
        for p in ["a.txt", "png", "a.png.txt", "a.svg", "a.bmp"] {
            assert!(!is_picture_path(p), "{p}");
        }
        assert_eq!(sniff_media_type(PNG), Some("image/png"));
        assert_eq!(
            sniff_media_type(&[0xff, 0xd8, 0xff, 0xe0]),
            Some("image/jpeg")
        );
        assert_eq!(sniff_media_type(b"GIF89a\x02\x00"), Some("image/gif"));
        assert_eq!(
            sniff_media_type(b"RIFF\x10\x00\x00\x00WEBPVP8X"),
            Some("image/webp")
        );
        assert_eq!(sniff_media_type(b"hello, world"), None);
    }

    #[test]
    fn pixel_sizes_are_read_from_the_headers() {
        assert_eq!(pixel_size("image/png", PNG), Some((1, 1)));
        assert_eq!(
            pixel_size("image/gif", b"GIF89a\x20\x01\x10\x00"),
            Some((288, 16))
        );
        // A JPEG with an APP0 segment before its SOF0 (height 3, width 640).
        let jpeg = [
            0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x4a, 0x46, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00,
            0x03, 0x02, 0x80, 0x03,
        ];
        assert_eq!(pixel_size("image/jpeg", &jpeg), Some((640, 3)));
        let mut vp8x = b"RIFF\x00\x00\x00\x00WEBPVP8X".to_vec();
        vp8x.extend_from_slice(&[0; 8]);
        vp8x.extend_from_slice(&[0x1f, 0x00, 0x00, 0x09, 0x00, 0x00]);
        assert_eq!(pixel_size("image/webp", &vp8x), Some((32, 10)));
        assert_eq!(pixel_size("image/png", &PNG[..20]), None);
    }

    #[test]
    fn a_marker_gives_back_its_path_and_hash() {
        let sha = "ab".repeat(32);
        let m = picture_marker("shots/a b].png", &sha);
        assert_eq!(m, format!("[picture: shots/a b].png sha256={sha}]"));
        let stored = format!("{m}\nshots/a b].png: a PNG picture");
        assert_eq!(
            parse_picture_marker(&stored),
            Some(("shots/a b].png", &*sha))
        );
        assert_eq!(parse_picture_marker("[picture: a.png sha256=12]"), None);
        assert_eq!(parse_picture_marker("just text"), None);
    }

    #[test]
    fn a_picture_is_loaded_with_its_hash_and_size_and_a_large_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        fs::write(dir.path().join("a.png"), PNG).unwrap();
        let p = load_picture(&ws, "a.png").unwrap().unwrap();
        assert_eq!(p.media_type, "image/png");
        assert_eq!(p.bytes, PNG);
        assert_eq!(p.pixels, Some((1, 1)));
        let want: String = Sha256::digest(PNG)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(p.sha256, want);
        assert!(p.base64().starts_with("iVBORw0KGgo"), "{}", p.base64());
        assert_eq!(
            p.describe("a.png"),
            "a.png: a PNG picture (image/png), 70 bytes, 1x1 pixels"
        );

        fs::write(dir.path().join("text.png"), "not a picture").unwrap();
        assert_eq!(load_picture(&ws, "text.png").unwrap(), None);

        let mut big = PNG.to_vec();
        big.resize(MAX_PICTURE_BYTES as usize + 1, 0);
        fs::write(dir.path().join("big.png"), &big).unwrap();
        let e = load_picture(&ws, "big.png").unwrap_err().to_string();
        assert!(e.contains("5 MiB"), "{e}");
    }
}
