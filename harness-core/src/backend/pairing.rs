//! Tool uses waiting for their results, paired by id and never by guess (C9, C11, C12, S9):
//! the bookkeeping every backend whose agent names each tool call with an id shares.

use std::collections::{BTreeMap, HashMap};

use crate::PendingToolUse;

/// A recorded tool use, as [`ToolUses`] keeps it: a backend's own record of the call, with the
/// id its result names.
pub trait Waiting {
    /// The id the use's result names.
    fn id(&self) -> &str;
    /// What the outcome lists of it while it waits (O4).
    fn pending(&self) -> PendingToolUse;
}

/// What a result's id finds among the uses waiting ([`ToolUses::take`]).
#[derive(Debug)]
pub enum Paired<U> {
    /// The one use recorded under that id.
    One(U),
    /// Every use recorded under that id while the others still waited (C11), in record order.
    Ambiguous(Vec<U>),
    /// No use waits under that id (C12).
    None,
}

/// Where the uses recorded under one id are.
#[derive(Debug)]
enum Pending {
    One(u64),
    Ambiguous(Vec<u64>),
}

/// The tool uses waiting for their results, in the order they were recorded (C9, C11, S9):
/// a result takes the use of its id, never a guess. An id recorded again while a use of it
/// waits becomes ambiguous, and its result then takes every candidate. Taking a use costs a
/// lookup, not a walk of every use waiting.
#[derive(Debug)]
pub struct ToolUses<U> {
    uses: BTreeMap<u64, U>,
    pending: HashMap<String, Pending>,
    next: u64,
}

impl<U> Default for ToolUses<U> {
    fn default() -> Self {
        ToolUses {
            uses: BTreeMap::new(),
            pending: HashMap::new(),
            next: 0,
        }
    }
}

impl<U: Waiting> ToolUses<U> {
    /// Records a use under its id, after every use recorded before it.
    pub fn record(&mut self, tool_use: U) {
        let seq = self.next;
        self.next += 1;
        match self.pending.get_mut(tool_use.id()) {
            None => {
                self.pending
                    .insert(tool_use.id().to_string(), Pending::One(seq));
            }
            Some(entry) => {
                let seqs = match entry {
                    Pending::One(first) => vec![*first, seq],
                    Pending::Ambiguous(list) => {
                        let mut list = std::mem::take(list);
                        list.push(seq);
                        list
                    }
                };
                *entry = Pending::Ambiguous(seqs);
            }
        }
        self.uses.insert(seq, tool_use);
    }

    /// Takes what waits under `id` (a result without a string id finds nothing).
    pub fn take(&mut self, id: Option<&str>) -> Paired<U> {
        match id.and_then(|id| self.pending.remove(id)) {
            Some(Pending::One(seq)) => match self.uses.remove(&seq) {
                Some(tool_use) => Paired::One(tool_use),
                None => Paired::None,
            },
            Some(Pending::Ambiguous(seqs)) => Paired::Ambiguous(
                seqs.iter()
                    .filter_map(|seq| self.uses.remove(seq))
                    .collect(),
            ),
            None => Paired::None,
        }
    }

    /// Takes the use recorded first (S9: at the end, one at a time, its memory freed as its
    /// event goes out).
    pub fn pop_first(&mut self) -> Option<U> {
        let (_, tool_use) = self.uses.pop_first()?;
        self.pending.remove(tool_use.id());
        Some(tool_use)
    }

    /// The uses waiting, in record order (O4).
    pub fn pending(&self) -> Vec<PendingToolUse> {
        self.uses.values().map(Waiting::pending).collect()
    }
}
