//! Where, in a text that goes on after its end, something the redactor masks may be
//! under way: the earliest position from which a match could still be in progress at
//! the text's end. A text cut before that position (and where nothing already whole
//! crosses the cut) is redacted in two pieces as it would be whole, however it goes on.
//!
//! Each expression is compiled into one anchored DFA (every pattern, every match kept,
//! so its language holds every prefix of every match), stepped by hand from the
//! positions where a match could begin: a thread per DFA state, the earliest start
//! kept. A position is open when its thread is not dead at the end.

use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::util::primitives::StateID;
use regex_automata::util::{start, syntax};
use regex_automata::{Anchored, MatchKind};

/// The largest DFA built for a manifest's own patterns; past it, an over-long line is
/// held whole (and masked past the limit of what is held).
const DFA_BYTES: usize = 32 << 20;

/// An anchored DFA of every prefix of every match of some expressions.
#[derive(Debug)]
pub(super) struct Openings {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
}

/// Where threads are started.
pub(super) enum Seeds<'a> {
    /// At every position.
    Every,
    /// At these positions, ascending.
    At(&'a [usize]),
}

impl Openings {
    /// `None` when the expressions make no DFA within [`DFA_BYTES`].
    pub(super) fn new(patterns: &[&str]) -> Option<Openings> {
        let config = dense::Config::new()
            .match_kind(MatchKind::All)
            .start_kind(StartKind::Anchored)
            .minimize(false)
            // A Unicode word boundary stops the DFA at the first byte past ASCII: such
            // a stop counts as open (see `earliest`).
            .unicode_word_boundary(true)
            .dfa_size_limit(Some(DFA_BYTES))
            .determinize_size_limit(Some(DFA_BYTES));
        let dfa = dense::Builder::new()
            .configure(config)
            // Bytes, not only whole characters: the text may hold bytes that are not
            // UTF-8, and a cut may fall anywhere.
            .syntax(syntax::Config::new().utf8(false))
            .build_many(patterns)
            .ok()?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .ok()?;
        Some(Openings { dfa, start })
    }

    /// The earliest of the seeds from which a match may still be under way at the end
    /// of `text`: its thread did not die over the rest of the text.
    pub(super) fn earliest(&self, text: &[u8], seeds: Seeds<'_>) -> Option<usize> {
        // Ordered by start: a state reached from two starts keeps the earlier.
        let mut threads: Vec<(StateID, usize)> = Vec::new();
        let mut stepped: Vec<(StateID, usize)> = Vec::new();
        let mut seeds = match seeds {
            Seeds::Every => None,
            Seeds::At(at) => Some(at.iter().copied().peekable()),
        };
        let mut at = 0;
        while at < text.len() {
            let seeded = match &mut seeds {
                None => true,
                Some(seeds) => {
                    while seeds.next_if(|&s| s < at).is_some() {}
                    if threads.is_empty() {
                        // Nothing under way: on to the next seed.
                        match seeds.peek() {
                            Some(&s) if s < text.len() => at = s,
                            _ => return None,
                        }
                    }
                    seeds.next_if_eq(&at).is_some()
                }
            };
            if seeded && !threads.iter().any(|&(state, _)| state == self.start) {
                threads.push((self.start, at));
            }
            let byte = text[at];
            stepped.clear();
            for &(state, from) in &threads {
                let next = self.dfa.next_state(state, byte);
                if self.dfa.is_dead_state(next) {
                    continue;
                }
                if self.dfa.is_quit_state(next) {
                    // The DFA cannot say: open from the earliest thread.
                    return threads.first().map(|&(_, from)| from);
                }
                if !stepped.iter().any(|&(s, _)| s == next) {
                    stepped.push((next, from));
                }
            }
            std::mem::swap(&mut threads, &mut stepped);
            at += 1;
        }
        threads
            .iter()
            .find(|&&(state, _)| self.goes_on(state))
            .map(|&(_, from)| from)
    }

    /// Whether a thread in `state` can take one more byte and still be in a match: not
    /// a thread whose match is whole and can only be reported (the DFA reports a match
    /// one byte late, from a state that is not yet dead).
    fn goes_on(&self, state: StateID) -> bool {
        (0..=255u8).any(|byte| {
            let next = self.dfa.next_state(state, byte);
            !self.dfa.is_dead_state(next)
                && (!self.dfa.is_match_state(next)
                    || (0..=255u8)
                        .any(|more| !self.dfa.is_dead_state(self.dfa.next_state(next, more))))
        })
    }
}
