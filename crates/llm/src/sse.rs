//! Minimal incremental Server-Sent Events parser (only what model APIs use:
//! `event:` and `data:` fields, comments, blank-line dispatch).

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

impl SseParser {
    /// Feed raw bytes; returns the events completed by them. Lines are only
    /// decoded once complete, so multi-byte UTF-8 split across chunks is fine.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(pos) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + pos;
            let line = String::from_utf8_lossy(&self.buf[start..end]).into_owned();
            start = end + 1;
            self.line(line.strip_suffix('\r').unwrap_or(&line), &mut out);
        }
        self.buf.drain(..start);
        out
    }

    /// End of input: treat a trailing unterminated line and pending event as
    /// complete (some servers omit the final blank line).
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(&rest).into_owned();
            self.line(line.strip_suffix('\r').unwrap_or(&line), &mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if let Some(data) = self.data.take() {
            out.push(SseEvent { event, data });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_split_lines_and_multiline_data() {
        let mut p = SseParser::default();
        let mut evs = p.push(b"event: a\nda");
        assert!(evs.is_empty());
        evs.extend(p.push(b"ta: x\r\ndata:y\n\n: comment\n\ndata: z\n"));
        evs.extend(p.finish());
        assert_eq!(
            evs,
            vec![
                SseEvent {
                    event: Some("a".into()),
                    data: "x\ny".into()
                },
                SseEvent {
                    event: None,
                    data: "z".into()
                },
            ]
        );
    }

    #[test]
    fn utf8_split_across_chunks() {
        let mut p = SseParser::default();
        let bytes = "data: héllo\n\n".as_bytes();
        let mut evs = p.push(&bytes[..8]);
        evs.extend(p.push(&bytes[8..]));
        assert_eq!(evs[0].data, "héllo");
    }
}
