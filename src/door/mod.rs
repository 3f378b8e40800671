//! The one HTTP stack both doors stand on — the MCP door (`mcp::http`)
//! and the operator's page (`web`): each is an axum router with its guards
//! as tower layers, served here.
//!
//! What is hearth's own, and why a router does not give it:
//! - [`listen`]: a door on a Unix socket made 0600 before anyone can reach
//!   it, whose every connection's peer is checked to be this account
//!   (`SO_PEERCRED`); axum's `serve` knows neither.
//! - [`connections`]: the connections a door holds — accepted first and,
//!   when full, the oldest that has not sent a whole request closed, so
//!   600 slow clients cannot keep the operator out (a cap as a queue did).
//! - [`body`]: a body whole up to the door's limit, an oversized one read
//!   on (bounded) before its 413, so the client reads why.
//! - [`token`]: the bearer token by one rule (RFC 9110: the scheme in any
//!   case), compared in constant time.

pub mod body;
pub mod connections;
pub mod listen;
pub mod token;

pub use listen::{runtime, Listen, Listener};
