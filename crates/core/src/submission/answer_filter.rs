//! The filter on words handed over with `end_turn({reason: "done", answer})` (digest B §4.5
//! W3). The answer must be the deliverable itself — a title, a line, a list, a paragraph — not
//! a remark about the work. Whatever passes still waits on the user's word (W5); this only
//! keeps acknowledgements and status lines from being recorded as work.
//!
//! How: the text is split into units (a lower-cased Latin word or number, or one CJK
//! character; punctuation, emoji and markup drop out), known non-deliverable phrases are
//! matched greedily, and what is left over is the content. Without at least two code points of
//! content the answer is refused, named by the strongest kind of phrase it was made of — so
//! "**Done!** ✅ All tasks completed." is a status claim however it is dressed up.

use std::fmt;

/// Why an answer is not a deliverable.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AnswerFault {
    TooShort,
    EmptyRemark,
    Promise,
    Question,
    Acknowledgement,
    StatusClaim,
}

/// The refusal of an `answer` (code `answer_not_deliverable`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct AnswerRefusal {
    pub fault: AnswerFault,
}

impl AnswerRefusal {
    pub fn code(&self) -> &'static str {
        "answer_not_deliverable"
    }

    /// What the Bot is told. It names what was wrong, asks for the words themselves, and for
    /// file work says to keep working until the file exists — never to write the words to a
    /// file and hand that over (LEGACY hint, §4.12).
    pub fn message(&self) -> String {
        let what = match self.fault {
            AnswerFault::TooShort => "`answer` is too short to be the work",
            AnswerFault::EmptyRemark => "`answer` holds no words of the work",
            AnswerFault::Promise => "`answer` promises the work instead of giving it",
            AnswerFault::Question => "`answer` is a question, not the work",
            AnswerFault::Acknowledgement => "`answer` is an acknowledgement, not the work",
            AnswerFault::StatusClaim => "`answer` says how the work stands instead of giving it",
        };
        format!(
            "{what}. Put the words themselves in `answer` — the title, the line, the list or the \
             paragraph that was asked for. If this ticket's work is a file, keep working until \
             the file exists."
        )
    }
}

impl fmt::Display for AnswerFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AnswerFault::TooShort => "too_short",
            AnswerFault::EmptyRemark => "empty_remark",
            AnswerFault::Promise => "promise",
            AnswerFault::Question => "question",
            AnswerFault::Acknowledgement => "acknowledgement",
            AnswerFault::StatusClaim => "status_claim",
        })
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Words that carry nothing on their own ("the", "it", "了"); they never decide the kind.
    Filler,
    Empty,
    Ack,
    Status,
    Promise,
}

// Phrase lists, `|`-separated. Filler also holds what the work is called: "the slogan is
// ready" says nothing more than "ready".
const FILLER: &str = "the|a|an|it|its|it's|this|that|is|are|am|was|were|be|been|has|have|had|i|i'm|i've|\
    we|we're|we've|you|all|just|now|already|so|and|of|for|to|on|my|our|your|task|tasks|\
    job|work|everything|status|update|progress|result|results|answer|final|successfully|\
    fully|please|very|much|really|yet|still|as|requested|asked|了|的|都|已经|已|我|我们|这个|这|那个|\
    任务|工作|一切|全部|所有|啦|呢|吧|哦|呀|啊|嗯|请|结果|状态|进度|现在|目前|你|您|都已|按要求|要求|file|files|draft|drafts|\
    version|deliverable|deliverables|output|document|doc|report|slogan|slogans|poster|\
    video|script|title|titles|copy|text|content|list|paragraph|summary|design|image|\
    images|picture|文件|草稿|版本|文案|海报|视频|脚本|标题|内容|列表|段落|总结|报告|设计|图片|稿子|初稿|定稿";

const EMPTY: &str = "none|nothing|nil|null|empty|n/a|na|tbd|tba|see above|see below|as above|as follows|\
    here it is|here you go|here|below|above|attached|see attached|无|没有|暂无|空|见上|见下|如下|如上|\
    见附件|附件|以下|以上";

const ACK: &str = "ok|okay|k|sure|got it|noted|roger|understood|alright|all right|yes|yep|yeah|fine|\
    no problem|sounds good|of course|copy|copy that|acknowledged|thanks|thank|thank you|\
    will do|good|great|好的|好|收到|明白|明白了|了解|知道了|行|可以|没问题|好嘞|嗯嗯|谢谢|遵命";

