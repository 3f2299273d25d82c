//! The fast path of the normalizer: a borrowed view of one transcript line, with only the
//! fields the common lines need, read through the core's entry point (`json::read_line`).
//!
//! The entry point reads the line with the core's fast reader ([`Scan`]) when it is sure of
//! it, and the checked way (through `serde_json`, every other member skipped with `Checked`)
//! otherwise, which decides: a line has a view exactly when it parses into a `Value` that is
//! an object (S2). The decoder takes the exact path (the line read into a `Value`) for any line
//! it cannot decide from the view: a line that is not an object, or whose events need the
//! message itself (`unknown`'s `raw`), or whose fields have unusual types; the view only
//! decides the lines whose events it can give the same.

use std::borrow::Cow;

use harness_agents_core::backend::json::{
    Checked, FieldsSeed, Key, Loose, Member, ObjectReader, OnlyObjects, Scan,
};
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess};

/// The members of `result.usage` the prompt's answer reads (A10), in this order.
pub(crate) const USAGE: [&str; 5] = [
    "inputTokens",
    "outputTokens",
    "cachedReadTokens",
    "cachedWriteTokens",
    "thoughtTokens",
];

harness_agents_core::json_view! {
    /// A transcript line: `{"from":...,"message":{...}}`, and nothing else.
    pub(crate) struct LineView<'a> {
        /// `from`.
        from: "from",
        /// Whether the line has a `text` member (of any type).
        has_text: "text" => Present,
        /// `message`, when an object; `None` when absent or anything else.
        message: "message" => Option<MessageView<'a>>,
    }
}

harness_agents_core::json_view! {
    /// The fields of a message the rules read.
    pub(crate) struct MessageView<'a> {
        /// `id`.
        id: "id",
        /// `method`.
        method: "method",
        /// `error` (only whether it is there matters to the fast path).
        error: "error",
        /// `result`, when an object.
        result: "result" => Option<ResultView<'a>>,
        /// `params`, when an object.
        params: "params" => Option<ParamsView<'a>>,
    }
}

harness_agents_core::json_view! {
    /// The fields of an answer's `result` the rules read.
    pub(crate) struct ResultView<'a> {
        /// `sessionId`.
        session: "sessionId",
        /// `stopReason`.
        stop_reason: "stopReason",
        /// `usage`'s [`USAGE`] members, when `usage` is an object.
        usage: "usage"[USAGE],
    }
}

harness_agents_core::json_view! {
    /// The fields of a message's `params` the rules read.
    pub(crate) struct ParamsView<'a> {
        /// `cwd`.
        cwd: "cwd",
        /// `sessionId`.
        session: "sessionId",
        /// `update`, each member as written, in order.
        update: "update" => Update<'a>,
    }
}

impl<'a> MessageView<'a> {
    /// `result.sessionId`, when a string.
    pub(crate) fn result_session(&self) -> Option<&str> {
        self.result.as_ref()?.session.as_str()
    }

    /// `result.stopReason`, when a string.
    pub(crate) fn stop_reason(&self) -> Option<&str> {
        self.result.as_ref()?.stop_reason.as_str()
    }

    /// `result.usage`'s [`USAGE`] members, when `result` and `usage` are objects.
    pub(crate) fn usage(&self) -> Option<&[Loose<'a>; 5]> {
        self.result.as_ref()?.usage.as_ref()
    }

    /// `params.cwd`, when a string.
    pub(crate) fn cwd(&self) -> Option<&str> {
        self.params.as_ref()?.cwd.as_str()
    }

    /// `params.sessionId`, when a string.
    pub(crate) fn session(&self) -> Option<&str> {
        self.params.as_ref()?.session.as_str()
    }

    /// `params.update`'s members, when `params` and `update` are objects.
    pub(crate) fn update(&self) -> Option<&[(Cow<'a, str>, Written<'a>)]> {
        self.params.as_ref()?.update.0.as_deref()
    }
}

/// Whether a member is there, whatever its value (checked, skipped).
#[derive(Debug, Default)]
pub(crate) struct Present(pub(crate) bool);

impl<'de> Member<'de> for Present {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        Checked::deserialize(deserializer)?;
        self.0 = true;
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        scan.skip()?;
        self.0 = true;
        Some(())
    }
}

/// One member of an update, as the path that read it keeps it: the fast reader its text
/// (surely JSON), the checked path its value.
#[derive(Debug)]
pub(crate) enum Written<'a> {
    /// The value as written.
    Text(&'a str),
    /// The value.
    Value(serde_json::Value),
}

impl Written<'_> {
    /// The member as a `Value`; `None` should its text not parse.
    pub(crate) fn value(&self) -> Option<serde_json::Value> {
        match self {
            Written::Text(text) => serde_json::from_str(text).ok(),
            Written::Value(value) => Some(value.clone()),
        }
    }
}

/// An update: its members in order (a repeated key kept each time, as the tool call merge
/// reads them), when it is an object; `None` otherwise.
#[derive(Debug, Default)]
pub(crate) struct Update<'a>(pub(crate) Option<Vec<(Cow<'a, str>, Written<'a>)>>);

impl<'de> Member<'de> for Update<'de> {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        self.0 = deserializer.deserialize_any(OnlyObjects(Members))?;
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        if scan.peek()? != b'{' {
            scan.skip()?;
            self.0 = None;
            return Some(());
        }
        let mut members = Vec::new();
        scan.members(|scan, key| {
            members.push((Cow::Borrowed(key), Written::Text(scan.raw()?)));
            Some(())
        })?;
        self.0 = Some(members);
        Some(())
    }
}

/// Reads an update's members in order, each value whole.
struct Members;

impl<'de> ObjectReader<'de> for Members {
    type Value = Vec<(Cow<'de, str>, Written<'de>)>;

    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            members.push((key, Written::Value(map.next_value()?)));
        }
        Ok(members)
    }
}

/// The last member named `key`.
fn member<'m, 'a>(
    members: &'m [(Cow<'a, str>, Written<'a>)],
    key: &str,
) -> Option<&'m Written<'a>> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// A member read as a [`Loose`]; absent when not there; `None` when unsure (the exact path
/// then decides).
pub(crate) fn loose<'m>(
    members: &'m [(Cow<'_, str>, Written<'m>)],
    key: &str,
) -> Option<Loose<'m>> {
    match member(members, key) {
        Some(Written::Text(text)) => Scan::new(text)?.loose(),
        Some(Written::Value(value)) => Loose::deserialize(value).ok(),
        None => Some(Loose::Absent),
    }
}

/// The named fields of a member; `Some(None)` when it is absent or not an object; `None` when
/// unsure.
pub(crate) fn fields<'m, const N: usize>(
    members: &'m [(Cow<'_, str>, Written<'m>)],
    key: &str,
    names: &'static [&'static str; N],
) -> Option<Option<[Loose<'m>; N]>> {
    match member(members, key) {
        Some(Written::Text(text)) => Scan::new(text)?.fields(names),
        Some(Written::Value(value)) => FieldsSeed(names).deserialize(value).ok(),
        None => Some(None),
    }
}
