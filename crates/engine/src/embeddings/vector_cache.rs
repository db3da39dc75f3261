//! A small bounded map from query text to its vector, so a repeated query (a retry, a tool
//! loop resending the same message) costs no embeddings call.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use metaclaw_skills::retrieval::content_hash;

pub struct VectorCache {
    capacity: usize,
    /// Keyed by the SHA-256 of the query: user messages can be long, hashes are not.
    map: HashMap<String, Arc<[f32]>>,
    /// Insertion order; the oldest entry goes first. FIFO rather than LRU: cheaper, and
    /// repeats come close together.
    order: VecDeque<String>,
}

impl VectorCache {
    pub fn new(capacity: usize) -> Self {
        VectorCache {
            capacity: capacity.max(1),
            map: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    pub fn key(query: &str) -> String {
        content_hash(query)
    }

    pub fn get(&self, key: &str) -> Option<Arc<[f32]>> {
        self.map.get(key).cloned()
    }

    pub fn insert(&mut self, key: String, vector: Arc<[f32]>) {
        if self.map.insert(key.clone(), vector).is_some() {
            return;
        }
        self.order.push_back(key);
        while self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_at_most_capacity_dropping_the_oldest() {
        let mut c = VectorCache::new(2);
        for q in ["a", "b", "a", "c"] {
            c.insert(VectorCache::key(q), Arc::from(vec![1.0f32]));
        }
        assert_eq!(c.len(), 2);
        assert!(c.get(&VectorCache::key("a")).is_none());
        assert!(c.get(&VectorCache::key("b")).is_some());
        assert!(c.get(&VectorCache::key("c")).is_some());
    }
}