const STATUS: &str = "done|finished|finish|complete|completed|ready|all set|working on|working|\
    in progress|on it|waiting|wait|waiting for|pending|stuck|unable|can't|cannot|failed|\
    blocked|handled|taken care of|sorted|fixed|delivered|submitted|handed over|uploaded|\
    saved|updated|wrapped up|completion|完成|完成了|已完成|做好了|做完了|好了|搞定|搞定了|弄好了|写好了|处理好了|正在做|\
    正在处理|正在|进行中|处理中|在做|等待|等待中|在等|等|做不了|无法完成|无法|已提交|已交付|交付了|提交了|完毕|结束了|ok了|written|made|\
    created|generated|prepared|finalized|drafted|写好|做好|弄好|改好|改好了|准备好|准备好了";

const PROMISE: &str = "i'll|i will|we'll|we will|will|going to|gonna|shortly|soon|later|in a moment|\
    in a minute|coming|coming soon|coming up|on the way|let me|stay tuned|send|share|\
    follow|to follow|follow up|get back|get back to you|next|稍后|马上|随后|待会|待会儿|一会|一会儿|等下|\
    等一下|接下来|我会|我将|即将|稍等|请稍等|发给你|给你|马上发|后续|晚点|下一步|尽快|很快|asap";

/// Markers of a question put to someone (only read when the text ends in a question mark).
const ASKING: &str = "you|your|should|shall|would|could|can|may|do|does|want|你|您|吗|要不要|是否|需要|行不行|好不好|怎么样|\
    如何|呢";

/// Openings that make a question even without a question mark.
const ASKING_OPENINGS: &str =
    "should i|shall i|shall we|should we|do you want|would you like|要不要|需不需要|是否需要|你看";

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F
        | 0x3040..=0x30FF | 0xAC00..=0xD7AF)
}

