//! The four configurations the benchmark compares, as MetaClaw config YAML.
//!
//! Learning runs only at session end (`evolution_every_n_turns: 0`, `flush_every: 0`), so
//! each conversation that states a rule is learned from exactly once and the benchmark knows
//! how many learning jobs to wait for.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    MemoryOnly,
    SkillsOnly,
    Both,
    LearningOff,
}

impl Setup {
    pub const ALL: [Setup; 4] = [
        Setup::MemoryOnly,
        Setup::SkillsOnly,
        Setup::Both,
        Setup::LearningOff,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Setup::MemoryOnly => "memory only",
            Setup::SkillsOnly => "skills only",
            Setup::Both => "memory + skills",
            Setup::LearningOff => "learning off",
        }
    }

    /// Skills are learned (evolved) in this setup.
    pub fn evolves(self) -> bool {
        matches!(self, Setup::SkillsOnly | Setup::Both)
    }

    /// Memories are extracted in this setup.
    pub fn extracts(self) -> bool {
        matches!(self, Setup::MemoryOnly | Setup::Both)
    }

    /// YAML appended to the proxy's config. With learning off, skills and memory stay on
    /// (the built-in skills are still injected) but nothing is learned.
    pub fn yaml(self) -> &'static str {
        match self {
            Setup::MemoryOnly => "skills:\n  enabled: false\nmemory:\n  flush_every: 0\n",
            Setup::SkillsOnly => {
                "skills:\n  evolution_every_n_turns: 0\nmemory:\n  enabled: false\n"
            }
            Setup::Both => "skills:\n  evolution_every_n_turns: 0\nmemory:\n  flush_every: 0\n",
            Setup::LearningOff => "skills:\n  auto_evolve: false\nmemory:\n  auto_extract: false\n",
        }
    }
}
