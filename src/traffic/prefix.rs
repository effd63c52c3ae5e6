//! Prompt prefix blocks of a trace: which fixed-size blocks of each request's prompt are
//! identical to blocks of other requests, for prefix caching (`sim::prefix`).
//!
//! The Mooncake traces (Qin et al., "Mooncake: Trading More Storage for Less Computation — A
//! KVCache-centric Architecture for Serving LLM Chatbot", USENIX FAST 2025,
//! <https://github.com/kvcache-ai/Mooncake/tree/main/FAST25-release>, traces released
//! 2025-02-21) give each request `hash_ids`: remapped hashes of its prompt's 512-token blocks,
//! each hash covering its block *and every block before it*, so two requests share their leading
//! `k` ids exactly when their first `k`·512 prompt tokens are identical. The block size is the
//! trace's: every one of the 12,031 requests of `conversation_trace.jsonl` carries
//! ⌈input_length / 512⌉ ids, which the reader checks line by line.
//!
//! The ids are kept in one arena shared by every replay (a request only carries its index,
//! [`super::Request::prefix`]), remapped densely in order of first appearance: equal ids stay
//! equal, distinct stay distinct, and a cache can key on 32 bits.

use std::collections::HashMap;

/// Tokens per `hash_ids` block in Mooncake traces (module docs).
pub const MOONCAKE_BLOCK_TOKENS: u32 = 512;

/// The prefix blocks of every request of a trace, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixBlocks {
    block_tokens: u32,
    /// Request `i`'s blocks are `ids[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    /// Dense block ids, 0.. in order of first appearance.
    ids: Vec<u32>,
    distinct: u32,
}

/// Builds [`PrefixBlocks`] one request at a time.
#[derive(Debug, Default)]
pub struct PrefixBlocksBuilder {
    starts: Vec<u32>,
    ids: Vec<u32>,
    dense: HashMap<u64, u32>,
}

impl PrefixBlocksBuilder {
    /// Append the next request's block hashes. `None` when the arena would pass 2^32 − 1 ids.
    pub fn push(&mut self, hashes: &[u64]) -> Option<()> {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        for &h in hashes {
            let next = u32::try_from(self.dense.len()).ok()?;
            let id = *self.dense.entry(h).or_insert(next);
            self.ids.push(id);
        }
        self.starts.push(u32::try_from(self.ids.len()).ok()?);
        Some(())
    }

    pub fn finish(mut self, block_tokens: u32) -> PrefixBlocks {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        PrefixBlocks {
            block_tokens,
            distinct: self.dense.len() as u32,
            starts: self.starts,
            ids: self.ids,
        }
    }
}

impl PrefixBlocks {
    /// Tokens per block.
    pub fn block_tokens(&self) -> u32 {
        self.block_tokens
    }

    /// Requests described.
    pub fn requests(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Distinct blocks over all requests.
    pub fn distinct_blocks(&self) -> u32 {
        self.distinct
    }

    /// The blocks of the request a [`super::Request::prefix`] names (1 + its index); none for 0
    /// or an index past the end.
    #[inline]
    pub fn blocks(&self, prefix: u32) -> &[u32] {
        let i = prefix as usize;
        if i == 0 || i >= self.starts.len() {
            return &[];
        }
        &self.ids[self.starts[i - 1] as usize..self.starts[i] as usize]
    }

    /// The prefix reference of request `index` (what [`super::Request::prefix`] carries).
    #[inline]
    pub fn reference(index: usize) -> u32 {
        index as u32 + 1
    }

    /// Prompt tokens a cache would skip if it hit the first `hit_blocks` blocks of a prompt of
    /// `input_tokens`: whole blocks, the last one possibly partial, and never the prompt's last
    /// token, which the prefill must compute to produce the first output token (vLLM recomputes
    /// it on a full hit too).
    #[inline]
    pub fn hit_tokens(&self, hit_blocks: usize, input_tokens: u32) -> u32 {
        let t = (hit_blocks as u64 * u64::from(self.block_tokens)).min(u64::from(input_tokens));
        (t as u32).min(input_tokens.saturating_sub(1))
    }

    /// Fraction of the prompt tokens of one pass over the trace, in file order, that an
    /// unbounded cache shared by every request would hit: an upper bound on any finite cache's
    /// hit rate on one copy of the trace.
    pub fn unbounded_hit_fraction(&self, input_tokens: &[u32]) -> f64 {
        let mut seen = vec![false; self.distinct as usize];
        let (mut hit, mut total) = (0u64, 0u64);
        for (i, &n) in input_tokens.iter().enumerate().take(self.requests()) {
            let b = self.blocks(Self::reference(i));
            let k = b.iter().take_while(|&&id| seen[id as usize]).count();
            hit += u64::from(self.hit_tokens(k, n));
            total += u64::from(n);
            for &id in b {
                seen[id as usize] = true;
            }
        }
        if total == 0 {
            0.0
        } else {
            hit as f64 / total as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_remapped_densely_and_keep_equality() {
        let mut b = PrefixBlocksBuilder::default();
        b.push(&[900, 7, 8]).unwrap();
        b.push(&[900, 7, 12]).unwrap();
        b.push(&[]).unwrap();
        let p = b.finish(512);
        assert_eq!(p.requests(), 3);
        assert_eq!(p.blocks(1), &[0, 1, 2]);
        assert_eq!(p.blocks(2), &[0, 1, 3]);
        assert!(p.blocks(3).is_empty() && p.blocks(0).is_empty() && p.blocks(9).is_empty());
        assert_eq!(p.distinct_blocks(), 4);
        // Two of three blocks hit on a 1,300-token prompt: 1,024 tokens; all three: 1,299.
        assert_eq!(p.hit_tokens(2, 1300), 1024);
        assert_eq!(p.hit_tokens(3, 1300), 1299);
        // Request 2 hits 2 of request 1's blocks: 1,024 of 1,500 + 1,300 prompt tokens.
        let f = p.unbounded_hit_fraction(&[1500, 1300, 5]);
        assert!((f - 1024.0 / 2805.0).abs() < 1e-12, "{f}");
    }
}