/// Latin words (with an inner apostrophe or slash kept: "i'll", "n/a") and single CJK chars.
fn units(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let c = if c == '’' { '\'' } else { c };
        if is_cjk(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if (c == '\'' || c == '/')
            && !word.is_empty()
            && chars
                .get(i + 1)
                .is_some_and(|n| n.is_alphanumeric() && !is_cjk(*n))
        {
            word.push(c);
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn phrase_book() -> Vec<(Vec<String>, Kind)> {
    let mut book = Vec::new();
    for (list, kind) in [
        (FILLER, Kind::Filler),
        (EMPTY, Kind::Empty),
        (ACK, Kind::Ack),
        (STATUS, Kind::Status),
        (PROMISE, Kind::Promise),
    ] {
        for phrase in list.split('|') {
            book.push((units(phrase), kind));
        }
    }
    // Longest first, so "got it" wins over "it" and "完成了" over "完成".
    book.sort_by_key(|(phrase, _)| std::cmp::Reverse(phrase.len()));
    book
}

fn starts_with(units: &[String], phrase: &[String]) -> bool {
    units.len() >= phrase.len() && units[..phrase.len()] == *phrase
}

/// W3: `Ok` when `text` can be handed over as words; the refusal says why and what to do.
pub fn answer_filter(text: &str) -> Result<(), AnswerRefusal> {
    let refuse = |fault| Err(AnswerRefusal { fault });
    let trimmed = text.trim();
    if trimmed.chars().count() < 2 {
        return refuse(AnswerFault::TooShort);
    }
    let units = units(trimmed);
    let book = phrase_book();
    let mut content_points = 0usize;
    let mut strongest: Option<Kind> = None;
    let mut i = 0;
    while i < units.len() {
        match book.iter().find(|(p, _)| starts_with(&units[i..], p)) {
            Some((phrase, kind)) => {
                if *kind != Kind::Filler {
                    strongest = strongest.max(Some(*kind));
                }
                i += phrase.len();
            }
            None => {
                content_points += units[i].chars().count();
                i += 1;
            }
        }
    }

    let asks = ASKING_OPENINGS
        .split('|')
        .any(|o| starts_with(&units, &self::units(o)))
        || (trimmed.ends_with(['?', '？'])
            && (content_points == 0
                || units.iter().any(|u| ASKING.split('|').any(|a| a == u))
                || ASKING
                    .split('|')
                    .filter(|a| a.chars().count() > 1 && a.chars().all(is_cjk))
                    .any(|a| trimmed.contains(a))));
    if asks {
        return refuse(AnswerFault::Question);
    }
    if content_points >= 2 {
        return Ok(());
    }
    refuse(match strongest {
        Some(Kind::Promise) => AnswerFault::Promise,
        Some(Kind::Status) => AnswerFault::StatusClaim,
        Some(Kind::Ack) => AnswerFault::Acknowledgement,
        Some(Kind::Empty | Kind::Filler) | None => AnswerFault::EmptyRemark,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    // The test below is named after the rule, which shadows the function.
    use super::answer_filter as filter;

    fn fault(text: &str) -> AnswerFault {
        match filter(text) {
            Ok(()) => panic!("{text:?} should be refused"),
            Err(refusal) => refusal.fault,
        }
    }

    #[test]
    fn answer_filter() {
        // Deliverable words pass: titles, lines, lists, paragraphs, in English and Chinese.
        for ok in [
            "Just do it",
            "Done is better than perfect",
            "The Final Countdown",
            "Why wait?",
            "1. Morning light\n2. City at dusk\n3. Quiet harbour",
            "每天一个主题：春天的第一杯咖啡",
            "城市夜跑",
            "让每一天都值得期待",
            "选题：1. 早餐 2. 通勤 3. 夜跑",
            "Conclusion: the second design reads better at small sizes because of its contrast.",
            "好的标题：山海之间",
            "OK Computer",
            "Slogan: Taste the morning",
            "Made in Shanghai",
            "标题：山海之间",
        ] {
            assert_eq!(filter(ok), Ok(()), "{ok:?}");
        }

        // ≥ 2 code points after trimming.
        assert_eq!(fault("  A  "), AnswerFault::TooShort);
        assert_eq!(fault("好"), AnswerFault::TooShort);
        assert_eq!(fault(""), AnswerFault::TooShort);

        // S-SUB3 and other bare acknowledgements.
        for ack in [
            "收到",
            "好的",
            "明白",
            "了解",
            "好的，收到！",
            "Got it.",
            "sure",
            "Noted 👍",
            "OK",
            "okay!!",
        ] {
            assert_eq!(fault(ack), AnswerFault::Acknowledgement, "{ack:?}");
        }

        // Bare status claims, however dressed up.
        for status in [
            "done",
            "Done!",
            "**Done!** ✅ All tasks completed successfully.",
            "Finished.",
            "The task has been completed.",
            "Working on it",
            "Still waiting",
            "完成了",
            "已完成！",
            "做好了～",
            "任务已经完成了",
            "正在处理中",
            "ok了",
            "The slogan is ready.",
            "Poster finished ✅",
            "文案已写好",
            "海报做好了！",
            "The final version has been created.",
        ] {
            assert_eq!(fault(status), AnswerFault::StatusClaim, "{status:?}");
        }

        // Promises of more to come.
        for promise in [
            "I'll send it shortly",
            "Coming soon!",
            "稍后发给你",
            "马上",
            "好的，我会尽快",
        ] {
            assert_eq!(fault(promise), AnswerFault::Promise, "{promise:?}");
        }

        // Questions.
        for question in [
            "Should I make it longer?",
            "要不要我再改一下",
            "这样可以吗？",
            "Done?",
            "Do you want a list?",
        ] {
            assert_eq!(fault(question), AnswerFault::Question, "{question:?}");
        }

        // Empty remarks.
        for empty in [
            "N/A",
            "...",
            "—— ——",
            "暂无",
            "Here it is:",
            "see below",
            "🙂🙂",
        ] {
            assert_eq!(fault(empty), AnswerFault::EmptyRemark, "{empty:?}");
        }
    }

    #[test]
    fn refusal_asks_for_the_words_and_never_for_a_file_hand_over() {
        let refusal = filter("收到").unwrap_err();
        assert_eq!(refusal.code(), "answer_not_deliverable");
        let text = refusal.message();
        assert!(text.contains("words themselves"));
        assert!(text.contains("the title, the line, the list or the paragraph"));
        assert!(text.contains("keep working until the file exists"));
        let lower = text.to_lowercase();
        assert!(!lower.contains("submit"), "{text}");
        assert!(!lower.contains("write it"), "{text}");
        assert!(!lower.contains("save"), "{text}");
        assert_eq!(refusal.to_string(), text);
    }
}
