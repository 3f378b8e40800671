//! The stdio door's guard: every line a client sends is bounded and judged
//! before the SDK sees it, so no input makes `hearth mcp` grow with it and
//! no request goes unanswered. A line over [`MAX_LINE`] is answered
//! `-32600` (and never held whole in memory); a line that is not JSON,
//! `-32700`; JSON that is not a JSON-RPC 2.0 message, `-32600` — each as
//! the JSON-RPC 2.0 specification (section 5.1) says, with the request's
//! `id` when it could be read, else `null`. Unknown methods reach the SDK,
//! which answers `-32601`.

use serde_json::{json, Value};

/// The longest line a client may send: far above any request hearth
/// serves (a recall query is at most [`MAX_QUERY`] characters), far below
/// what would matter to the machine.
pub const MAX_LINE: usize = 1024 * 1024;

/// The longest recall query, in characters.
pub const MAX_QUERY: usize = 4096;

/// JSON-RPC's codes.
pub const PARSE_ERROR: i64 = -32700;
/// A message that is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;

/// The error response for `id` (`null` when unknown).
pub fn error(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// A JSON-RPC error response: the line a refused message is answered
/// with, in place of the SDK's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorResponse(pub String);

/// The answer to a line over [`MAX_LINE`] (its id is not read: the line is
/// never held whole).
pub fn too_long() -> ErrorResponse {
    ErrorResponse(error(
        Value::Null,
        INVALID_REQUEST,
        &format!("Invalid Request: a message is at most {MAX_LINE} bytes on one line"),
    ))
}

/// Whether `line` may go to the SDK, or the error response it gets.
pub fn judge(line: &[u8]) -> Result<(), ErrorResponse> {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Err(ErrorResponse(error(
                Value::Null,
                PARSE_ERROR,
                &format!("Parse error: {e}"),
            )))
        }
    };
    // A batch is an array of messages; each must be one.
    let messages: Vec<&Value> = match &value {
        Value::Array(items) if !items.is_empty() => items.iter().collect(),
        other => vec![other],
    };
    for message in messages {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let valid = message.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
            && (message.get("method").is_some_and(Value::is_string)
                || message.get("result").is_some()
                || message.get("error").is_some());
        if !valid {
            return Err(ErrorResponse(error(
                id,
                INVALID_REQUEST,
                "Invalid Request: not a JSON-RPC 2.0 message (\"jsonrpc\": \"2.0\" and a \"method\")",
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(answer: &str) -> (i64, Value) {
        let v: Value = serde_json::from_str(answer).unwrap();
        (v["error"]["code"].as_i64().unwrap(), v["id"].clone())
    }

    #[test]
    fn requests_pass_and_everything_else_is_answered_as_the_specification_says() {
        assert!(judge(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).is_ok());
        assert!(judge(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_ok());
        assert_eq!(
            code(&judge(b"{not json").unwrap_err().0),
            (PARSE_ERROR, Value::Null)
        );
        assert_eq!(
            code(&judge(br#"{"id":7,"method":"x"}"#).unwrap_err().0),
            (INVALID_REQUEST, json!(7))
        );
        assert_eq!(
            code(
                &judge(br#"{"jsonrpc":"2.0","id":"a","method":5}"#)
                    .unwrap_err()
                    .0
            ),
            (INVALID_REQUEST, json!("a"))
        );
        assert_eq!(code(&judge(b"[]").unwrap_err().0).0, INVALID_REQUEST);
        assert_eq!(code(&too_long().0), (INVALID_REQUEST, Value::Null));
    }
}
