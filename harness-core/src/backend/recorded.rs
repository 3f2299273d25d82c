//! [`Recorded`]: what a decoder keeps of the things still open (tool uses, items, calls), by
//! id, in the order they were recorded.

use std::collections::BTreeMap;

/// Records by id, in the order they were recorded: the tool uses (items, calls) a decoder keeps
/// until their results arrive, handed out in that order at the end of input (S9) and as the
/// pending uses (O4). One record per id.
///
/// The index is an ordered map: few records are open at a time, and comparing a short id is
/// cheaper than hashing it.
///
/// ```
/// use harness_agents_core::backend::Recorded;
///
/// let mut open = Recorded::default();
/// open.push("a", 1);
/// open.push("b", 2);
/// open.push("a", 3); // recorded again: now the latest
/// assert_eq!(open.iter().collect::<Vec<_>>(), [("b", &2), ("a", &3)]);
/// assert!(open.replace("b", 4)); // in place
/// assert_eq!(open.remove("b"), Some(4));
/// assert_eq!(open.pop_first(), Some(("a".to_string(), 3)));
/// assert!(open.is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct Recorded<T> {
    /// Id → the key of its place in the order, and its record.
    records: BTreeMap<String, (u64, T)>,
    /// The ids, by the order they were recorded in.
    order: BTreeMap<u64, String>,
    next: u64,
}

impl<T> Default for Recorded<T> {
    fn default() -> Self {
        Recorded {
            records: BTreeMap::new(),
            order: BTreeMap::new(),
            next: 0,
        }
    }
}

impl<T> Recorded<T> {
    /// The record of `id`.
    pub fn get(&self, id: &str) -> Option<&T> {
        self.records.get(id).map(|(_, record)| record)
    }

    /// Records `record` as the latest, replacing any earlier record of `id`.
    pub fn push(&mut self, id: &str, record: T) {
        let seq = self.next;
        self.next += 1;
        if let Some((earlier, _)) = self.records.insert(id.to_string(), (seq, record)) {
            self.order.remove(&earlier);
        }
        self.order.insert(seq, id.to_string());
    }

    /// Replaces the record of `id` where it stands; whether there was one.
    pub fn replace(&mut self, id: &str, record: T) -> bool {
        match self.records.get_mut(id) {
            Some((_, slot)) => {
                *slot = record;
                true
            }
            None => false,
        }
    }

    /// The record of `id`, made by `new` and recorded as the latest when there is none; and
    /// whether it was.
    pub fn get_or_push(&mut self, id: &str, new: impl FnOnce() -> T) -> (&mut T, bool) {
        let next = self.next;
        let (seq, record) = self
            .records
            .entry(id.to_string())
            .or_insert_with(|| (next, new()));
        let recorded = *seq == next;
        if recorded {
            self.order.insert(next, id.to_string());
            self.next += 1;
        }
        (record, recorded)
    }

    /// Takes the record of `id` out.
    pub fn remove(&mut self, id: &str) -> Option<T> {
        let (seq, record) = self.records.remove(id)?;
        self.order.remove(&seq);
        Some(record)
    }

    /// Takes the earliest record out, with its id.
    pub fn pop_first(&mut self) -> Option<(String, T)> {
        let (_, id) = self.order.pop_first()?;
        let (_, record) = self.records.remove(&id)?;
        Some((id, record))
    }

    /// Every record with its id, in record order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.order
            .values()
            .filter_map(|id| Some((id.as_str(), &self.records.get(id)?.1)))
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}
