//! The fast path of the normalizer: a borrowed view of one transcript line, read in one pass
//! by the core's fast reader [`Scan`], with only the fields the common lines need.
//!
//! [`Scan`] accepts only text `serde_json` surely parses into a `Value` and gives up (`None`)
//! on anything else; the decoder then reads the line the exact way (a `Value`), so a line is
//! JSON here exactly when it is for `serde_json` (S2). The decoder also takes the exact path
//! for any line whose events need the message itself (`unknown`'s `raw`) or whose fields have
//! unusual types; the view only decides the lines whose events it can give the same.

use harness_agents_core::backend::json::{Loose, Scan};

/// The members of `result.usage` the prompt's answer reads (A10), in this order.
pub(crate) const USAGE: [&str; 5] = [
    "inputTokens",
    "outputTokens",
    "cachedReadTokens",
    "cachedWriteTokens",
    "thoughtTokens",
];

/// A transcript line: `{"from":...,"message":{...}}`, and nothing else.
#[derive(Debug, Default)]
pub(crate) struct LineView<'a> {
    /// `from`.
    pub(crate) from: Loose<'a>,
    /// Whether the line has a `text` member (of any type).
    pub(crate) has_text: bool,
    /// `message`, when an object; `None` when absent or anything else.
    pub(crate) message: Option<MessageView<'a>>,
}

/// The fields of a message the rules read.
#[derive(Debug, Default)]
pub(crate) struct MessageView<'a> {
    /// `id`.
    pub(crate) id: Loose<'a>,
    /// `method`.
    pub(crate) method: Loose<'a>,
    /// `error` (only whether it is there matters to the fast path).
    pub(crate) error: Loose<'a>,
    /// `result.sessionId`.
    pub(crate) result_session: Loose<'a>,
    /// `result.stopReason`.
    pub(crate) stop_reason: Loose<'a>,
    /// `result.usage`'s [`USAGE`] members, when `usage` is an object.
    pub(crate) usage: Option<[Loose<'a>; 5]>,
    /// `params.cwd`.
    pub(crate) cwd: Loose<'a>,
    /// `params.sessionId`.
    pub(crate) session: Loose<'a>,
    /// `params.update`, when an object: each member's key and text as written, in order.
    pub(crate) update: Option<Vec<(&'a str, &'a str)>>,
}

/// The text of the last member named `key`.
pub(crate) fn member<'a>(members: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    members
        .iter()
        .rev()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
}

/// A member's text (surely JSON) read as a [`Loose`]; absent when not there.
pub(crate) fn loose<'a>(members: &[(&'a str, &'a str)], key: &str) -> Option<Loose<'a>> {
    match member(members, key) {
        Some(text) => Scan::new(text)?.loose(),
        None => Some(Loose::Absent),
    }
}

/// The named fields of a member (surely JSON); `Some(None)` when it is absent or not an object.
pub(crate) fn fields<'a, const N: usize>(
    members: &[(&'a str, &'a str)],
    key: &str,
    names: &[&str; N],
) -> Option<Option<[Loose<'a>; N]>> {
    match member(members, key) {
        Some(text) => Scan::new(text)?.fields(names),
        None => Some(None),
    }
}

/// The view of a line, when [`Scan`] is sure the line is JSON and it is an object; `None`
/// otherwise (the caller then takes the exact path, which decides).
pub(crate) fn view(line: &[u8]) -> Option<LineView<'_>> {
    let text = std::str::from_utf8(line).ok()?;
    let mut scan = Scan::new(text)?;
    let mut view = LineView::default();
    scan.members(|scan, key| {
        match key {
            "from" => view.from = scan.loose()?,
            "text" => {
                view.has_text = true;
                scan.skip()?;
            }
            "message" => view.message = message(scan)?,
            _ => scan.skip()?,
        }
        Some(())
    })?;
    scan.end()?;
    Some(view)
}

/// A message's view; `Some(None)` when it is not an object.
fn message<'a>(scan: &mut Scan<'a>) -> Option<Option<MessageView<'a>>> {
    if scan.peek()? != b'{' {
        scan.skip()?;
        return Some(None);
    }
    let mut view = MessageView::default();
    scan.members(|scan, key| {
        match key {
            "id" => view.id = scan.loose()?,
            "method" => view.method = scan.loose()?,
            "error" => view.error = scan.loose()?,
            "result" => {
                (view.result_session, view.stop_reason, view.usage) =
                    (Loose::Absent, Loose::Absent, None);
                if scan.peek()? != b'{' {
                    return scan.skip();
                }
                scan.members(|scan, key| {
                    match key {
                        "sessionId" => view.result_session = scan.loose()?,
                        "stopReason" => view.stop_reason = scan.loose()?,
                        "usage" => view.usage = scan.fields(&USAGE)?,
                        _ => scan.skip()?,
                    }
                    Some(())
                })?;
            }
            "params" => {
                (view.cwd, view.session, view.update) = (Loose::Absent, Loose::Absent, None);
                if scan.peek()? != b'{' {
                    return scan.skip();
                }
                scan.members(|scan, key| {
                    match key {
                        "cwd" => view.cwd = scan.loose()?,
                        "sessionId" => view.session = scan.loose()?,
                        "update" => {
                            view.update = None;
                            if scan.peek()? != b'{' {
                                return scan.skip();
                            }
                            let mut members = Vec::new();
                            scan.members(|scan, key| {
                                members.push((key, scan.raw()?));
                                Some(())
                            })?;
                            view.update = Some(members);
                        }
                        _ => scan.skip()?,
                    }
                    Some(())
                })?;
            }
            _ => scan.skip()?,
        }
        Some(())
    })?;
    Some(Some(view))
}
