use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A message role. Unknown roles are kept verbatim rather than rejected.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Role {
    System,
    Developer,
    #[default]
    User,
    Assistant,
    Tool,
    Function,
    Other(String),
}

impl Role {
    pub fn as_str(&self) -> &str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Function => "function",
            Role::Other(s) => s,
        }
    }

    /// `system` or `developer`: both carry instructions.
    pub fn is_system(&self) -> bool {
        matches!(self, Role::System | Role::Developer)
    }
}

impl From<&str> for Role {
    fn from(s: &str) -> Self {
        match s {
            "system" => Role::System,
            "developer" => Role::Developer,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            "function" => Role::Function,
            other => Role::Other(other.to_owned()),
        }
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Role;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a role string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Role, E> {
                Ok(Role::from(v))
            }
        }
        d.deserialize_str(V)
    }
}
