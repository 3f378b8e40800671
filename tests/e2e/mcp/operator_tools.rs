//! MCP servers as operator tools (next).
